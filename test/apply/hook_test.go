package apply_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
)

const migrateJob = `
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/hook-delete-policy: POLICY
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: IMAGE
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data: {k: v}
`

func migrate(t *testing.T, ns, policy, image string) []*unstructured.Unstructured {
	return decode(t, ns, strings.NewReplacer("POLICY", policy, "IMAGE", image).Replace(migrateJob))
}

func TestPreSyncHookBeforeHookCreation(t *testing.T) {
	ns := env.Namespace(t)

	// A first sync runs the hook and keeps it (no HookSucceeded).
	first := whenReady(t, "batch/v1", "Job", ns, "migrate", anyObject, completed)
	results, err := applier.Run(t.Context(), build(t, "shop", migrate(t, ns, "BeforeHookCreation", "migrate:1")), apply.WaveOptions{App: "shop"})
	if err != nil {
		t.Fatalf("first Run: %v", err)
	}
	<-first
	var got []string
	for _, w := range results {
		got = append(got, summary(w.Results)...)
	}
	want := []string{"Synced Job.batch " + ns + "/migrate hook:Succeeded", "Synced ConfigMap " + ns + "/app"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first sync (-want +got):\n%s", diff)
	}
	old := get(t, "batch/v1", "Job", ns, "migrate")
	if old == nil {
		t.Fatal("hook Job deleted although its policy is BeforeHookCreation only")
	}

	// The second sync changes the (immutable) pod template: the old Job is
	// deleted before the new one is created, then deleted once it succeeded.
	second := whenReady(t, "batch/v1", "Job", ns, "migrate", notUID(string(old.GetUID())), completed)
	results, err = applier.Run(t.Context(), build(t, "shop", migrate(t, ns, "BeforeHookCreation,HookSucceeded", "migrate:2")), apply.WaveOptions{App: "shop"})
	if err != nil {
		t.Fatalf("second Run: %v", err)
	}
	<-second
	hook := results[0].Results[0]
	if hook.HookPhase != apply.HookSucceeded || !strings.Contains(hook.Message, "created") || !strings.Contains(hook.Message, "hook deleted") {
		t.Errorf("hook result %+v", hook)
	}
	if j := get(t, "batch/v1", "Job", ns, "migrate"); j != nil {
		t.Errorf("hook Job still exists (uid %s, old %s), want deleted after success", j.GetUID(), old.GetUID())
	}
}

func TestFailedHookFailsSync(t *testing.T) {
	ns := env.Namespace(t)
	failed := whenReady(t, "batch/v1", "Job", ns, "migrate", anyObject, func(u *unstructured.Unstructured) {
		now := "2024-01-01T00:00:00Z"
		cond := func(typ, reason string) map[string]any {
			return map[string]any{"type": typ, "status": "True", "reason": reason, "message": "Job has reached the specified backoff limit",
				"lastProbeTime": now, "lastTransitionTime": now}
		}
		_ = unstructured.SetNestedMap(u.Object, map[string]any{
			"startTime":  now,
			"failed":     int64(1),
			"conditions": []any{cond("FailureTarget", "BackoffLimitExceeded"), cond("Failed", "BackoffLimitExceeded")},
		}, "status")
	})
	results, err := applier.Run(t.Context(), build(t, "shop", migrate(t, ns, "HookFailed", "migrate:1")), apply.WaveOptions{App: "shop"})
	<-failed
	werr := waveError(t, err)
	want := "Job.batch " + ns + "/migrate: hook failed: Job has reached the specified backoff limit; hook deleted"
	if diff := cmp.Diff([]string{want}, werr.Failures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if len(results) != 1 || results[0].Results[0].HookPhase != apply.HookFailed {
		t.Errorf("results %+v", results)
	}
	if get(t, "v1", "ConfigMap", ns, "app") != nil {
		t.Error("Sync phase ran after the PreSync hook failed")
	}
	if get(t, "batch/v1", "Job", ns, "migrate") != nil {
		t.Error("failed hook not deleted despite HookFailed")
	}
}

func TestGenerateNameHook(t *testing.T) {
	ns := env.Namespace(t)
	objs := decode(t, ns, `
apiVersion: v1
kind: ConfigMap
metadata:
  generateName: report-
  annotations:
    argocd.argoproj.io/hook: PostSync
    argocd.argoproj.io/hook-delete-policy: Never
data: {k: v}
`)
	results, err := applier.Run(t.Context(), build(t, "shop", objs), apply.WaveOptions{App: "shop", SyncID: "Abc123"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := results[0].Results[0].Ref.Name; n != "report-abc123-postsync" {
		t.Errorf("hook name = %q, want report-abc123-postsync", n)
	}
	if get(t, "v1", "ConfigMap", ns, "report-abc123-postsync") == nil {
		t.Error("hook ConfigMap not created")
	}
}

// TestHookTakesOverNothing checks that a hook named like an object of
// another Application, or of a person, fails its wave before anything is
// written, whatever its delete policy: the object keeps its UID, its
// resourceVersion and its content, and later phases do not run.
func TestHookTakesOverNothing(t *testing.T) {
	const rule = "a hook deletes, replaces or forces only an object that carries this application's tracking id"
	owners := []struct {
		name string
		// annotations of the object in the hook's place.
		annotations func(ns string) map[string]string
		// why is what the failure says about the owner.
		why func(ns string) string
	}{
		{
			name: "another application",
			annotations: func(ns string) map[string]string {
				return map[string]string{v1alpha1.AnnotationKeyTrackingID: "billing:/ConfigMap:" + ns + "/settings"}
			},
			why: func(ns string) string {
				return fmt.Sprintf(`exists and is tracked by application "billing" (tracking id billing:/ConfigMap:%s/settings)`, ns)
			},
		},
		{
			name:        "a person",
			annotations: func(string) map[string]string { return nil },
			why: func(string) string {
				return "exists and is not tracked by any application (no argocd.argoproj.io/tracking-id annotation)"
			},
		},
	}
	for _, owner := range owners {
		for _, policy := range []string{"BeforeHookCreation", "HookSucceeded", "Never"} {
			t.Run(owner.name+"/"+policy, func(t *testing.T) {
				ns := env.Namespace(t)
				theirs := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns, Annotations: owner.annotations(ns)},
					Data:       map[string]string{"key": "theirs"},
				}
				if err := env.Client.Create(t.Context(), theirs); err != nil {
					t.Fatalf("create their ConfigMap: %v", err)
				}
				objs := decode(t, ns, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/hook-delete-policy: `+policy+`
data: {key: ours}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data: {k: v}
`)
				results, err := applier.Run(t.Context(), build(t, "shop", objs), apply.WaveOptions{App: "shop"})
				werr := waveError(t, err)
				want := []string{fmt.Sprintf("ConfigMap %[1]s/settings: ConfigMap/%[1]s/settings %[2]s; %[3]s", ns, owner.why(ns), rule)}
				if diff := cmp.Diff(want, werr.Failures); diff != "" {
					t.Errorf("failures (-want +got):\n%s", diff)
				}
				var got []string
				for _, w := range results {
					got = append(got, summary(w.Results)...)
				}
				if diff := cmp.Diff([]string{"SyncFailed ConfigMap " + ns + "/settings hook:Failed"}, got); diff != "" {
					t.Errorf("results (-want +got):\n%s", diff)
				}
				live := get(t, "v1", "ConfigMap", ns, "settings")
				if live == nil {
					t.Fatal("their ConfigMap was deleted")
				}
				if live.GetUID() != theirs.UID || live.GetResourceVersion() != theirs.ResourceVersion {
					t.Errorf("their ConfigMap was written: uid %s resourceVersion %s, want %s %s",
						live.GetUID(), live.GetResourceVersion(), theirs.UID, theirs.ResourceVersion)
				}
				if get(t, "v1", "ConfigMap", ns, "app") != nil {
					t.Error("Sync phase ran after the PreSync hook was refused")
				}
			})
		}
	}
}

// TestReplaceTakesOverNothing: the sync options Replace=true and
// Force=true replace or force only an object its Application tracks. Over
// another Application's or a person's object the wave fails before
// anything in it is written, and their object keeps its UID, its
// resourceVersion and its content.
func TestReplaceTakesOverNothing(t *testing.T) {
	const rule = "Replace=true and Force=true replace or force only an object that carries this application's tracking id"
	for _, option := range []string{"Replace", "Force"} {
		t.Run(option, func(t *testing.T) {
			ns := env.Namespace(t)
			theirs := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns, Annotations: map[string]string{
					v1alpha1.AnnotationKeyTrackingID: "billing:/ConfigMap:" + ns + "/settings",
				}},
				Data: map[string]string{"key": "theirs"},
			}
			if err := env.Client.Create(t.Context(), theirs); err != nil {
				t.Fatalf("create their ConfigMap: %v", err)
			}
			objs := decode(t, ns, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    argocd.argoproj.io/sync-options: `+option+`=true
data: {key: ours}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data: {k: v}
`)
			_, err := applier.Run(t.Context(), build(t, "shop", objs), apply.WaveOptions{App: "shop"})
			werr := waveError(t, err)
			want := []string{fmt.Sprintf(`ConfigMap %[1]s/settings: ConfigMap/%[1]s/settings exists and is tracked by application "billing" (tracking id billing:/ConfigMap:%[1]s/settings); %[2]s`, ns, rule)}
			if diff := cmp.Diff(want, werr.Failures); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
			live := get(t, "v1", "ConfigMap", ns, "settings")
			if live == nil {
				t.Fatal("their ConfigMap was deleted")
			}
			if live.GetUID() != theirs.UID || live.GetResourceVersion() != theirs.ResourceVersion {
				t.Errorf("their ConfigMap was written: uid %s resourceVersion %s, want %s %s",
					live.GetUID(), live.GetResourceVersion(), theirs.UID, theirs.ResourceVersion)
			}
			if get(t, "v1", "ConfigMap", ns, "app") != nil {
				t.Error("the wave was partly applied")
			}
		})
	}
}
