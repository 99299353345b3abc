package appops

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// waitApp is Application web with the given sync and health status,
// requested operation and last operation's phase ("" for none).
func waitApp(sync v1alpha1.SyncStatusCode, health v1alpha1.HealthStatusCode, requested bool, phase v1alpha1.OperationPhase) *v1alpha1.Application {
	a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "web"}}
	a.Status.Sync.Status = sync
	a.Status.Health.Status = health
	if requested {
		a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
	}
	if phase != "" {
		a.Status.OperationState = &v1alpha1.OperationState{Phase: phase, Message: string(phase)}
	}
	return a
}

func TestDone(t *testing.T) {
	const (
		synced    = v1alpha1.SyncStatusCodeSynced
		outOfSync = v1alpha1.SyncStatusCodeOutOfSync
		healthy   = v1alpha1.HealthStatusHealthy
		degraded  = v1alpha1.HealthStatusDegraded
	)
	both := WaitOptions{Sync: true, Health: true, Operation: true}
	tests := []struct {
		name string
		app  *v1alpha1.Application
		o    WaitOptions
		want bool
	}{
		{name: "synced and healthy, never operated", app: waitApp(synced, healthy, false, ""), o: both, want: true},
		{name: "synced and healthy after a sync", app: waitApp(synced, healthy, false, v1alpha1.OperationSucceeded), o: both, want: true},
		{name: "after a failed sync", app: waitApp(synced, healthy, false, v1alpha1.OperationFailed), o: both, want: true},
		{name: "operation requested", app: waitApp(synced, healthy, true, v1alpha1.OperationSucceeded), o: both},
		{name: "operation running", app: waitApp(synced, healthy, false, v1alpha1.OperationRunning), o: both},
		{name: "operation terminating", app: waitApp(synced, healthy, false, v1alpha1.OperationTerminating), o: both},
		{name: "out of sync", app: waitApp(outOfSync, healthy, false, ""), o: both},
		{name: "degraded", app: waitApp(synced, degraded, false, ""), o: both},
		{name: "never compared", app: waitApp("", "", false, ""), o: both},
		{name: "sync only: degraded", app: waitApp(synced, degraded, false, ""), o: WaitOptions{Sync: true}, want: true},
		{name: "sync only: out of sync", app: waitApp(outOfSync, healthy, false, ""), o: WaitOptions{Sync: true}},
		{name: "sync only: an operation running does not matter", app: waitApp(synced, healthy, false, v1alpha1.OperationRunning), o: WaitOptions{Sync: true}, want: true},
		{name: "health only: out of sync", app: waitApp(outOfSync, healthy, false, ""), o: WaitOptions{Health: true}, want: true},
		{name: "health only: progressing", app: waitApp(synced, v1alpha1.HealthStatusProgressing, false, ""), o: WaitOptions{Health: true}},
		{name: "health or degraded: degraded", app: waitApp(synced, degraded, false, ""), o: WaitOptions{Health: true, Degraded: true}, want: true},
		{name: "suspended: suspended", app: waitApp(synced, v1alpha1.HealthStatusSuspended, false, ""), o: WaitOptions{Suspended: true}, want: true},
		{name: "suspended: healthy", app: waitApp(synced, healthy, false, ""), o: WaitOptions{Suspended: true}},
		{name: "operation only: none", app: waitApp(outOfSync, degraded, false, v1alpha1.OperationFailed), o: WaitOptions{Operation: true}, want: true},
		{name: "operation only: requested", app: waitApp(synced, healthy, true, ""), o: WaitOptions{Operation: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Done(tc.app, tc.o); got != tc.want {
				t.Errorf("Done = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestOperationFinished(t *testing.T) {
	tests := []struct {
		name      string
		app       *v1alpha1.Application
		wantPhase v1alpha1.OperationPhase // "": not finished
	}{
		{name: "succeeded", app: waitApp("", "", false, v1alpha1.OperationSucceeded), wantPhase: v1alpha1.OperationSucceeded},
		{name: "failed", app: waitApp("", "", false, v1alpha1.OperationFailed), wantPhase: v1alpha1.OperationFailed},
		{name: "error", app: waitApp("", "", false, v1alpha1.OperationError), wantPhase: v1alpha1.OperationError},
		{name: "never operated", app: waitApp("", "", false, "")},
		{name: "running", app: waitApp("", "", false, v1alpha1.OperationRunning)},
		{name: "requested, not picked up yet", app: waitApp("", "", true, v1alpha1.OperationSucceeded)},
		{name: "requested and running", app: waitApp("", "", true, v1alpha1.OperationRunning)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, ok := OperationFinished(tc.app)
			if ok != (tc.wantPhase != "") {
				t.Fatalf("OperationFinished = %v, %t; want finished %t", st, ok, tc.wantPhase != "")
			}
			if ok && st.Phase != tc.wantPhase {
				t.Errorf("phase = %s, want %s", st.Phase, tc.wantPhase)
			}
		})
	}
}

// waitClient is a fake client holding the apps that are not nil.
func waitClient(t *testing.T, apps ...*v1alpha1.Application) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme)
	for _, a := range apps {
		if a != nil {
			b = b.WithObjects(a)
		}
	}
	return b.Build()
}

// waitOutcome is what a wait returned, for comparing.
type waitOutcome struct {
	Phase    v1alpha1.OperationPhase // of the returned Application or state
	Refused  string                  // the RefusedError's text
	Timeout  bool                    // a *TimeoutError
	LastRead bool                    // the TimeoutError carries the last read
	Err      string                  // any other error's text
}

func waitResult(phase v1alpha1.OperationPhase, err error) waitOutcome {
	var re *RefusedError
	var te *TimeoutError
	switch {
	case errors.As(err, &re):
		return waitOutcome{Refused: re.Error()}
	case errors.As(err, &te):
		return waitOutcome{Timeout: true, LastRead: te.Last != nil}
	case err != nil:
		return waitOutcome{Err: err.Error()}
	}
	return waitOutcome{Phase: phase}
}

func TestWait(t *testing.T) {
	key := types.NamespacedName{Namespace: "argocd", Name: "web"}
	tests := []struct {
		name string
		app  *v1alpha1.Application // nil: none
		want waitOutcome
	}{
		{name: "done", app: waitApp(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy, false, v1alpha1.OperationSucceeded), want: waitOutcome{Phase: v1alpha1.OperationSucceeded}},
		{name: "still progressing", app: waitApp(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusProgressing, false, v1alpha1.OperationSucceeded), want: waitOutcome{Timeout: true, LastRead: true}},
		{name: "missing", want: waitOutcome{Refused: "application web not found in namespace argocd"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := waitClient(t, tc.app)
			o := DefaultWaitOptions()
			o.Interval, o.Timeout = 10*time.Millisecond, 50*time.Millisecond
			app, err := Wait(t.Context(), c, key, o)
			var phase v1alpha1.OperationPhase
			if err == nil {
				phase = app.Status.OperationState.Phase
			}
			if diff := cmp.Diff(tc.want, waitResult(phase, err)); diff != "" {
				t.Errorf("Wait (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWaitForOperation(t *testing.T) {
	key := types.NamespacedName{Namespace: "argocd", Name: "web"}
	tests := []struct {
		name string
		app  *v1alpha1.Application // nil: none
		want waitOutcome
	}{
		{name: "succeeded", app: waitApp("", "", false, v1alpha1.OperationSucceeded), want: waitOutcome{Phase: v1alpha1.OperationSucceeded}},
		{name: "failed", app: waitApp("", "", false, v1alpha1.OperationFailed), want: waitOutcome{Phase: v1alpha1.OperationFailed}},
		{name: "not picked up", app: waitApp("", "", true, v1alpha1.OperationSucceeded), want: waitOutcome{Timeout: true, LastRead: true}},
		{name: "deleted", want: waitOutcome{Refused: "application web was deleted"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := waitClient(t, tc.app)
			st, err := WaitForOperation(t.Context(), c, key, 10*time.Millisecond, 50*time.Millisecond)
			var phase v1alpha1.OperationPhase
			if err == nil {
				phase = st.Phase
			}
			if diff := cmp.Diff(tc.want, waitResult(phase, err)); diff != "" {
				t.Errorf("WaitForOperation (-want +got):\n%s", diff)
			}
		})
	}
}
