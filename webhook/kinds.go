package webhook

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// judgedKinds are the kinds a built-in rule judges on their own, whoever
// owns them: the pod-bearing kinds of policies/library/lib_pods.rego
// (pod_kinds, with the API groups pod_spec_path accepts) and the secret
// kinds of no_plaintext_secret.rego. Any other object is judged only when
// an Application tracks it (the project rules), or when it is an Argo CD
// Application or AppProject. config/webhook's resources.tollgate.dev lists
// the same kinds; TestJudgedKindsMatchLibrary keeps this set in step with
// the library.
var judgedKinds = map[schema.GroupKind]bool{
	{Kind: "Pod"}:                                          true,
	{Kind: "PodTemplate"}:                                  true,
	{Kind: "ReplicationController"}:                        true,
	{Kind: "Secret"}:                                       true,
	{Group: "apps", Kind: "Deployment"}:                    true,
	{Group: "apps", Kind: "StatefulSet"}:                   true,
	{Group: "apps", Kind: "DaemonSet"}:                     true,
	{Group: "apps", Kind: "ReplicaSet"}:                    true,
	{Group: "extensions", Kind: "Deployment"}:              true,
	{Group: "extensions", Kind: "DaemonSet"}:               true,
	{Group: "extensions", Kind: "ReplicaSet"}:              true,
	{Group: "batch", Kind: "Job"}:                          true,
	{Group: "batch", Kind: "CronJob"}:                      true,
	{Group: "bitnami.com", Kind: "SealedSecret"}:           true,
	{Group: "external-secrets.io", Kind: "ExternalSecret"}: true,
}

// unjudgedGroups are API groups no rule judges and whose objects the
// cluster writes constantly (Leases) or that are not stored at all (token
// and access reviews). They are skipped before anything is decoded, even
// when an Application tracks them, so that a configuration widened by
// mistake costs the cluster nothing.
var unjudgedGroups = map[string]bool{
	"coordination.k8s.io":   true,
	"authentication.k8s.io": true,
	"authorization.k8s.io":  true,
}

// neverJudged reports whether the request's kind is never judged: see
// unjudgedGroups, and Events of either API group.
func neverJudged(req admission.Request) bool {
	if unjudgedGroups[req.Kind.Group] {
		return true
	}
	return req.Kind.Kind == "Event" && (req.Kind.Group == "" || req.Kind.Group == "events.k8s.io")
}

// judgedKind reports whether a rule judges the request's kind without an
// Application.
func judgedKind(req admission.Request) bool {
	return judgedKinds[schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}]
}

// ephemeralContainersRequest reports whether req writes the
// pods/ephemeralcontainers sub-resource (kubectl debug): an UPDATE carrying
// the whole Pod, the only sub-resource the webhook judges.
func ephemeralContainersRequest(req admission.Request) bool {
	return req.SubResource == "ephemeralcontainers" &&
		req.Resource.Group == "" && req.Resource.Resource == "pods" &&
		req.Kind.Group == "" && req.Kind.Kind == "Pod"
}
