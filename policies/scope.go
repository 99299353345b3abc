package policies

import "strings"

// groupKind keys the scope table.
type groupKind struct {
	group string
	kind  string
}

// clusterScopedKinds lists the cluster-scoped kinds served by a stock
// kube-apiserver (k8s.io/api, apiextensions and kube-aggregator), including
// removed ones that still appear in old manifests, and those of a few widely
// installed projects. Every other built-in kind is namespaced.
var clusterScopedKinds = map[groupKind]bool{
	{"", "ComponentStatus"}:  true,
	{"", "Namespace"}:        true,
	{"", "Node"}:             true,
	{"", "PersistentVolume"}: true,

	{"admissionregistration.k8s.io", "MutatingAdmissionPolicy"}:          true,
	{"admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"}:   true,
	{"admissionregistration.k8s.io", "MutatingWebhookConfiguration"}:     true,
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicy"}:        true,
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"}: true,
	{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"}:   true,

	{"apiextensions.k8s.io", "CustomResourceDefinition"}: true,
	{"apiregistration.k8s.io", "APIService"}:             true,

	{"authentication.k8s.io", "SelfSubjectReview"}:       true,
	{"authentication.k8s.io", "TokenReview"}:             true,
	{"authorization.k8s.io", "SelfSubjectAccessReview"}:  true,
	{"authorization.k8s.io", "SelfSubjectRulesReview"}:   true,
	{"authorization.k8s.io", "SubjectAccessReview"}:      true,
	{"certificates.k8s.io", "CertificateSigningRequest"}: true,
	{"certificates.k8s.io", "ClusterTrustBundle"}:        true,

	{"flowcontrol.apiserver.k8s.io", "FlowSchema"}:                 true,
	{"flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"}: true,
	{"imagepolicy.k8s.io", "ImageReview"}:                          true,
	{"internal.apiserver.k8s.io", "StorageVersion"}:                true,

	{"networking.k8s.io", "IPAddress"}:    true,
	{"networking.k8s.io", "IngressClass"}: true,
	{"networking.k8s.io", "ServiceCIDR"}:  true,
	{"node.k8s.io", "RuntimeClass"}:       true,

	{"extensions", "PodSecurityPolicy"}: true,
	{"policy", "PodSecurityPolicy"}:     true,

	{"rbac.authorization.k8s.io", "ClusterRole"}:        true,
	{"rbac.authorization.k8s.io", "ClusterRoleBinding"}: true,

	{"resource.k8s.io", "DeviceClass"}:               true,
	{"resource.k8s.io", "DeviceTaintRule"}:           true,
	{"resource.k8s.io", "ResourcePoolStatusRequest"}: true,
	{"resource.k8s.io", "ResourceSlice"}:             true,

	{"scheduling.k8s.io", "PriorityClass"}: true,

	{"storage.k8s.io", "CSIDriver"}:             true,
	{"storage.k8s.io", "CSINode"}:               true,
	{"storage.k8s.io", "StorageClass"}:          true,
	{"storage.k8s.io", "VolumeAttachment"}:      true,
	{"storage.k8s.io", "VolumeAttributesClass"}: true,

	{"storagemigration.k8s.io", "StorageVersionMigration"}: true,

	// Cluster-scoped kinds of widely installed projects, so that the CLI
	// places them without their CRDs.
	{"cert-manager.io", "ClusterIssuer"}:              true,
	{"external-secrets.io", "ClusterExternalSecret"}:  true,
	{"external-secrets.io", "ClusterSecretStore"}:     true,
	{"kyverno.io", "ClusterPolicy"}:                   true,
	{"kyverno.io", "ClusterCleanupPolicy"}:            true,
	{"policies.kyverno.io", "ClusterPolicy"}:          true,
	{"templates.gatekeeper.sh", "ConstraintTemplate"}: true,
	{"wgpolicyk8s.io", "ClusterPolicyReport"}:         true,
	{"gateway.networking.k8s.io", "GatewayClass"}:     true,
}

// namespacedKinds are namespaced kinds outside the built-in API groups
// that the built-in rules judge: the CLI places them without their CRDs.
var namespacedKinds = map[groupKind]bool{
	{"argoproj.io", "Application"}:            true,
	{"argoproj.io", "ApplicationSet"}:         true,
	{"argoproj.io", "AppProject"}:             true,
	{"bitnami.com", "SealedSecret"}:           true,
	{"external-secrets.io", "ExternalSecret"}: true,
	{"external-secrets.io", "SecretStore"}:    true,
}

// KindScope places kinds: whether objects of a group and kind are
// cluster-scoped, and whether it knows the kind at all. The engine answers
// from the destination's discovery (the REST mapper its applier uses);
// Scopes answers offline.
type KindScope interface {
	Scope(group, kind string) (clusterScoped, known bool)
}

// Scopes answers whether a kind is cluster-scoped: the built-in table of
// Kubernetes kinds plus the CustomResourceDefinitions it was built with. The
// zero value knows the built-in table only. Scopes is read-only after
// NewScopes and safe for concurrent use.
type Scopes struct {
	crds map[groupKind]bool
}

var _ KindScope = Scopes{}

// NewScopes returns Scopes that know the built-in kinds and the given
// CustomResourceDefinitions (decoded objects). A CRD extends the table with
// spec.group, spec.names.kind and spec.scope; objects that are not CRDs or
// lack those fields are ignored, and so are CRDs in a built-in API group
// (see BuiltinGroup): a CRD never changes the scope of a Kubernetes kind.
func NewScopes(crds ...map[string]any) Scopes {
	s := Scopes{crds: map[groupKind]bool{}}
	for _, crd := range crds {
		gk, clusterScoped, ok := crdKind(crd)
		if !ok || BuiltinGroup(gk.group) {
			continue
		}
		s.crds[gk] = clusterScoped
	}
	return s
}

// crdKind returns the kind a CustomResourceDefinition declares and whether
// it declares it cluster-scoped.
func crdKind(crd map[string]any) (gk groupKind, clusterScoped, ok bool) {
	if !isKind(crd, "apiextensions.k8s.io", "CustomResourceDefinition") {
		return groupKind{}, false, false
	}
	group, _ := nestedString(crd, "spec", "group")
	kind, _ := nestedString(crd, "spec", "names", "kind")
	scope, _ := nestedString(crd, "spec", "scope")
	if group == "" || kind == "" {
		return groupKind{}, false, false
	}
	return groupKind{group, kind}, strings.EqualFold(scope, "Cluster"), true
}

// Scope implements KindScope: kinds of the built-in API groups are known
// (cluster-scoped when the table says so), and so are the kinds of the
// CRDs Scopes was built with.
func (s Scopes) Scope(group, kind string) (clusterScoped, known bool) {
	gk := groupKind{group, kind}
	if clusterScopedKinds[gk] {
		return true, true
	}
	if BuiltinGroup(group) || namespacedKinds[gk] {
		return false, true
	}
	clusterScoped, known = s.crds[gk]
	return clusterScoped, known
}

// ClusterScoped reports whether objects of group and kind are cluster-scoped.
// Kinds it does not know are namespaced.
func (s Scopes) ClusterScoped(group, kind string) bool {
	c, _ := s.Scope(group, kind)
	return c
}

// BuiltinGroup reports whether group is an API group that Kubernetes itself
// serves: the core group, the unsuffixed legacy groups and every group
// under k8s.io or kubernetes.io (which the API server keeps from
// CustomResourceDefinitions without an approval annotation).
func BuiltinGroup(group string) bool {
	switch group {
	case "", "apps", "batch", "autoscaling", "policy", "extensions":
		return true
	}
	return strings.HasSuffix(group, ".k8s.io") || group == "k8s.io" ||
		strings.HasSuffix(group, ".kubernetes.io") || group == "kubernetes.io"
}

// IsClusterScoped reports whether a built-in Kubernetes kind is
// cluster-scoped. Use Scopes to take CustomResourceDefinitions into account.
func IsClusterScoped(group, kind string) bool {
	return clusterScopedKinds[groupKind{group, kind}]
}

// GroupOf returns the API group of an apiVersion: "apps" for "apps/v1", ""
// for the core "v1".
func GroupOf(apiVersion string) string {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return group
}
