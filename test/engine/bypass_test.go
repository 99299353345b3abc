package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
)

// scene is where one bypass attempt happens: the fixture, whose AppProject
// permits its repository and its namespace only (no cluster-scoped kinds),
// and a second namespace of the test that the project does not permit.
type scene struct {
	*fixture
	other string
}

// group is an API group of this test alone, for CustomResourceDefinitions.
func (s scene) group() string { return strings.ReplaceAll(s.ns, "-", "") + ".example.com" }

// oldPattern is the AppProject destination list the README once
// suggested: every namespace but Argo CD's, which lets the protected
// namespaces in.
func oldPattern(p *v1alpha1.AppProject) {
	p.Spec.Destinations = []v1alpha1.ApplicationDestination{
		{Server: "*", Namespace: "*"},
		{Server: "*", Namespace: "!" + argoNS},
	}
}

// permitCRDs lets the project deploy CustomResourceDefinitions (and no
// other cluster-scoped kind), so that a case judges what a rendered CRD
// does to the placement of kinds, not the CRD's own kind.
func permitCRDs(p *v1alpha1.AppProject) {
	p.Spec.ClusterResourceWhitelist = []v1alpha1.ClusterResourceRestrictionItem{
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
	}
}

// TestBypassDenied checks attempts to get past the gate from a tenant's
// repository or Application: each is refused with the exact denial lines,
// the automated sync fails, and nothing of the render reaches the cluster
// over a few resyncs.
func TestBypassDenied(t *testing.T) {
	t.Parallel()
	exempt := policies.ExemptAnnotation
	tests := []struct {
		name string
		// project and app change the fixture's AppProject and Application.
		project func(*v1alpha1.AppProject)
		app     func(scene, *v1alpha1.Application)
		// setup prepares the cluster before the Application exists.
		setup func(*testing.T, scene)
		// files are committed over baseFiles.
		files func(scene) map[string]string
		// want are the denial lines, in any order.
		want func(scene) []string
		// absent are objects of the render, beyond baseFiles' in the
		// fixture's namespace, that must never exist.
		absent func(scene) []client.Object
	}{
		{
			name: "ClusterRoleBinding to cluster-admin exempted from every rule by its own annotation",
			files: func(s scene) map[string]string {
				return map[string]string{"manifests/crb.yaml": annotate(clusterRoleBinding(s.name+"-admin", "cluster-admin", s.ns), exempt, "*")}
			},
			want: func(s scene) []string {
				return []string{noClusterKinds(s, "rbac.authorization.k8s.io", "ClusterRoleBinding", s.name+"-admin")}
			},
			absent: func(s scene) []client.Object { return []client.Object{clusterRoleBindingRef(s.name + "-admin")} },
		},
		{
			name: "ClusterRoleBinding to cluster-admin exempted from project-resource-denied by its own annotation",
			files: func(s scene) map[string]string {
				return map[string]string{"manifests/crb.yaml": annotate(clusterRoleBinding(s.name+"-admin", "cluster-admin", s.ns), exempt, "project-resource-denied")}
			},
			want: func(s scene) []string {
				return []string{
					noClusterKinds(s, "rbac.authorization.k8s.io", "ClusterRoleBinding", s.name+"-admin"),
					exemptionRefused("ClusterRoleBinding", "", s.name+"-admin", "project-resource-denied"),
				}
			},
			absent: func(s scene) []client.Object { return []client.Object{clusterRoleBindingRef(s.name + "-admin")} },
		},
		{
			name: "exemption annotation through Kustomize commonAnnotations",
			files: func(s scene) map[string]string {
				return map[string]string{
					"manifests/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
commonAnnotations:
  ` + exempt + `: project-resource-denied
resources:
- crb.yaml
- configmap.yaml
- deployment.yaml
- service.yaml
`,
					"manifests/crb.yaml": clusterRoleBinding(s.name+"-admin", "cluster-admin", s.ns),
				}
			},
			want: func(s scene) []string {
				return []string{
					noClusterKinds(s, "rbac.authorization.k8s.io", "ClusterRoleBinding", s.name+"-admin"),
					exemptionRefused("ClusterRoleBinding", "", s.name+"-admin", "project-resource-denied"),
					exemptionRefused("ConfigMap", s.ns, "settings", "project-resource-denied"),
					exemptionRefused("Deployment", s.ns, "web", "project-resource-denied"),
					exemptionRefused("Service", s.ns, "web", "project-resource-denied"),
				}
			},
			absent: func(s scene) []client.Object { return []client.Object{clusterRoleBindingRef(s.name + "-admin")} },
		},
		{
			name: "exemption annotation through a Helm template",
			files: func(s scene) map[string]string {
				return map[string]string{
					"manifests/Chart.yaml":         "apiVersion: v2\nname: team\nversion: 0.1.0\n",
					"manifests/values.yaml":        "exempt: project-resource-denied\n",
					"manifests/templates/crb.yaml": annotate(clusterRoleBinding(s.name+"-admin", "cluster-admin", s.ns), exempt, "{{ .Values.exempt }}"),
					// Helm renders templates/ only.
					"manifests/templates/configmap.yaml":  configMap("settings", "v1"),
					"manifests/templates/deployment.yaml": deployment("web", "registry.example.com/web:1.0.0", 2),
					"manifests/templates/service.yaml":    service("web"),
				}
			},
			want: func(s scene) []string {
				return []string{
					noClusterKinds(s, "rbac.authorization.k8s.io", "ClusterRoleBinding", s.name+"-admin"),
					exemptionRefused("ClusterRoleBinding", "", s.name+"-admin", "project-resource-denied"),
				}
			},
			absent: func(s scene) []client.Object { return []client.Object{clusterRoleBindingRef(s.name + "-admin")} },
		},
		{
			name: "exemption annotation on the Application, destination outside the project",
			app: func(s scene, a *v1alpha1.Application) {
				a.Annotations = map[string]string{exempt: "project-destination-denied"}
				a.Spec.Destination.Namespace = s.other
			},
			want: func(s scene) []string {
				return []string{
					exemptionRefused("Application", argoNS, s.name, "project-destination-denied"),
					fmt.Sprintf(`[project-destination-denied] Application/%s/%s: Application %q has destination (server %q, namespace %q), which AppProject %q does not permit; deploy to a destination listed in the project's spec.destinations or add this one there`,
						argoNS, s.name, s.name, inCluster, s.other, s.name),
					destinationDenied(s, "ConfigMap", s.other, "settings"),
					destinationDenied(s, "Deployment", s.other, "web"),
					destinationDenied(s, "Service", s.other, "web"),
				}
			},
			absent: func(s scene) []client.Object { return baseRefs(s.other, "settings", "web") },
		},
		{
			name:    "destination tollgate-system",
			project: oldPattern,
			setup:   func(t *testing.T, _ scene) { ensureNamespace(t, policies.DefaultTollgateNamespace) },
			app: func(_ scene, a *v1alpha1.Application) {
				a.Spec.Destination.Namespace = policies.DefaultTollgateNamespace
			},
			files: func(s scene) map[string]string { return protectedFiles(s) },
			want:  func(s scene) []string { return protectedDestination(s, policies.DefaultTollgateNamespace) },
			absent: func(s scene) []client.Object {
				return baseRefs(policies.DefaultTollgateNamespace, s.name, s.name)
			},
		},
		{
			name:    "destination kube-system",
			project: oldPattern,
			app: func(_ scene, a *v1alpha1.Application) {
				a.Spec.Destination.Namespace = metav1.NamespaceSystem
			},
			files:  func(s scene) map[string]string { return protectedFiles(s) },
			want:   func(s scene) []string { return protectedDestination(s, metav1.NamespaceSystem) },
			absent: func(s scene) []client.Object { return baseRefs(metav1.NamespaceSystem, s.name, s.name) },
		},
		{
			name:    "Pod with the controller's ServiceAccount in tollgate-system",
			project: oldPattern,
			setup:   func(t *testing.T, _ scene) { ensureNamespace(t, policies.DefaultTollgateNamespace) },
			files: func(s scene) map[string]string {
				return map[string]string{"manifests/pod.yaml": fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
spec:
  serviceAccountName: tollgate-controller
  containers:
  - name: shell
    image: registry.example.com/shell:1.0.0
`, s.name, policies.DefaultTollgateNamespace)}
			},
			want: func(s scene) []string {
				return []string{protectedObject(s, "Pod", policies.DefaultTollgateNamespace, s.name)}
			},
			absent: func(s scene) []client.Object {
				return []client.Object{ref("v1", "Pod", policies.DefaultTollgateNamespace, s.name)}
			},
		},
		{
			// The built-in table does not know the kind: only the
			// destination's discovery says it is cluster-scoped.
			name: "cluster-scoped kind the cluster serves",
			setup: func(t *testing.T, s scene) {
				installCRD(t, crd(s.group(), "ClusterWidget", "Cluster"))
			},
			files: func(s scene) map[string]string {
				return map[string]string{"manifests/widget.yaml": fmt.Sprintf("apiVersion: %s/v1\nkind: ClusterWidget\nmetadata:\n  name: %s\nspec:\n  size: 3\n", s.group(), s.name)}
			},
			want: func(s scene) []string {
				return []string{noClusterKinds(s, s.group(), "ClusterWidget", s.name)}
			},
			absent: func(s scene) []client.Object {
				return []client.Object{ref(s.group()+"/v1", "ClusterWidget", "", s.name)}
			},
		},
		{
			// The cluster does not serve the kind yet: the CRD in the
			// same render places it.
			name:    "cluster-scoped kind of a CRD in the same render",
			project: permitCRDs,
			files: func(s scene) map[string]string {
				return map[string]string{
					"manifests/crd.yaml":    crd(s.group(), "Gadget", "Cluster"),
					"manifests/gadget.yaml": fmt.Sprintf("apiVersion: %s/v1\nkind: Gadget\nmetadata:\n  name: %s\nspec:\n  size: 3\n", s.group(), s.name),
				}
			},
			want: func(s scene) []string {
				return []string{fmt.Sprintf(`[project-resource-denied] Gadget/%[2]s: Gadget %[2]q of Application %[3]q is a cluster-scoped resource "%[1]s/Gadget" that AppProject %[3]q does not list in spec.clusterResourceWhitelist; drop it from the Application or ask the project's owners to whitelist {group: %[1]q, kind: "Gadget"}`,
					s.group(), s.name, s.name)}
			},
			absent: func(s scene) []client.Object { return []client.Object{crdRef("gadgets." + s.group())} },
		},
		{
			// The Deployment is still judged namespaced: it lands in the
			// team's namespace and has no denial line.
			name:    "CRD re-scoping deployments.apps",
			project: permitCRDs,
			files: func(scene) map[string]string {
				return map[string]string{"manifests/crd.yaml": crd("apps", "Deployment", "Cluster")}
			},
			want: func(scene) []string {
				return []string{`[project-resource-denied] CustomResourceDefinition/deployments.apps: CustomResourceDefinition "deployments.apps" re-declares apps/Deployment, a kind of the built-in API group "apps" that only Kubernetes serves; a CustomResourceDefinition in the manifests may only add kinds the cluster does not serve yet`}
			},
			absent: func(scene) []client.Object { return []client.Object{crdRef("deployments.apps")} },
		},
		{
			// An AppProject in the render never judges its renderer.
			name: "rendered AppProject named like the Application's own",
			files: func(s scene) map[string]string {
				return map[string]string{
					"manifests/project.yaml": fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: %s
  namespace: %s
  annotations:
    %s: "*"
spec:
  sourceRepos: ["*"]
  destinations:
  - server: "*"
    namespace: "*"
  clusterResourceWhitelist:
  - group: "*"
    kind: "*"
`, s.name, argoNS, exempt),
					"manifests/deployment.yaml": inNamespace(deployment("web", "registry.example.com/web:1.0.0", 2), s.other),
				}
			},
			want: func(s scene) []string {
				return []string{
					destinationDenied(s, "AppProject", argoNS, s.name),
					destinationDenied(s, "Deployment", s.other, "web"),
					fmt.Sprintf(`[no-argocd-destination] AppProject/%[1]s/%[2]s: AppProject %[2]q permits the Argo CD namespace %[1]q through spec.destinations[0] (namespace "*"); add {server: "*", namespace: "!%[1]s"} to spec.destinations or narrow the namespace pattern`,
						argoNS, s.name),
					fmt.Sprintf(`[protected-namespace] AppProject/%[1]s/%[2]s: AppProject %[2]q permits the protected namespace(s) "tollgate-system", "kube-system", "kube-public", "kube-node-lease" through spec.destinations[0] (namespace "*"); add a "!" entry such as {server: "*", namespace: "!tollgate-system"} for each to spec.destinations or narrow the namespace pattern`,
						argoNS, s.name),
				}
			},
			absent: func(s scene) []client.Object {
				return []client.Object{ref("apps/v1", "Deployment", s.other, "web")}
			},
		},
		{
			// app of apps: a child Application carrying the controller's
			// operation fence would keep every controller replica but the
			// named one away from it.
			name: "child Application carrying the operation fence",
			files: func(s scene) map[string]string {
				return map[string]string{"manifests/child.yaml": fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %[1]s-child
  namespace: %[2]s
  annotations:
    %[3]s: tollgate-controller-0
spec:
  project: %[1]s
  source:
    repoURL: https://git.example.com/x.git
    path: .
  destination:
    server: https://kubernetes.default.svc
    namespace: %[2]s
`, s.name, s.ns, policies.AnnotationOperationReplica)}
			},
			want: func(s scene) []string {
				return []string{
					reservedAnnotation(s.ns, s.name+"-child"),
					fmt.Sprintf(`[app-namespace] %s: Application %q is in namespace %q, but Argo CD reads it only from its own namespace %q; set metadata.namespace to %[4]q`,
						lineRef("Application", s.ns, s.name+"-child"), s.name+"-child", s.ns, argoNS),
				}
			},
			absent: func(s scene) []client.Object {
				return []client.Object{ref("argoproj.io/v1alpha1", "Application", s.ns, s.name+"-child")}
			},
		},
		{
			name: "hook in a namespace the project does not permit",
			files: func(s scene) map[string]string {
				return map[string]string{"manifests/hook.yaml": annotate(inNamespace(configMap(s.name+"-hook", "v1"), s.other), "argocd.argoproj.io/hook", "PreSync")}
			},
			want: func(s scene) []string {
				return []string{destinationDenied(s, "ConfigMap", s.other, s.name+"-hook")}
			},
			absent: func(s scene) []client.Object { return []client.Object{ref("v1", "ConfigMap", s.other, s.name+"-hook")} },
		},
		{
			name: "object synced with Replace in a namespace the project does not permit",
			files: func(s scene) map[string]string {
				return map[string]string{"manifests/replaced.yaml": annotate(inNamespace(configMap(s.name+"-replaced", "v1"), s.other), "argocd.argoproj.io/sync-options", "Replace=true")}
			},
			want: func(s scene) []string {
				return []string{destinationDenied(s, "ConfigMap", s.other, s.name+"-replaced")}
			},
			absent: func(s scene) []client.Object {
				return []client.Object{ref("v1", "ConfigMap", s.other, s.name+"-replaced")}
			},
		},
		{
			// The engine has no implicit default project.
			name: "project default that does not exist",
			app: func(_ scene, a *v1alpha1.Application) {
				a.Spec.Project = "default"
			},
			want: func(s scene) []string {
				return []string{fmt.Sprintf(`[project-not-found] Application/%s/%s: Application %q uses AppProject "default", which does not exist; create the AppProject or set spec.project to an existing project`,
					argoNS, s.name, s.name)}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := scene{fixture: newFixture(t, baseFiles()), other: env.Namespace(t)}
			s.editProject = tc.project
			if tc.setup != nil {
				tc.setup(t, s)
			}
			if tc.files != nil {
				s.head = s.git.Commit(t, s.repo, tc.files(s), "attack")
			}
			s.application(automated(true, false), func(a *v1alpha1.Application) {
				if tc.app != nil {
					tc.app(s, a)
				}
			})
			want := tc.want(s)
			slices.Sort(want)
			wantMsg := strings.Join(want, "\n")
			wantCondition := "revision " + s.head + " refused:\n" + wantMsg
			app := s.waitApp("refused by the gate", func(a *v1alpha1.Application) bool {
				_, denied := condition(a, v1alpha1.ApplicationConditionPolicyViolation)
				st := a.Status.OperationState
				return denied && st != nil && st.Phase == v1alpha1.OperationFailed && st.Operation.Sync != nil && st.Operation.Sync.Revision == s.head
			})
			got, _ := condition(app, v1alpha1.ApplicationConditionPolicyViolation)
			if diff := cmp.Diff(strings.Split(wantCondition, "\n"), strings.Split(got, "\n")); diff != "" {
				t.Errorf("PolicyViolation condition lines (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff("sync refused by policy, nothing was applied:\n"+wantMsg, app.Status.OperationState.Message); diff != "" {
				t.Errorf("operation message (-want +got):\n%s", diff)
			}
			absent := baseRefs(s.ns, "settings", "web")
			if tc.absent != nil {
				absent = append(absent, tc.absent(s)...)
			}
			consistently(t, "nothing of the render applied", 2*resync, func() (bool, string) {
				for _, ns := range []string{s.ns, s.other} {
					if n := applies.count(ns); n != 0 {
						return false, fmt.Sprintf("%d apply requests into %s", n, ns)
					}
				}
				if ok, why := allAbsent(t.Context(), absent); !ok {
					return false, why
				}
				a := s.app()
				if msg, _ := condition(a, v1alpha1.ApplicationConditionPolicyViolation); msg != wantCondition {
					return false, describeApp(a)
				}
				if st := a.Status.OperationState; st == nil || st.Phase != v1alpha1.OperationFailed || len(a.Status.History) != 0 {
					return false, describeApp(a)
				}
				return true, ""
			})
		})
	}
}

// operatorExemptProjects matches the project of the operator exemption case
// of TestBypassLegitimatePaths (named after its namespace), which the
// operator's exemptions: of the engine under test let render RBAC kinds.
const operatorExemptProjects = "testbypasslegitimatepaths-operator-*"

// TestBypassLegitimatePaths checks that the ways to exempt that authority
// grants still work at the gate: the AppProject's annotation and the
// operator's exemptions for a boundary rule, an object's own annotation
// for a hygiene rule. Each Application syncs, with no PolicyViolation.
func TestBypassLegitimatePaths(t *testing.T) {
	t.Parallel()
	exempt := policies.ExemptAnnotation
	rbac := func(s scene) map[string]string {
		return map[string]string{
			"manifests/clusterrole.yaml": fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %s-reader
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get"]
`, s.name),
			"manifests/crb.yaml": clusterRoleBinding(s.name+"-reader", s.name+"-reader", s.ns),
		}
	}
	rbacApplied := func(t *testing.T, s scene) {
		var u unstructured.Unstructured
		u.SetAPIVersion("rbac.authorization.k8s.io/v1")
		u.SetKind("ClusterRoleBinding")
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: s.name + "-reader"}, &u); err != nil {
			t.Errorf("ClusterRoleBinding not applied: %v", err)
		}
	}
	tests := []struct {
		name    string
		project func(*v1alpha1.AppProject)
		files   func(scene) map[string]string
		// cleanup are cluster-scoped objects the sync creates.
		cleanup func(scene) []client.Object
		check   func(*testing.T, scene)
	}{
		{
			name: "AppProject exemption",
			project: func(p *v1alpha1.AppProject) {
				p.Annotations = map[string]string{exempt: "project-resource-denied"}
			},
			files:   rbac,
			cleanup: rbacRefs,
			check:   rbacApplied,
		},
		{
			name:    "operator exemption",
			files:   rbac,
			cleanup: rbacRefs,
			check:   rbacApplied,
		},
		{
			name: "object exemption from a hygiene rule",
			files: func(scene) map[string]string {
				return map[string]string{"manifests/deployment.yaml": annotate(deployment("web", "nginx:latest", 2), exempt, "no-latest-tag")}
			},
			check: func(t *testing.T, s scene) {
				if img := s.deploymentImage("web"); img != "nginx:latest" {
					t.Errorf("Deployment image %q, want nginx:latest applied", img)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := scene{fixture: newFixture(t, baseFiles())}
			s.editProject = tc.project
			s.head = s.git.Commit(t, s.repo, tc.files(s), "exempted")
			if tc.cleanup != nil {
				t.Cleanup(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					for _, o := range tc.cleanup(s) {
						_ = env.Client.Delete(ctx, o)
					}
				})
			}
			s.application(automated(true, false), nil)
			app := s.waitSynced(s.head)
			if msg, ok := condition(app, v1alpha1.ApplicationConditionPolicyViolation); ok {
				t.Errorf("PolicyViolation condition: %s", msg)
			}
			tc.check(t, s)
		})
	}
}

// Manifests and references of the bypass attempts.

// annotate adds the annotation key: value to the manifest's (first)
// metadata.
func annotate(manifest, key, value string) string {
	return strings.Replace(manifest, "metadata:\n", fmt.Sprintf("metadata:\n  annotations:\n    %s: %q\n", key, value), 1)
}

// inNamespace sets the manifest's (first) metadata.namespace.
func inNamespace(manifest, ns string) string {
	return strings.Replace(manifest, "metadata:\n", "metadata:\n  namespace: "+ns+"\n", 1)
}

func clusterRoleBinding(name, role, ns string) string {
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: %s
subjects:
- kind: ServiceAccount
  name: default
  namespace: %s
`, name, role, ns)
}

// crd is a CustomResourceDefinition of kind in group, with scope Cluster or
// Namespaced and an open schema.
func crd(group, kind, scope string) string {
	plural := strings.ToLower(kind) + "s"
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s.%[2]s
spec:
  group: %[2]s
  scope: %[4]s
  names:
    plural: %[1]s
    singular: %[5]s
    kind: %[3]s
    listKind: %[3]sList
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`, plural, group, kind, scope, strings.ToLower(kind))
}

// protectedFiles is baseFiles named after the test (the protected
// namespaces are shared by every test).
func protectedFiles(s scene) map[string]string {
	return map[string]string{
		"manifests/configmap.yaml":  configMap(s.name, "v1"),
		"manifests/deployment.yaml": deployment(s.name, "registry.example.com/web:1.0.0", 2),
		"manifests/service.yaml":    service(s.name),
	}
}

// protectedDestination are the denial lines of an Application deploying
// protectedFiles into the protected namespace ns.
func protectedDestination(s scene, ns string) []string {
	return []string{
		fmt.Sprintf(`[protected-namespace] Application/%s/%s: Application %q deploys into the protected namespace %q; set spec.destination.namespace to a namespace of the team`,
			argoNS, s.name, s.name, ns),
		protectedObject(s, "ConfigMap", ns, s.name),
		protectedObject(s, "Deployment", ns, s.name),
		protectedObject(s, "Service", ns, s.name),
	}
}

// Denial lines, as the gate writes them: `[rule] Kind/ns/name: message`.

// lineRef is the object of a denial line: Kind/ns/name, or Kind/name for a
// cluster-scoped object.
func lineRef(kind, ns, name string) string {
	if ns == "" {
		return kind + "/" + name
	}
	return kind + "/" + ns + "/" + name
}

// noClusterKinds is the project-resource-denied line of a cluster-scoped
// object under the fixture's project, which has no cluster whitelist.
func noClusterKinds(s scene, group, kind, name string) string {
	return fmt.Sprintf(`[project-resource-denied] %[1]s: %[2]s %[3]q of Application %[4]q is a cluster-scoped resource "%[5]s/%[2]s" and AppProject %[4]q has no spec.clusterResourceWhitelist, so it permits no cluster-scoped resources; drop it from the Application or ask the project's owners to whitelist {group: %[5]q, kind: %[2]q}`,
		lineRef(kind, "", name), kind, name, s.name, group)
}

// exemptionRefused is the exemption-not-allowed line of an object whose
// own annotation names boundary rules.
func exemptionRefused(kind, ns, name string, rules ...string) string {
	q := make([]string, len(rules))
	for i, r := range rules {
		q[i] = fmt.Sprintf("%q", r)
	}
	return fmt.Sprintf(`[exemption-not-allowed] %s: %s %q names the boundary rule(s) %s in its %s annotation, which exempts nothing from them; only the operator's configuration (exemptions:) or the AppProject's %s annotation can exempt from a boundary rule`,
		lineRef(kind, ns, name), kind, name, strings.Join(q, ", "), policies.ExemptAnnotation, policies.ExemptAnnotation)
}

// destinationDenied is the project-destination-denied line of a rendered
// object in namespace ns, which the fixture's project does not permit.
func destinationDenied(s scene, kind, ns, name string) string {
	return fmt.Sprintf(`[project-destination-denied] %s: %s %q of Application %q has destination (server %q, namespace %q), which AppProject %q does not permit; deploy it into a namespace the project's spec.destinations list or add this one there`,
		lineRef(kind, ns, name), kind, name, s.name, inCluster, ns, s.name)
}

// protectedObject is the protected-namespace line of a rendered object in
// the protected namespace ns.
func protectedObject(s scene, kind, ns, name string) string {
	return fmt.Sprintf(`[protected-namespace] %s: %s %q of Application %q lands in the protected namespace %q; deploy it into a namespace of the team`,
		lineRef(kind, ns, name), kind, name, s.name, ns)
}

// reservedAnnotation is the reserved-annotation line of a rendered
// Application carrying the controller's operation fence.
func reservedAnnotation(ns, name string) string {
	return fmt.Sprintf(`[reserved-annotation] %s: the annotation %q of Application %q is reserved for tollgate's controller, which writes it while a sync runs to keep the other controller replicas away; a manifest or a user may not set, change or remove it`,
		lineRef("Application", ns, name), policies.AnnotationOperationReplica, name)
}

// ref is an object to look up by apiVersion, kind, namespace and name.
func ref(apiVersion, kind, ns, name string) client.Object {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func clusterRoleBindingRef(name string) client.Object {
	return ref("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", name)
}

func crdRef(name string) client.Object {
	return ref("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name)
}

// baseRefs are the ConfigMap, Deployment and Service of a render like
// baseFiles in namespace ns.
func baseRefs(ns, configMap, workload string) []client.Object {
	return []client.Object{
		ref("v1", "ConfigMap", ns, configMap),
		ref("apps/v1", "Deployment", ns, workload),
		ref("v1", "Service", ns, workload),
	}
}

// rbacRefs are the ClusterRole and ClusterRoleBinding of
// TestBypassLegitimatePaths.
func rbacRefs(s scene) []client.Object {
	return []client.Object{
		ref("rbac.authorization.k8s.io/v1", "ClusterRole", "", s.name+"-reader"),
		clusterRoleBindingRef(s.name + "-reader"),
	}
}

// allAbsent reports whether none of objs exists.
func allAbsent(ctx context.Context, objs []client.Object) (bool, string) {
	for _, o := range objs {
		key := client.ObjectKeyFromObject(o)
		u := o.DeepCopyObject().(client.Object)
		err := env.Client.Get(ctx, key, u)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return false, err.Error()
		default:
			return false, fmt.Sprintf("%s %s exists", o.GetObjectKind().GroupVersionKind().Kind, key)
		}
	}
	return true, ""
}

// ensureNamespace creates namespace name unless it exists. It is left in
// place: other tests may use it, and envtest never finishes deleting
// namespaces.
func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

// installCRD creates the CustomResourceDefinition manifest in the API server,
// waits until the API server serves its kind, and deletes it when the test
// ends.
func installCRD(t *testing.T, manifest string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("decode CustomResourceDefinition: %v", err)
	}
	if err := env.Client.Create(t.Context(), u); err != nil {
		t.Fatalf("create CustomResourceDefinition %s: %v", u.GetName(), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = env.Client.Delete(ctx, u)
	})
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
	eventually(t, "CustomResourceDefinition "+u.GetName()+" served", func() (bool, string) {
		var list unstructured.UnstructuredList
		list.SetAPIVersion(group + "/v1")
		list.SetKind(kind + "List")
		if err := env.Client.List(t.Context(), &list); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}
