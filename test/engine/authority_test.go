package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// refusedSync is the operation message of a sync the authority refused.
func refusedSync(project string, lines ...string) string {
	return fmt.Sprintf("sync failed: sync refused: AppProject %q does not permit it, nothing was written:\n%s", project, strings.Join(lines, "\n"))
}

// victim creates, in namespace ns, a ConfigMap of another team that claims
// to be the fixture's Application's: by its tracking annotation, or by
// the instance label alone.
func victim(t *testing.T, f *fixture, ns string, byLabel bool) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "victim", Namespace: ns}, Data: map[string]string{"owner": "another team"}}
	if byLabel {
		cm.Labels = map[string]string{v1alpha1.LabelKeyAppInstance: f.name}
	} else {
		cm.Annotations = map[string]string{v1alpha1.AnnotationKeyTrackingID: fmt.Sprintf("%s:/ConfigMap:%s/victim", f.name, ns)}
	}
	if err := env.Client.Create(t.Context(), cm); err != nil {
		t.Fatalf("create victim: %v", err)
	}
	return cm
}

// unchanged reports whether obj is still as it was (same UID and
// resourceVersion, not being deleted).
func unchanged(t *testing.T, obj client.Object) (bool, string) {
	cur := obj.DeepCopyObject().(client.Object)
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), cur); err != nil {
		return false, err.Error()
	}
	if cur.GetUID() != obj.GetUID() || cur.GetResourceVersion() != obj.GetResourceVersion() || cur.GetDeletionTimestamp() != nil {
		return false, fmt.Sprintf("%s %s changed", cur.GetObjectKind().GroupVersionKind().Kind, obj.GetName())
	}
	return true, ""
}

// TestAuthorityRefusesEscapes checks that the engine touches nothing its
// project does not permit, whatever claims a live object carries: each
// sync is refused with the object and the rule, and nothing is written.
func TestAuthorityRefusesEscapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// cp is the control-plane namespace of the engine to use.
		cp string
		// byLabel makes the victim claim by instance label only.
		byLabel bool
		app     func(s scene, a *v1alpha1.Application)
		// gate is set when the gate refuses before the sync starts (what
		// the sync would write is judged with the desired objects).
		gate bool
		want func(s scene) []string
	}{
		{
			name: "prune of an object tracked by annotation in another namespace",
			cp:   argoNS,
			want: func(s scene) []string {
				return []string{destinationDenied(s, "ConfigMap", s.other, "victim")}
			},
		},
		{
			name:    "prune of an object claimed by the instance label in another namespace",
			cp:      trackingNS,
			byLabel: true,
			want: func(s scene) []string {
				return []string{destinationDenied(s, "ConfigMap", s.other, "victim")}
			},
		},
		{
			name: "managedNamespaceMetadata on a namespace of a project without Namespace in its whitelist",
			cp:   argoNS,
			gate: true,
			app: func(_ scene, a *v1alpha1.Application) {
				a.Spec.SyncPolicy.SyncOptions = []string{"CreateNamespace=true"}
				a.Spec.SyncPolicy.ManagedNamespaceMetadata = &v1alpha1.ManagedNamespaceMetadata{
					Labels:      map[string]string{"pod-security.kubernetes.io/enforce": "privileged"},
					Annotations: map[string]string{"scheduler.alpha.kubernetes.io/node-selector": "pool=gpu"},
				}
			},
			want: func(s scene) []string {
				return []string{fmt.Sprintf(`[project-resource-denied] Namespace/%[1]s: Namespace %[1]q of Application %[2]q is a cluster-scoped resource "Namespace" (core group) and AppProject %[2]q has no spec.clusterResourceWhitelist, so it permits no cluster-scoped resources; drop it from the Application or ask the project's owners to whitelist {group: "", kind: "Namespace"}`, s.ns, s.name)}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := scene{fixture: newFixture(t, baseFiles()), other: env.Namespace(t)}
			s.cp = tc.cp
			var claimed *corev1.ConfigMap
			if tc.app == nil {
				claimed = victim(t, s.fixture, s.other, tc.byLabel)
			}
			var ns corev1.Namespace
			if err := env.Client.Get(t.Context(), client.ObjectKey{Name: s.ns}, &ns); err != nil {
				t.Fatal(err)
			}
			s.application(automated(true, false), func(a *v1alpha1.Application) {
				if tc.app != nil {
					tc.app(s, a)
				}
			})
			want, cond, wantCond := refusedSync(s.name, tc.want(s)...), v1alpha1.ApplicationConditionSyncError, ""
			if tc.gate {
				lines := strings.Join(tc.want(s), "\n")
				want, cond, wantCond = "sync refused by policy, nothing was applied:\n"+lines, v1alpha1.ApplicationConditionPolicyViolation, "revision "+s.head+" refused:\n"+lines
			}
			if wantCond == "" {
				wantCond = want
			}
			app := s.waitApp("sync refused", func(a *v1alpha1.Application) bool {
				st := a.Status.OperationState
				return st != nil && st.Phase == v1alpha1.OperationFailed
			})
			if diff := cmp.Diff(want, app.Status.OperationState.Message); diff != "" {
				t.Errorf("operation message (-want +got):\n%s", diff)
			}
			if got, _ := condition(app, cond); got != wantCond {
				t.Errorf("%s condition %q, want %q", cond, got, wantCond)
			}
			consistently(t, "nothing written", 2*resync, func() (bool, string) {
				if claimed != nil {
					if ok, why := unchanged(t, claimed); !ok {
						return false, why
					}
				}
				if ok, why := unchanged(t, &ns); !ok {
					return false, why
				}
				return allAbsent(t.Context(), baseRefs(s.ns, "settings", "web"))
			})
		})
	}
}

// TestAuthorityRefusesCascadeEscape deletes an Application with the
// resources finalizer while an object of another namespace claims to be
// its own: the deletion stops with DeletionError naming it, and nothing
// is deleted.
func TestAuthorityRefusesCascadeEscape(t *testing.T) {
	t.Parallel()
	s := scene{fixture: newFixture(t, baseFiles()), other: env.Namespace(t)}
	claimed := victim(t, s.fixture, s.other, false)
	s.application(automated(false, false), func(a *v1alpha1.Application) {
		a.Finalizers = []string{v1alpha1.ResourcesFinalizerName}
	})
	// The claimed object awaits pruning: the Application stays OutOfSync.
	app := s.waitApp("synced without pruning", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return st != nil && st.Phase == v1alpha1.OperationSucceeded && a.Status.Sync.Revision == s.head
	})
	if err := env.Client.Delete(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("delete refused: AppProject %q does not permit it, nothing was written:\n%s", s.name, destinationDenied(s, "ConfigMap", s.other, "victim"))
	s.waitApp("deletion refused", func(a *v1alpha1.Application) bool {
		got, _ := condition(a, v1alpha1.ApplicationConditionDeletionError)
		return got == want
	})
	consistently(t, "nothing deleted", 2*resync, func() (bool, string) {
		if ok, why := unchanged(t, claimed); !ok {
			return false, why
		}
		for _, o := range baseRefs(s.ns, "settings", "web") {
			if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(o), o); err != nil {
				return false, err.Error()
			}
			if o.GetDeletionTimestamp() != nil {
				return false, o.GetName() + " is being deleted"
			}
		}
		return true, ""
	})
}
