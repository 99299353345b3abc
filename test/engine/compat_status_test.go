package engine_test

import (
	"cmp"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestStatusAsArgoCDWritesIt: after a sync, the status fields the
// compatibility ledger (internal/compat) calls honoured hold what Argo CD
// writes there: each resource by group, version, kind, namespace and name
// with its sync status, health and sync wave; the comparison's source and
// destination; each object's sync result, a hook's with its type and
// phase; and the history entry with the sync's start and end.
func TestStatusAsArgoCDWritesIt(t *testing.T) {
	t.Parallel()
	files := baseFiles()
	files["manifests/late.yaml"] = annotatedConfigMap("late", "argocd.argoproj.io/sync-wave", "2")
	files["manifests/before.yaml"] = annotatedConfigMap("before", "argocd.argoproj.io/hook", "PreSync")
	f := newFixture(t, files)
	f.application(automated(true, false), nil)
	app := f.waitSynced(f.head)

	type resource struct {
		Group, Version, Kind, Namespace, Name string
		Status                                v1alpha1.SyncStatusCode
		Health                                v1alpha1.HealthStatusCode
		SyncWave                              int64
		Hook, RequiresPruning                 bool
	}
	var resources []resource
	for _, r := range app.Status.Resources {
		h := v1alpha1.HealthStatusCode("")
		if r.Health != nil {
			h = r.Health.Status
		}
		resources = append(resources, resource{r.Group, r.Version, r.Kind, r.Namespace, r.Name, r.Status, h, r.SyncWave, r.Hook, r.RequiresPruning})
	}
	synced, healthy := v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy
	wantResources := []resource{ // sorted by group, kind, namespace, name; the hook is not one
		{"", "v1", "ConfigMap", f.ns, "late", synced, healthy, 2, false, false},
		{"", "v1", "ConfigMap", f.ns, "settings", synced, healthy, 0, false, false},
		{"", "v1", "Service", f.ns, "web", synced, healthy, 0, false, false},
		{"apps", "v1", "Deployment", f.ns, "web", synced, healthy, 0, false, false},
	}
	if diff := gocmp.Diff(wantResources, resources); diff != "" {
		t.Errorf("status.resources (-want +got):\n%s", diff)
	}

	comparedTo := app.Status.Sync.ComparedTo
	if diff := gocmp.Diff(*app.Spec.Source, comparedTo.Source); diff != "" {
		t.Errorf("status.sync.comparedTo.source (-want +got):\n%s", diff)
	}
	if diff := gocmp.Diff(app.Spec.Destination, comparedTo.Destination); diff != "" {
		t.Errorf("status.sync.comparedTo.destination (-want +got):\n%s", diff)
	}

	type result struct {
		Group, Version, Kind, Namespace, Name string
		Status                                v1alpha1.ResultCode
		SyncPhase                             v1alpha1.SyncPhase
		HookType                              v1alpha1.HookType
		HookPhase                             v1alpha1.OperationPhase
	}
	st := app.Status.OperationState
	var results []result
	for _, r := range st.SyncResult.Resources {
		if r.Message == "" {
			t.Errorf("result of %s %s has no message", r.Kind, r.Name)
		}
		results = append(results, result{r.Group, r.Version, r.Kind, r.Namespace, r.Name, r.Status, r.SyncPhase, r.HookType, r.HookPhase})
	}
	slices.SortFunc(results, func(a, b result) int { return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name)) })
	wantResults := []result{
		{"", "v1", "ConfigMap", f.ns, "before", v1alpha1.ResultCodeSynced, v1alpha1.SyncPhasePreSync, "PreSync", v1alpha1.OperationSucceeded},
		{"", "v1", "ConfigMap", f.ns, "late", v1alpha1.ResultCodeSynced, v1alpha1.SyncPhaseSync, "", ""},
		{"", "v1", "ConfigMap", f.ns, "settings", v1alpha1.ResultCodeSynced, v1alpha1.SyncPhaseSync, "", ""},
		{"apps", "v1", "Deployment", f.ns, "web", v1alpha1.ResultCodeSynced, v1alpha1.SyncPhaseSync, "", ""},
		{"", "v1", "Service", f.ns, "web", v1alpha1.ResultCodeSynced, v1alpha1.SyncPhaseSync, "", ""},
	}
	if diff := gocmp.Diff(wantResults, results); diff != "" {
		t.Errorf("status.operationState.syncResult.resources (-want +got):\n%s", diff)
	}

	if len(app.Status.History) != 1 {
		t.Fatalf("history = %+v, want one entry", app.Status.History)
	}
	h := app.Status.History[0]
	if h.DeployStartedAt == nil || !h.DeployStartedAt.Equal(&st.StartedAt) || st.FinishedAt == nil || !h.DeployedAt.Equal(st.FinishedAt) {
		t.Errorf("history entry deployed %v, started %v; want the operation's end %v and start %v", h.DeployedAt, h.DeployStartedAt, st.FinishedAt, st.StartedAt)
	}
	if st.FinishedAt.Before(&st.StartedAt) {
		t.Errorf("operation finished at %v, before it started at %v", st.FinishedAt, st.StartedAt)
	}
}
