package application

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/engine/desired"
	"github.com/tollgate-dev/tollgate/engine/metrics"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// The tests of this file hold the status fields and operation fields the
// compatibility ledger (internal/compat) calls honoured.

// compatObject is a desired object of kind apiVersion/kind in namespace
// shop, with annotations.
func compatObject(apiVersion, kind, name string, annotations map[string]string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	o.SetNamespace("shop")
	o.SetName(name)
	o.SetAnnotations(annotations)
	return o
}

// TestRecordComparisonStatus: a comparison is written as Argo CD writes
// it: status.sync with the revision(s) compared and the spec compared
// with (source or sources, destination, ignoreDifferences), the
// resources, and the Application's health, whose lastTransitionTime moves
// only when its status changes.
func TestRecordComparisonStatus(t *testing.T) {
	before := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC))
	dest := v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "shop"}
	ignore := []v1alpha1.ResourceIgnoreDifferences{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}
	src := func(path string) v1alpha1.ApplicationSource {
		return v1alpha1.ApplicationSource{RepoURL: ours, Path: path, TargetRevision: "main"}
	}
	resources := []v1alpha1.ResourceStatus{{
		Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web", Status: v1alpha1.SyncStatusCodeOutOfSync,
		Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusProgressing, Message: "1 of 2 replicas updated"}, SyncWave: 1,
	}}
	progressing := v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusProgressing, Message: "Deployment shop/web: 1 of 2 replicas updated"}
	tests := []struct {
		name       string
		spec       v1alpha1.ApplicationSpec
		was        v1alpha1.HealthStatus
		revisions  []string
		wantSync   v1alpha1.SyncStatus
		wantHealth v1alpha1.HealthStatus
	}{
		{
			name:      "one source, health changed",
			spec:      v1alpha1.ApplicationSpec{Source: new(src("web")), Destination: dest, IgnoreDifferences: ignore},
			was:       v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy, LastTransitionTime: &before},
			revisions: []string{"abc"},
			wantSync: v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeOutOfSync, Revision: "abc",
				ComparedTo: v1alpha1.ComparedTo{Source: src("web"), Destination: dest, IgnoreDifferences: ignore}},
			wantHealth: v1alpha1.HealthStatus{Status: progressing.Status, Message: progressing.Message, LastTransitionTime: &now},
		},
		{
			name:      "several sources, health unchanged",
			spec:      v1alpha1.ApplicationSpec{Sources: []v1alpha1.ApplicationSource{src("web"), src("db")}, Destination: dest},
			was:       v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusProgressing, LastTransitionTime: &before},
			revisions: []string{"abc", "def"},
			wantSync: v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeOutOfSync, Revisions: []string{"abc", "def"},
				ComparedTo: v1alpha1.ComparedTo{Sources: []v1alpha1.ApplicationSource{src("web"), src("db")}, Destination: dest}},
			wantHealth: v1alpha1.HealthStatus{Status: progressing.Status, Message: progressing.Message, LastTransitionTime: &before},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := &v1alpha1.Application{Spec: tc.spec}
			app.Status.Health = tc.was
			p := &pass{app: app, orig: app.DeepCopy(), now: now}
			cmp0 := &comparison{status: v1alpha1.SyncStatusCodeOutOfSync, resources: resources, health: worstHealth(resources)}
			state := &desiredState{State: &desired.State{Revisions: tc.revisions}}
			(&Reconciler{}).recordComparison(p, cmp0, state, app.Sources())
			if diff := cmp.Diff(tc.wantSync, app.Status.Sync); diff != "" {
				t.Errorf("status.sync (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantHealth, app.Status.Health); diff != "" {
				t.Errorf("status.health (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(resources, app.Status.Resources); diff != "" {
				t.Errorf("status.resources (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFinishWritesControllerFields: every pass writes reconciledAt and
// the controller's namespace (controllerNamespace), as Argo CD does, and
// leaves observedAt, which Argo CD no longer writes, empty.
func TestFinishWritesControllerFields(t *testing.T) {
	now := metav1.NewTime(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	stored := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "web"}, Spec: v1alpha1.ApplicationSpec{Project: "default"}}
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(stored).Build()
	var orig v1alpha1.Application
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(stored), &orig); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{client: c, metrics: metrics.NewMetrics(), opts: Options{Namespace: "argocd"}}
	p := &pass{app: orig.DeepCopy(), orig: &orig, key: client.ObjectKeyFromObject(stored), now: now}
	if err := r.finish(t.Context(), p, []outcome{{step: stepSpec}}); err != nil {
		t.Fatal(err)
	}
	var got v1alpha1.Application
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(stored), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.ReconciledAt == nil || !got.Status.ReconciledAt.Equal(&now) {
		t.Errorf("reconciledAt = %v, want %v", got.Status.ReconciledAt, now)
	}
	if got.Status.ControllerNamespace != "argocd" {
		t.Errorf("controllerNamespace = %q, want argocd", got.Status.ControllerNamespace)
	}
	if got.Status.ObservedAt != nil {
		t.Errorf("observedAt = %v, want it left empty", got.Status.ObservedAt)
	}
}

// TestSyncRequestFromOperation: a requested sync runs as its operation
// says: prune, dryRun, the resources of a selective sync, its syncOptions
// instead of the spec's (the spec's when it has none), and the apply
// strategy without hooks (the hook strategy, or none, with them).
func TestSyncRequestFromOperation(t *testing.T) {
	app := &v1alpha1.Application{}
	app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{SyncOptions: []string{"CreateNamespace=true"}}
	selected := []v1alpha1.SyncOperationResource{{Group: "apps", Kind: "Deployment", Name: "web"}}
	tests := []struct {
		name string
		sync v1alpha1.SyncOperation
		want syncRequest
	}{
		{name: "defaults: the spec's sync options, hooks run", want: syncRequest{syncOptions: []string{"CreateNamespace=true"}}},
		{
			name: "prune, dry run and a selection",
			sync: v1alpha1.SyncOperation{Prune: true, DryRun: true, Resources: selected},
			want: syncRequest{prune: true, dryRun: true, resources: selected, syncOptions: []string{"CreateNamespace=true"}},
		},
		{
			name: "the operation's sync options replace the spec's",
			sync: v1alpha1.SyncOperation{SyncOptions: []string{"Validate=false"}},
			want: syncRequest{syncOptions: []string{"Validate=false"}},
		},
		{
			name: "apply strategy: no hooks",
			sync: v1alpha1.SyncOperation{SyncStrategy: &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{}}},
			want: syncRequest{noHooks: true, syncOptions: []string{"CreateNamespace=true"}},
		},
		{
			name: "hook strategy: hooks run",
			sync: v1alpha1.SyncOperation{SyncStrategy: &v1alpha1.SyncStrategy{Hook: &v1alpha1.SyncStrategyHook{}}},
			want: syncRequest{syncOptions: []string{"CreateNamespace=true"}},
		},
		{
			name: "a forced apply: Force=true for every object",
			sync: v1alpha1.SyncOperation{SyncStrategy: &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{Force: true}}},
			want: syncRequest{noHooks: true, syncOptions: []string{"CreateNamespace=true", "Force=true"}},
		},
		{
			name: "a forced hook sync",
			sync: v1alpha1.SyncOperation{SyncStrategy: &v1alpha1.SyncStrategy{Hook: &v1alpha1.SyncStrategyHook{SyncStrategyApply: v1alpha1.SyncStrategyApply{Force: true}}}},
			want: syncRequest{syncOptions: []string{"CreateNamespace=true", "Force=true"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := &v1alpha1.Operation{Sync: tc.sync.DeepCopy(), InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}
			got, _ := (&Reconciler{}).syncDue(app, op, &comparison{status: v1alpha1.SyncStatusCodeSynced}, &desiredState{State: &desired.State{Revisions: []string{"abc"}}})
			if got == nil {
				t.Fatal("no sync requested")
			}
			want := tc.want
			want.op, want.user = *op, true
			if diff := cmp.Diff(want, *got, cmp.AllowUnexported(syncRequest{})); diff != "" {
				t.Errorf("sync request (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSelectedResources: a resource of a selective sync names an object
// by group, kind and name, and by namespace when it has one, as Argo CD
// matches them.
func TestSelectedResources(t *testing.T) {
	web := compatObject("apps/v1", "Deployment", "web", nil)
	tests := []struct {
		name string
		res  v1alpha1.SyncOperationResource
		want bool
	}{
		{name: "group, kind and name", res: v1alpha1.SyncOperationResource{Group: "apps", Kind: "Deployment", Name: "web"}, want: true},
		{name: "and namespace", res: v1alpha1.SyncOperationResource{Group: "apps", Kind: "Deployment", Name: "web", Namespace: "shop"}, want: true},
		{name: "another namespace", res: v1alpha1.SyncOperationResource{Group: "apps", Kind: "Deployment", Name: "web", Namespace: "other"}},
		{name: "another group", res: v1alpha1.SyncOperationResource{Group: "extensions", Kind: "Deployment", Name: "web"}},
		{name: "another kind", res: v1alpha1.SyncOperationResource{Group: "apps", Kind: "StatefulSet", Name: "web"}},
		{name: "another name", res: v1alpha1.SyncOperationResource{Group: "apps", Kind: "Deployment", Name: "db"}},
		{name: "wildcard name", res: v1alpha1.SyncOperationResource{Group: "apps", Kind: "Deployment", Name: "*"}, want: true},
		{name: "wildcard kind and namespace", res: v1alpha1.SyncOperationResource{Group: "apps", Kind: "*", Name: "web", Namespace: "*"}, want: true},
		{name: "excluded", res: v1alpha1.SyncOperationResource{Group: "apps", Kind: "Deployment", Name: "web", Exclude: true}},
		{name: "another excluded: the rest is synced", res: v1alpha1.SyncOperationResource{Kind: "ConfigMap", Name: "web", Exclude: true}, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := selected(web, []v1alpha1.SyncOperationResource{tc.res}); got != tc.want {
				t.Errorf("selected = %v, want %v", got, tc.want)
			}
		})
	}
	// Included by a wildcard, excluded by name: the exclusion wins.
	both := []v1alpha1.SyncOperationResource{{Group: "apps", Kind: "*", Name: "*"}, {Group: "apps", Kind: "Deployment", Name: "web", Exclude: true}}
	if selected(web, both) {
		t.Error("an excluded resource included by a wildcard is synced")
	}
}

// TestRunSyncFollowsTheOperation: what a sync applies follows its
// operation, shown with a dry run, which applies nothing: a selective sync
// only the selected objects, the apply strategy no hooks, the hook
// strategy (the default) hooks first; and the operation's sync options
// are the ones in force (FailOnSharedResource), the spec's when it has
// none.
func TestRunSyncFollowsTheOperation(t *testing.T) {
	hook := compatObject("v1", "ConfigMap", "before", map[string]string{plan.AnnotationHook: "PreSync"})
	web := compatObject("apps/v1", "Deployment", "web", nil)
	db := compatObject("v1", "Service", "db", nil)
	state := &desiredState{State: &desired.State{Revisions: []string{"abc"}, Objects: []*unstructured.Unstructured{hook, web, db}}}
	shared := map[apply.Ref]string{refKey(apply.RefOf(db)): "db is part of application other"}
	failOnShared := []string{"FailOnSharedResource=true"}
	tests := []struct {
		name        string
		sync        v1alpha1.SyncOperation
		specOptions []string
		shared      map[apply.Ref]string
		want        []string
		wantErr     bool
	}{
		{name: "no strategy: hooks first", want: []string{"PreSync ConfigMap before", "Sync Service db", "Sync Deployment web"}},
		{
			name: "hook strategy: hooks first",
			sync: v1alpha1.SyncOperation{SyncStrategy: &v1alpha1.SyncStrategy{Hook: &v1alpha1.SyncStrategyHook{}}},
			want: []string{"PreSync ConfigMap before", "Sync Service db", "Sync Deployment web"},
		},
		{
			name: "apply strategy: no hooks",
			sync: v1alpha1.SyncOperation{SyncStrategy: &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{}}},
			want: []string{"Sync Service db", "Sync Deployment web"},
		},
		{
			name: "selective sync",
			sync: v1alpha1.SyncOperation{Resources: []v1alpha1.SyncOperationResource{{Group: "apps", Kind: "Deployment", Name: "web"}}},
			want: []string{"Sync Deployment web"},
		},
		{name: "a shared object is left out", shared: shared, want: []string{"PreSync ConfigMap before", "Sync Deployment web"}},
		{name: "the operation's FailOnSharedResource=true", sync: v1alpha1.SyncOperation{SyncOptions: failOnShared}, shared: shared, wantErr: true},
		{name: "the spec's FailOnSharedResource=true", specOptions: failOnShared, shared: shared, wantErr: true},
		{
			name: "the operation's options replace the spec's", sync: v1alpha1.SyncOperation{SyncOptions: []string{"Validate=false"}},
			specOptions: failOnShared, shared: shared, want: []string{"PreSync ConfigMap before", "Sync Deployment web"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := &v1alpha1.Application{}
			app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{SyncOptions: tc.specOptions}
			sync := tc.sync.DeepCopy()
			sync.DryRun = true
			r := &Reconciler{}
			req, _ := r.syncDue(app, &v1alpha1.Operation{Sync: sync}, &comparison{}, state)
			results, err := r.runSync(t.Context(), &pass{app: app}, nil, req, state, &comparison{shared: tc.shared})
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			var got []string
			for _, r := range results {
				got = append(got, string(r.SyncPhase)+" "+r.Kind+" "+r.Name)
				if r.Status != v1alpha1.ResultCodeSynced || r.Message != "dry run" {
					t.Errorf("dry-run result %+v", r)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("synced (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPruningFollowsTheOperation: objects awaiting pruning are pruned
// only when the sync's operation asks for it (prune), and a selective
// sync prunes only the selected ones; the others are PruneSkipped with
// the reason.
func TestPruningFollowsTheOperation(t *testing.T) {
	old := compatObject("v1", "ConfigMap", "old", nil)
	gone := compatObject("v1", "ConfigMap", "gone", nil)
	status := []v1alpha1.ResourceStatus{
		{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "gone", Status: v1alpha1.SyncStatusCodeOutOfSync, RequiresPruning: true},
		{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "old", Status: v1alpha1.SyncStatusCodeOutOfSync, RequiresPruning: true},
	}
	state := &desiredState{State: &desired.State{Revisions: []string{"abc"}, Objects: []*unstructured.Unstructured{compatObject("apps/v1", "Deployment", "web", nil)}}}
	tests := []struct {
		name        string
		sync        v1alpha1.SyncOperation
		wantPruned  []string
		wantSkipped []string
	}{
		{name: "prune off", wantSkipped: []string{"gone", "old"}},
		{name: "prune on", sync: v1alpha1.SyncOperation{Prune: true}, wantPruned: []string{"old", "gone"}},
		{name: "prune off, selective", sync: v1alpha1.SyncOperation{Resources: []v1alpha1.SyncOperationResource{{Kind: "ConfigMap", Name: "old"}}}, wantSkipped: []string{"old"}},
		{name: "prune on, selective", sync: v1alpha1.SyncOperation{Prune: true, Resources: []v1alpha1.SyncOperationResource{{Kind: "ConfigMap", Name: "old"}}}, wantPruned: []string{"old"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := &v1alpha1.Application{}
			app.Status.Resources = status
			app.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning}
			op := &v1alpha1.Operation{Sync: tc.sync.DeepCopy()}
			req, _ := (&Reconciler{}).syncDue(app, op, &comparison{}, state)
			sync := &authority.Sync{}
			skipped, err := (&Reconciler{}).pruning(&pass{app: app, instance: "web"}, req, state, &comparison{owned: []*unstructured.Unstructured{old, gone}}, sync)
			if err != nil {
				t.Fatal(err)
			}
			var pruned, notPruned []string
			if sync.Prune != nil {
				for _, o := range sync.Prune.Owned {
					pruned = append(pruned, o.GetName())
				}
			}
			for _, r := range skipped {
				if r.Status != v1alpha1.ResultCodePruneSkipped || r.Message != "pruning is disabled for this sync" {
					t.Errorf("skipped %+v", r)
				}
				notPruned = append(notPruned, r.Name)
			}
			if diff := cmp.Diff(tc.wantPruned, pruned); diff != "" {
				t.Errorf("pruned (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSkipped, notPruned); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResourceResultFromApply: each object's result carries what Argo
// CD's does: the object (group, version, kind, namespace, name), its
// result code and message, the phase it synced in and, for a hook, its
// type and phase.
func TestResourceResultFromApply(t *testing.T) {
	ref := apply.Ref{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "migrate"}
	tests := []struct {
		name string
		in   apply.ResourceResult
		want v1alpha1.ResourceResult
	}{
		{
			name: "object",
			in:   apply.ResourceResult{Ref: ref, Phase: plan.PhaseSync, Status: apply.ResultSynced, Message: "applied"},
			want: v1alpha1.ResourceResult{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "migrate",
				Status: v1alpha1.ResultCodeSynced, Message: "applied", SyncPhase: v1alpha1.SyncPhaseSync},
		},
		{
			name: "hook",
			in:   apply.ResourceResult{Ref: ref, Phase: plan.PhasePreSync, Hook: true, Status: apply.ResultSyncFailed, Message: "job failed", HookPhase: apply.HookFailed},
			want: v1alpha1.ResourceResult{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "migrate",
				Status: v1alpha1.ResultCodeSyncFailed, Message: "job failed", SyncPhase: v1alpha1.SyncPhasePreSync,
				HookType: v1alpha1.HookType("PreSync"), HookPhase: v1alpha1.OperationFailed},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, resourceResult(tc.in)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSyncRecordsTheOperation: a sync records its operation as requested
// (info and initiator included), its phase, message, start and end, and
// for several sources the revisions and sources synced; a dry run adds no
// history entry.
func TestSyncRecordsTheOperation(t *testing.T) {
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	srcs := []v1alpha1.ApplicationSource{{RepoURL: ours, Path: "web", TargetRevision: "main"}, {RepoURL: ours, Path: "db", TargetRevision: "main"}}
	op := &v1alpha1.Operation{
		Sync:        &v1alpha1.SyncOperation{DryRun: true},
		InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"},
		Info:        []v1alpha1.Info{{Name: "reason", Value: "release 1.2"}},
	}
	stored := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "shop"},
		Spec:       v1alpha1.ApplicationSpec{Project: "default", Sources: srcs},
		Operation:  op.DeepCopy(),
	}
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(stored).Build()
	var orig v1alpha1.Application
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(stored), &orig); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{client: c, metrics: metrics.NewMetrics(), opts: Options{Namespace: "argocd", Now: func() time.Time { return start }}}
	p := &pass{app: orig.DeepCopy(), orig: &orig, key: types.NamespacedName{Namespace: "argocd", Name: "shop"}, now: metav1.NewTime(start)}
	state := &desiredState{State: &desired.State{Revisions: []string{"abc", "def"}, Objects: []*unstructured.Unstructured{
		compatObject("apps/v1", "Deployment", "web", nil), compatObject("v1", "Service", "db", nil),
	}}}
	req, _ := r.syncDue(p.app, p.app.Operation, &comparison{}, state)
	if _, err := r.sync(t.Context(), p, nil, req, state, &comparison{}); err != nil {
		t.Fatal(err)
	}
	at := metav1.NewTime(start)
	want := &v1alpha1.OperationState{
		Operation: *op, Phase: v1alpha1.OperationSucceeded, Message: "dry run: 2 resources would be applied; nothing was changed",
		StartedAt: at, FinishedAt: &at,
		SyncResult: &v1alpha1.SyncOperationResult{
			Revisions: []string{"abc", "def"}, Sources: srcs,
			Resources: []v1alpha1.ResourceResult{
				{Version: "v1", Kind: "Service", Namespace: "shop", Name: "db", Status: v1alpha1.ResultCodeSynced, Message: "dry run", SyncPhase: v1alpha1.SyncPhaseSync},
				{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web", Status: v1alpha1.ResultCodeSynced, Message: "dry run", SyncPhase: v1alpha1.SyncPhaseSync},
			},
		},
	}
	if diff := cmp.Diff(want, p.app.Status.OperationState); diff != "" {
		t.Errorf("operation state (-want +got):\n%s", diff)
	}
	if len(p.app.Status.History) != 0 {
		t.Errorf("a dry run added history %+v", p.app.Status.History)
	}
	if diff := cmp.Diff(op, p.ranOp); diff != "" {
		t.Errorf("operation to clear (-want +got):\n%s", diff)
	}
}

// TestAppendHistorySources: the history entry of an Application with
// several sources holds their revisions and sources, when the sync
// started and ended, and who started it.
func TestAppendHistorySources(t *testing.T) {
	started := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	finished := metav1.NewTime(started.Add(time.Minute))
	srcs := []v1alpha1.ApplicationSource{{RepoURL: ours, Path: "web", TargetRevision: "main"}, {RepoURL: ours, Ref: "values", TargetRevision: "v2"}}
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Sources: srcs}}
	app.Status.History = []v1alpha1.RevisionHistory{{ID: 4, Revision: "old"}}
	req := &syncRequest{op: v1alpha1.Operation{InitiatedBy: v1alpha1.OperationInitiator{Automated: true}}}
	(&Reconciler{}).appendHistory(app, req, &desiredState{State: &desired.State{Revisions: []string{"abc", "def"}}}, started, finished)
	want := v1alpha1.RevisionHistory{
		ID: 5, Revisions: []string{"abc", "def"}, Sources: srcs, DeployedAt: finished, DeployStartedAt: &started,
		InitiatedBy: v1alpha1.OperationInitiator{Automated: true},
	}
	if diff := cmp.Diff(want, app.Status.History[len(app.Status.History)-1]); diff != "" {
		t.Errorf("history entry (-want +got):\n%s", diff)
	}
}

// TestHistoryRecordsTheSyncedSource: a rollback's history entry (and its
// sync result) names the source it synced, not the spec's, as Argo CD
// records it, so a later rollback to it deploys the same path again.
func TestHistoryRecordsTheSyncedSource(t *testing.T) {
	started := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	spec := v1alpha1.ApplicationSource{RepoURL: ours, Path: "web-v2", TargetRevision: "main"}
	synced := v1alpha1.ApplicationSource{RepoURL: ours, Path: "web", TargetRevision: "main"}
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Source: &spec}}
	req := &syncRequest{op: v1alpha1.Operation{InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}, sources: []v1alpha1.ApplicationSource{synced}}
	(&Reconciler{}).appendHistory(app, req, &desiredState{State: &desired.State{Revisions: []string{"abc"}}}, started, started)
	if got := app.Status.History[0]; got.Source.Path != "web" || got.Revision != "abc" {
		t.Errorf("history entry = %s at %s, want the synced source web", got.Source.Path, got.Revision)
	}
	if got := req.syncedSources(app); len(got) != 1 || got[0].Path != "web" {
		t.Errorf("synced sources = %+v", got)
	}
	if got := (&syncRequest{}).syncedSources(app); len(got) != 1 || got[0].Path != "web-v2" {
		t.Errorf("without sources, the spec's: %+v", got)
	}
}
