package devstack

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

func TestSyncSteps(t *testing.T) {
	app := &v1alpha1.Application{}
	app.Status.Resources = []v1alpha1.ResourceStatus{
		{Kind: "ConfigMap", Namespace: "billing", Name: "config", SyncWave: -1},
		{Group: "apps", Kind: "Deployment", Namespace: "billing", Name: "api", SyncWave: 1},
		{Kind: "Service", Namespace: "billing", Name: "api", SyncWave: 1},
	}
	op := &v1alpha1.OperationState{SyncResult: &v1alpha1.SyncOperationResult{Resources: []v1alpha1.ResourceResult{
		{Group: "apps", Kind: "Deployment", Namespace: "billing", Name: "api", Status: v1alpha1.ResultCodeSynced, SyncPhase: v1alpha1.SyncPhaseSync},
		{Kind: "Service", Namespace: "billing", Name: "api", Status: v1alpha1.ResultCodeSynced, SyncPhase: v1alpha1.SyncPhaseSync},
		{Kind: "ConfigMap", Namespace: "billing", Name: "config", Status: v1alpha1.ResultCodeSynced},
		{Group: "batch", Kind: "Job", Namespace: "billing", Name: "migrate", HookType: "PreSync", HookPhase: v1alpha1.OperationSucceeded, SyncPhase: v1alpha1.SyncPhasePreSync},
		{Kind: "ConfigMap", Namespace: "billing", Name: "old", Status: v1alpha1.ResultCodePruned, SyncPhase: v1alpha1.SyncPhaseSync},
	}}}
	want := []string{
		"PreSync wave 0: Job/migrate (PreSync hook, succeeded)",
		"Sync wave -1: ConfigMap/config",
		"Sync wave 0: ConfigMap/old (Pruned)",
		"Sync wave 1: Deployment/api, Service/api",
	}
	if diff := cmp.Diff(want, syncSteps(app, op)); diff != "" {
		t.Errorf("syncSteps (-want +got):\n%s", diff)
	}
}

// TestTellApp follows one Application through a sync, a refusal and its
// clearing, and checks that each change is told once.
func TestTellApp(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "billing"}}
	var out strings.Builder
	con := NewConsole(&out)
	v := &appView{conditions: map[string]string{}}
	step := func(mutate func()) string {
		out.Reset()
		mutate()
		tellApp(con, app, v)
		return out.String()
	}
	steps := []struct {
		name   string
		mutate func()
		want   string
	}{
		{"compared", func() {
			app.Status.Sync = v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeOutOfSync, Revision: "0123456789abcdef"}
			app.Status.Health.Status = v1alpha1.HealthStatusMissing
		}, "  billing         OutOfSync, Missing (revision 0123456)\n"},
		{"sync started", func() {
			app.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning, StartedAt: start,
				Operation: v1alpha1.Operation{InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}}
		}, "  billing         sync started (requested by alice)\n"},
		{"nothing new", func() {}, ""},
		{"new revision only", func() { app.Status.Sync.Revision = "fedcba9876543210" }, ""},
		{"refused", func() {
			app.Status.OperationState.Phase, app.Status.OperationState.Message = v1alpha1.OperationFailed, "sync refused by policy, nothing was applied:\n[r] x"
			app.Status.Conditions = []v1alpha1.ApplicationCondition{
				{Type: v1alpha1.ApplicationConditionPolicyViolation, Message: "[r] x\n[s] y"},
				{Type: v1alpha1.ApplicationConditionSyncError, Message: "sync refused by policy, nothing was applied:\n[r] x"},
			}
		}, "  billing         sync failed: sync refused by policy, nothing was applied\n" +
			"  billing         REFUSED by policy, nothing applied:\n" +
			"                    [r] x\n" +
			"                    [s] y\n"},
		{"cleared and synced", func() {
			app.Status.Conditions = nil
			app.Status.Sync.Status, app.Status.Health.Status = v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy
		}, "  billing         PolicyViolation cleared\n" +
			"  billing         Synced, Healthy (revision fedcba9)\n"},
	}
	for _, s := range steps {
		if diff := cmp.Diff(s.want, step(s.mutate)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.name, diff)
		}
	}
}
