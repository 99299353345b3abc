package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// endlessPreSync is a PreSync hook that never completes here: no
// kube-controller-manager runs its Job.
const endlessPreSync = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    argocd.argoproj.io/hook: PreSync
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: registry.example.com/migrate:1.0.0}]
`

// hookRunning reports whether the operation is Running with the PreSync
// hook created.
func (f *fixture) hookRunning() (bool, string) {
	a := f.app()
	if st := a.Status.OperationState; st == nil || st.Phase != v1alpha1.OperationRunning {
		return false, describeApp(a)
	}
	var job batchv1.Job
	if err := f.get(&job, "migrate"); err != nil {
		return false, "hook job: " + err.Error()
	}
	return true, ""
}

// terminated waits until the operation ended as terminated with a message
// starting with want, the running hook was deleted and the Sync phase
// never started.
func (f *fixture) terminated(want string) {
	f.t.Helper()
	app := f.waitApp("the operation ended as terminated", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return a.Operation == nil && st != nil && st.Phase == v1alpha1.OperationFailed && strings.HasPrefix(st.Message, want)
	})
	res := app.Status.OperationState.SyncResult
	if res == nil {
		f.t.Fatalf("the terminated operation has no sync result: %s", describeApp(app))
	}
	for _, r := range res.Resources {
		if r.Name == "migrate" && (r.HookPhase != v1alpha1.OperationFailed || !strings.Contains(r.Message, "running hook deleted")) {
			f.t.Errorf("hook result %+v, want Failed and deleted", r)
		}
	}
	eventually(f.t, "the running hook is deleted", func() (bool, string) {
		return f.gone(&batchv1.Job{}, "migrate")
	})
	if img := f.deploymentImage("web"); img != "" {
		f.t.Errorf("deployment web applied by a terminated operation")
	}
}

// operationHeldByWindow creates the Application with a manual sync
// operation that a deny window of its AppProject holds back, and waits
// until the operation is Running, waiting.
func (f *fixture) operationHeldByWindow() *v1alpha1.Application {
	f.t.Helper()
	f.editProject = func(p *v1alpha1.AppProject) {
		p.Spec.SyncWindows = []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"*"}}}
	}
	f.application(nil, func(a *v1alpha1.Application) {
		a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}
	})
	return f.waitApp("the operation waits for the window", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return a.Operation != nil && st != nil && st.Phase == v1alpha1.OperationRunning
	})
}

// TestTerminateRunningOperation: tollgate app terminate-op (the phase
// Terminating) stops an operation in the middle of a wave, as Argo CD's
// Terminate does: the hook still running is deleted and the operation
// fails with "Operation terminated", without a retry.
func TestTerminateRunningOperation(t *testing.T) {
	t.Parallel()
	files := baseFiles()
	files["manifests/migrate.yaml"] = endlessPreSync
	f := newFixture(t, files)
	f.application(nil, func(a *v1alpha1.Application) {
		a.Operation = &v1alpha1.Operation{
			Sync:        &v1alpha1.SyncOperation{},
			InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"},
			Retry:       v1alpha1.RetryStrategy{Limit: 5},
		}
	})
	eventually(t, "the PreSync hook runs", f.hookRunning)
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"operationState":{"phase":"Terminating"}}}`))
	if err := env.Client.Patch(t.Context(), f.app(), patch); err != nil {
		t.Fatal(err)
	}
	f.terminated("Operation terminated")
	if st := f.app().Status.OperationState; st.Message != "Operation terminated" || st.RetryCount != 0 {
		t.Errorf("operation state %q retried %d times, want \"Operation terminated\" and no retry", st.Message, st.RetryCount)
	}
}

// TestSyncTimeout: an operation that has run longer than --sync-timeout
// (the harness sets 90s) since it started, its earlier attempts included,
// is terminated. The operation is held by a sync window first and recorded
// as a retry that started 85 seconds ago; opening the window lets it run.
func TestSyncTimeout(t *testing.T) {
	t.Parallel()
	files := baseFiles()
	files["manifests/migrate.yaml"] = endlessPreSync
	f := newFixture(t, files)
	app := f.operationHeldByWindow()
	now := time.Now().UTC()
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"status":{"operationState":{"retryCount":1,"startedAt":%q,"finishedAt":%q}}}`,
		now.Add(-85*time.Second).Format(time.RFC3339), now.Add(-time.Hour).Format(time.RFC3339))))
	if err := env.Client.Patch(t.Context(), app, patch); err != nil {
		t.Fatal(err)
	}
	var project v1alpha1.AppProject
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: f.name}, &project); err != nil {
		t.Fatal(err)
	}
	project.Spec.SyncWindows = nil
	if err := env.Client.Update(t.Context(), &project); err != nil {
		t.Fatal(err)
	}
	f.terminated("Operation terminated: it ran longer than the sync timeout (1m30s)")
}

// TestPruneConfirmWaitsForApproval: a sync that would prune an object
// marked Prune=confirm stays Running, as Argo CD's, with the message
// naming the object and nothing pruned, until the deletion is approved
// after the operation started (tollgate app confirm-deletion); then it
// prunes and succeeds.
func TestPruneConfirmWaitsForApproval(t *testing.T) {
	t.Parallel()
	files := baseFiles()
	files["manifests/confirm.yaml"] = annotatedConfigMap("confirm", "argocd.argoproj.io/sync-options", "Prune=confirm")
	files["manifests/plain.yaml"] = configMap("plain", "v")
	f := newFixture(t, files)
	f.application(automated(true, false), nil)
	f.waitSynced(f.head)
	head := f.push(nil, []string{"manifests/confirm.yaml", "manifests/plain.yaml"}, "remove two configmaps")
	app := f.waitApp("the sync waits for the confirmation", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return st != nil && st.Phase == v1alpha1.OperationRunning && st.Message == "waiting for pruning confirmation of /ConfigMap/confirm"
	})
	consistently(t, "nothing pruned before the approval", 3*resync, func() (bool, string) {
		for _, name := range []string{"plain", "confirm"} {
			if gone, _ := f.gone(&corev1.ConfigMap{}, name); gone {
				return false, "configmap " + name + " was pruned"
			}
		}
		return true, ""
	})
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`,
		v1alpha1.AnnotationKeyDeletionApproved, time.Now().UTC().Format(time.RFC3339))))
	if err := env.Client.Patch(t.Context(), app, patch); err != nil {
		t.Fatal(err)
	}
	f.waitSynced(head)
	for _, name := range []string{"plain", "confirm"} {
		if gone, why := f.gone(&corev1.ConfigMap{}, name); !gone {
			t.Errorf("after the approval: %s", why)
		}
	}
}
