package application

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/desired"
)

func TestSyncDue(t *testing.T) {
	const synced, next = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}
	succeededAt := func(rev string, automated bool) *v1alpha1.OperationState {
		return &v1alpha1.OperationState{
			Phase:      v1alpha1.OperationSucceeded,
			Operation:  v1alpha1.Operation{InitiatedBy: v1alpha1.OperationInitiator{Automated: automated}},
			SyncResult: &v1alpha1.SyncOperationResult{Revision: rev},
		}
	}
	failedAt := func(rev string) *v1alpha1.OperationState {
		st := succeededAt(rev, true)
		st.Phase = v1alpha1.OperationFailed
		return st
	}
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	// healedAt is a successful self-heal, the n-th in a row, that
	// finished ago.
	healedAt := func(n int64, ago time.Duration) *v1alpha1.OperationState {
		st := succeededAt(synced, true)
		st.Operation.Sync = &v1alpha1.SyncOperation{SelfHealAttemptsCount: n}
		st.FinishedAt = &metav1.Time{Time: now.Add(-ago)}
		return st
	}
	selfHeal := func(n int64) *v1alpha1.Operation {
		return &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: synced, SelfHealAttemptsCount: n}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}, Retry: v1alpha1.RetryStrategy{Limit: 5}}
	}
	outOfSync := &comparison{status: v1alpha1.SyncStatusCodeOutOfSync, drift: true}
	tests := []struct {
		name    string
		auto    *v1alpha1.SyncPolicyAutomated
		op      *v1alpha1.Operation
		opState *v1alpha1.OperationState
		cmp     *comparison
		rev     string
		empty   bool
		// source is the Application's, when not the one synced (none).
		source *v1alpha1.ApplicationSource
		// want is the request's operation, nil for no sync; wait the
		// self-heal backoff left.
		want *v1alpha1.Operation
		wait time.Duration
	}{
		{
			name: "requested operation always runs",
			op:   &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Prune: true}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}},
			cmp:  &comparison{status: v1alpha1.SyncStatusCodeSynced},
			rev:  synced,
			want: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Prune: true}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}},
		},
		{name: "no automated sync", cmp: outOfSync, rev: next},
		{name: "automated but disabled", auto: &v1alpha1.SyncPolicyAutomated{Enabled: ptr.To(false)}, cmp: outOfSync, rev: next},
		{name: "automated and synced", auto: &v1alpha1.SyncPolicyAutomated{}, cmp: &comparison{status: v1alpha1.SyncStatusCodeSynced}, rev: next},
		{
			name: "automated at a new revision",
			auto: &v1alpha1.SyncPolicyAutomated{Prune: true}, opState: succeededAt(synced, true), cmp: outOfSync, rev: next,
			want: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: next, Prune: true}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}, Retry: v1alpha1.RetryStrategy{Limit: 5}},
		},
		{name: "drift at the synced revision without selfHeal", auto: &v1alpha1.SyncPolicyAutomated{}, opState: succeededAt(synced, false), cmp: outOfSync, rev: synced},
		{
			name: "drift at the synced revision with selfHeal",
			auto: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}, opState: succeededAt(synced, false), cmp: outOfSync, rev: synced,
			want: selfHeal(1),
		},
		// Argo CD's self-heal backoff: 2s after the first self-heal, 6s
		// after the second, ... at most 5 minutes; reset after the
		// cooldown.
		{name: "second self-heal waits 2s", auto: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}, opState: healedAt(1, time.Second), cmp: outOfSync, rev: synced, wait: time.Second},
		{name: "second self-heal after 2s", auto: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}, opState: healedAt(1, 2*time.Second), cmp: outOfSync, rev: synced, want: selfHeal(2)},
		{name: "third self-heal waits 6s", auto: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}, opState: healedAt(2, 2*time.Second), cmp: outOfSync, rev: synced, wait: 4 * time.Second},
		{name: "backoff is capped at 5m", auto: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}, opState: healedAt(40, 4*time.Minute), cmp: outOfSync, rev: synced, wait: time.Minute},
		{name: "count starts again after the cooldown", auto: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}, opState: healedAt(40, 6*time.Minute), cmp: outOfSync, rev: synced, want: selfHeal(1)},
		{name: "failed revision is not retried", auto: &v1alpha1.SyncPolicyAutomated{}, opState: failedAt(next), cmp: outOfSync, rev: next},
		// As Argo CD's alreadyAttemptedSync: the sources count as well as
		// the revision.
		{
			name: "a source changed at the synced revision", auto: &v1alpha1.SyncPolicyAutomated{}, opState: succeededAt(synced, true), cmp: outOfSync, rev: synced,
			source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/a.git", Path: "overlays/prod"},
			want:   &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: synced}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}, Retry: v1alpha1.RetryStrategy{Limit: 5}},
		},
		{
			name: "a failed revision is retried once a source changed", auto: &v1alpha1.SyncPolicyAutomated{}, opState: failedAt(next), cmp: outOfSync, rev: next,
			source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/a.git", Path: "fixed"},
			want:   &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: next}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}, Retry: v1alpha1.RetryStrategy{Limit: 5}},
		},
		// As Argo CD: selfHeal corrects drift of a revision that synced; a
		// revision that failed waits for a new commit or a manual sync.
		{name: "failed revision is not retried with selfHeal either", auto: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}, opState: failedAt(next), cmp: outOfSync, rev: next},
		{
			name: "only shared objects differ",
			auto: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}, cmp: &comparison{status: v1alpha1.SyncStatusCodeOutOfSync}, rev: next,
		},
		{
			name: "only objects to prune, pruning off",
			auto: &v1alpha1.SyncPolicyAutomated{}, cmp: &comparison{status: v1alpha1.SyncStatusCodeOutOfSync, owned: []*unstructured.Unstructured{obj, obj}}, rev: next,
		},
		{
			name: "only objects to prune, pruning on",
			auto: &v1alpha1.SyncPolicyAutomated{Prune: true}, cmp: &comparison{status: v1alpha1.SyncStatusCodeOutOfSync, owned: []*unstructured.Unstructured{obj, obj}}, rev: next,
			want: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: next, Prune: true}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}, Retry: v1alpha1.RetryStrategy{Limit: 5}},
		},
		{
			name: "empty desired state without allowEmpty",
			auto: &v1alpha1.SyncPolicyAutomated{Prune: true}, cmp: &comparison{status: v1alpha1.SyncStatusCodeOutOfSync, owned: []*unstructured.Unstructured{obj, obj}}, rev: next, empty: true,
		},
		{
			name: "empty desired state with allowEmpty",
			auto: &v1alpha1.SyncPolicyAutomated{Prune: true, AllowEmpty: true}, cmp: &comparison{status: v1alpha1.SyncStatusCodeOutOfSync, owned: []*unstructured.Unstructured{obj, obj}}, rev: next, empty: true,
			want: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: next, Prune: true}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}, Retry: v1alpha1.RetryStrategy{Limit: 5}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := &v1alpha1.Application{Operation: tc.op}
			app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: tc.auto}
			app.Spec.Source = tc.source
			app.Status.OperationState = tc.opState
			state := &desiredState{State: &desired.State{Revisions: []string{tc.rev}}}
			if !tc.empty {
				state.Objects = append(state.Objects, obj)
			}
			r := &Reconciler{opts: Options{Now: func() time.Time { return now }}}
			got, wait := r.syncDue(app, tc.op, tc.cmp, state)
			if wait != tc.wait {
				t.Errorf("self-heal waits %s, want %s", wait, tc.wait)
			}
			var gotOp *v1alpha1.Operation
			if got != nil {
				gotOp = &got.op
			}
			if diff := cmp.Diff(tc.want, gotOp); diff != "" {
				t.Errorf("sync request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppendHistory(t *testing.T) {
	at := metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	tests := []struct {
		name    string
		limit   *int64
		history int
		wantIDs []int64
	}{
		{name: "first entry", wantIDs: []int64{0}},
		{name: "appends with the next id", history: 3, wantIDs: []int64{0, 1, 2, 3}},
		{name: "capped at the default 10", history: 10, wantIDs: []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{name: "capped at revisionHistoryLimit", limit: ptr.To[int64](2), history: 5, wantIDs: []int64{4, 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := &v1alpha1.Application{}
			app.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://example.com/r.git"}
			app.Spec.RevisionHistoryLimit = tc.limit
			for i := range tc.history {
				app.Status.History = append(app.Status.History, v1alpha1.RevisionHistory{ID: int64(i)})
			}
			req := &syncRequest{op: v1alpha1.Operation{InitiatedBy: v1alpha1.OperationInitiator{Username: "bob"}}}
			(&Reconciler{}).appendHistory(app, req, &desiredState{State: &desired.State{Revisions: []string{"abc"}}}, at, at)
			var ids []int64
			for _, h := range app.Status.History {
				ids = append(ids, h.ID)
			}
			if diff := cmp.Diff(tc.wantIDs, ids); diff != "" {
				t.Errorf("history ids (-want +got):\n%s", diff)
			}
			last := app.Status.History[len(app.Status.History)-1]
			if last.Revision != "abc" || last.InitiatedBy.Username != "bob" || last.Source.RepoURL != "https://example.com/r.git" {
				t.Errorf("last entry = %+v", last)
			}
		})
	}
}

// TestRetry: Argo CD's retry arithmetic and the wait of a retried
// operation.
func TestRetry(t *testing.T) {
	app := &v1alpha1.Application{}
	if got := automatedRetry(app); got != (v1alpha1.RetryStrategy{Limit: 5}) {
		t.Errorf("default automated retry = %+v, want limit 5", got)
	}
	app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Retry: &v1alpha1.RetryStrategy{Limit: -1}}
	if got := automatedRetry(app); got.Limit != -1 {
		t.Errorf("spec retry not used: %+v", got)
	}
	for _, tc := range []struct {
		s     v1alpha1.RetryStrategy
		count int64
		want  bool
	}{{v1alpha1.RetryStrategy{Limit: 0}, 0, false}, {v1alpha1.RetryStrategy{Limit: 2}, 1, true}, {v1alpha1.RetryStrategy{Limit: 2}, 2, false}, {v1alpha1.RetryStrategy{Limit: -1}, 1000, true}} {
		if got := retryAllowed(tc.s, tc.count); got != tc.want {
			t.Errorf("retryAllowed(%+v, %d) = %v", tc.s, tc.count, got)
		}
	}
	three := int64(3)
	custom := v1alpha1.RetryStrategy{Limit: 9, Backoff: &v1alpha1.Backoff{Duration: "2", Factor: &three, MaxDuration: "1m"}}
	for _, tc := range []struct {
		s    v1alpha1.RetryStrategy
		n    int64
		want time.Duration
	}{
		{v1alpha1.RetryStrategy{}, 1, 10 * time.Second},
		{v1alpha1.RetryStrategy{}, 2, 20 * time.Second},
		{v1alpha1.RetryStrategy{}, 9, 3 * time.Minute},
		{custom, 1, 6 * time.Second},
		{custom, 3, 54 * time.Second},
		{custom, 4, time.Minute},
		{v1alpha1.RetryStrategy{Backoff: &v1alpha1.Backoff{Duration: "500ms"}}, 1, time.Second},
	} {
		if got, err := retryDelay(tc.s, tc.n); err != nil || got != tc.want {
			t.Errorf("retryDelay(%+v, %d) = %s, %v, want %s", tc.s.Backoff, tc.n, got, err, tc.want)
		}
	}
	// As Argo CD: a backoff that does not parse is an error, which ends the
	// operation instead of retrying it.
	for _, b := range []v1alpha1.Backoff{{Duration: "soon"}, {MaxDuration: "1x"}} {
		if _, err := retryDelay(v1alpha1.RetryStrategy{Backoff: &b}, 1); err == nil || !strings.Contains(err.Error(), "unable to parse") {
			t.Errorf("retryDelay with backoff %+v: error %v, want Argo CD's unable to parse", b, err)
		}
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	op := &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "abc"}, Retry: v1alpha1.RetryStrategy{Limit: 3}}
	finished := metav1.NewTime(now.Add(-4 * time.Second))
	st := &v1alpha1.OperationState{Operation: *op, Phase: v1alpha1.OperationRunning, RetryCount: 1, FinishedAt: &finished}
	if got := retryWait(st, op, now); got != 6*time.Second {
		t.Errorf("retryWait = %s, want 6s (10s after the failure, 4s passed)", got)
	}
	if got := retryWait(st, op, now.Add(time.Minute)); got != 0 {
		t.Errorf("retryWait after the backoff = %s, want 0", got)
	}
	other := op.DeepCopy()
	other.Sync.Revision = "def"
	if got := retryWait(st, other, now); got != 0 {
		t.Errorf("retryWait of another operation = %s, want 0", got)
	}
}
