package engine_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// hookFiles is baseFiles with a PreSync hook ConfigMap named shared (delete
// policy BeforeHookCreation, the default).
func hookFiles() map[string]string {
	files := baseFiles()
	files["manifests/hook.yaml"] = `apiVersion: v1
kind: ConfigMap
metadata:
  name: shared
  annotations:
    argocd.argoproj.io/hook: PreSync
data:
  key: ours
`
	return files
}

// TestHookTakesOverNothing checks that a hook named like an object of
// another Application, or of a person, fails the sync with the object named
// and leaves it untouched, while a hook whose live object is the
// Application's own is still replaced (BeforeHookCreation).
func TestHookTakesOverNothing(t *testing.T) {
	t.Parallel()
	const rule = "a hook deletes, replaces or forces only an object that carries this application's tracking id"
	tests := []struct {
		name string
		// tracking is the tracking id of the object in the hook's place
		// ("" for none); app is this Application's instance name.
		tracking func(ns, app string) string
		// why is what the failure says about the owner; "" when the hook
		// must replace the object.
		why func(ns string) string
	}{
		{
			name:     "object of another application",
			tracking: func(ns, _ string) string { return "other-app:/ConfigMap:" + ns + "/shared" },
			why: func(ns string) string {
				return fmt.Sprintf(`exists and is tracked by application "other-app" (tracking id other-app:/ConfigMap:%s/shared)`, ns)
			},
		},
		{
			name:     "object of a person",
			tracking: func(string, string) string { return "" },
			why: func(string) string {
				return "exists and is not tracked by any application (no argocd.argoproj.io/tracking-id annotation)"
			},
		},
		{
			name:     "own hook from an earlier sync",
			tracking: func(ns, app string) string { return app + ":/ConfigMap:" + ns + "/shared" },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, hookFiles())
			live := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: f.ns},
				Data:       map[string]string{"key": "theirs"},
			}
			if id := tc.tracking(f.ns, f.name); id != "" {
				live.Annotations = map[string]string{v1alpha1.AnnotationKeyTrackingID: id}
			}
			f.create(live)
			wantData, wantAnnotations := live.Data, live.Annotations
			f.application(automated(true, false), nil)

			if tc.why == nil {
				f.waitSynced(f.head)
				var cm corev1.ConfigMap
				if err := f.get(&cm, "shared"); err != nil {
					t.Fatalf("hook ConfigMap: %v", err)
				}
				if cm.UID == live.UID || cm.Data["key"] != "ours" {
					t.Errorf("hook ConfigMap uid %s data %v, want it re-created (old uid %s) with key ours", cm.UID, cm.Data, live.UID)
				}
				return
			}

			app := f.waitApp("sync failed on the hook", func(a *v1alpha1.Application) bool {
				st := a.Status.OperationState
				return st != nil && st.Phase == v1alpha1.OperationFailed
			})
			want := fmt.Sprintf("sync failed: wave PreSync/0 failed: ConfigMap %[1]s/shared: ConfigMap/%[1]s/shared %[2]s; %[3]s", f.ns, tc.why(f.ns), rule)
			if diff := cmp.Diff(want, app.Status.OperationState.Message); diff != "" {
				t.Errorf("operation message (-want +got):\n%s", diff)
			}
			if msg, _ := condition(app, v1alpha1.ApplicationConditionSyncError); msg != want {
				t.Errorf("SyncError condition = %q, want %q", msg, want)
			}
			consistently(t, "the object in the hook's place untouched, nothing else applied", 2*resync, func() (bool, string) {
				var cm corev1.ConfigMap
				if err := f.get(&cm, "shared"); err != nil {
					return false, err.Error()
				}
				if cm.UID != live.UID || cm.ResourceVersion != live.ResourceVersion ||
					!cmp.Equal(wantData, cm.Data) || !cmp.Equal(wantAnnotations, cm.Annotations) {
					return false, fmt.Sprintf("uid %s resourceVersion %s data %v annotations %v; want %s %s %v %v",
						cm.UID, cm.ResourceVersion, cm.Data, cm.Annotations, live.UID, live.ResourceVersion, wantData, wantAnnotations)
				}
				return f.gone(&corev1.ConfigMap{}, "settings")
			})
		})
	}
}

// TestOperationSourceOutsideProject checks that a sync operation asking for
// a repository the AppProject does not permit fails before anything is
// fetched from it, and that nothing is applied; a permitted operation then
// syncs.
func TestOperationSourceOutsideProject(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	evil := f.git.CreateRepo(t, "evil", map[string]string{"manifests/pwned.yaml": configMap("pwned", "yes")})
	f.application(nil, nil)
	f.waitApp("OutOfSync without a sync", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && a.Status.Sync.Revision == f.head && a.Status.OperationState == nil
	})

	// What any user allowed to patch the Application can write.
	requestSync(t, f.app(), fmt.Sprintf(`{"operation":{"sync":{"source":{"repoURL":%q,"path":"manifests","targetRevision":%q}},"initiatedBy":{"username":"mallory"}}}`,
		evil, gitserver.DefaultBranch))
	app := f.waitApp("operation refused", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return a.Operation == nil && st != nil && st.Phase == v1alpha1.OperationFailed && st.Operation.Sync != nil && st.Operation.Sync.Source != nil
	})
	want := fmt.Sprintf("sync refused by policy, nothing was applied:\n"+
		`[project-source-denied] Application/%[1]s/%[2]s: Application "%[2]s" uses source repository "%[3]s", which AppProject "%[2]s" does not permit; `+
		"use a repository listed in the project's spec.sourceRepos or add this one there", app.Namespace, f.name, evil)
	if diff := cmp.Diff(want, app.Status.OperationState.Message); diff != "" {
		t.Errorf("operation message (-want +got):\n%s", diff)
	}
	if got := app.Status.OperationState.Operation.Sync.Source.RepoURL; got != evil {
		t.Errorf("recorded operation source %q, want %q", got, evil)
	}
	consistently(t, "nothing fetched from the repository, nothing applied", 2*resync, func() (bool, string) {
		if n := f.git.Fetches("evil"); n != 0 {
			return false, fmt.Sprintf("%d requests to fetch from the repository", n)
		}
		if gone, why := f.gone(&corev1.ConfigMap{}, "pwned"); !gone {
			return false, why
		}
		return f.gone(&corev1.ConfigMap{}, "settings")
	})

	// A permitted operation (a revision of the project's repository) syncs.
	requestSync(t, f.app(), fmt.Sprintf(`{"operation":{"sync":{"revision":%q},"initiatedBy":{"username":"alice"}}}`, f.head))
	app = f.waitSynced(f.head)
	if _, ok := condition(app, v1alpha1.ApplicationConditionPolicyViolation); ok {
		t.Errorf("PolicyViolation condition kept after a permitted sync: %s", describeApp(app))
	}
	if n := f.git.Fetches("evil"); n != 0 {
		t.Errorf("%d requests to fetch from the refused repository", n)
	}
	if f.git.Fetches(f.repo) == 0 {
		t.Error("the Git server counted no fetch of the permitted repository: the count proves nothing")
	}
}

// TestSpecSourceOutsideProject: a spec source the project does not permit
// is refused before anything is fetched, with or without automation.
func TestSpecSourceOutsideProject(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	evil := f.git.CreateRepo(t, "evil", map[string]string{"manifests/pwned.yaml": configMap("pwned", "yes")})
	f.application(&v1alpha1.SyncPolicyAutomated{Prune: true}, func(a *v1alpha1.Application) {
		a.Spec.Source.RepoURL = evil
	})
	want := fmt.Sprintf(`[project-source-denied] Application/%[1]s/%[2]s: Application "%[2]s" uses source repository "%[3]s", which AppProject "%[2]s" does not permit; `+
		"use a repository listed in the project's spec.sourceRepos or add this one there", f.cp, f.name, evil)
	f.waitApp("refused by policy", func(a *v1alpha1.Application) bool {
		msg, ok := condition(a, v1alpha1.ApplicationConditionPolicyViolation)
		return ok && msg == want
	})
	consistently(t, "nothing fetched from the repository, nothing applied", 2*resync, func() (bool, string) {
		if n := f.git.Fetches("evil"); n != 0 {
			return false, fmt.Sprintf("%d requests to fetch from the repository", n)
		}
		return f.gone(&corev1.ConfigMap{}, "pwned")
	})
}

// requestSync patches the operation of app, as `tollgate app sync` or any
// user allowed to patch the Application does.
func requestSync(t *testing.T, app *v1alpha1.Application, patch string) {
	t.Helper()
	if err := env.Client.Patch(t.Context(), app, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("request sync: %v", err)
	}
}
