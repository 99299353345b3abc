package application

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/metrics"
	"github.com/tollgate-dev/tollgate/policies"
)

func TestRequestedApplication(t *testing.T) {
	src := func(repo, rev string) v1alpha1.ApplicationSource {
		return v1alpha1.ApplicationSource{RepoURL: repo, Path: "manifests", TargetRevision: rev}
	}
	single := func(s v1alpha1.ApplicationSource) v1alpha1.ApplicationSpec {
		return v1alpha1.ApplicationSpec{Project: "team", Source: &s}
	}
	multi := func(s ...v1alpha1.ApplicationSource) v1alpha1.ApplicationSpec {
		return v1alpha1.ApplicationSpec{Project: "team", Sources: s}
	}
	tests := []struct {
		name string
		spec v1alpha1.ApplicationSpec
		op   v1alpha1.SyncOperation
		want v1alpha1.ApplicationSpec
	}{
		{
			name: "nothing requested: spec as it is",
			spec: single(src(ours, "main")),
			want: single(src(ours, "main")),
		},
		{
			name: "revision of a single source",
			spec: single(src(ours, "main")),
			op:   v1alpha1.SyncOperation{Revision: "v1.2.0"},
			want: single(src(ours, "v1.2.0")),
		},
		{
			name: "source replaced, with the operation's revision",
			spec: single(src(ours, "main")),
			op:   v1alpha1.SyncOperation{Source: &v1alpha1.ApplicationSource{RepoURL: evil, Path: "x", TargetRevision: "main"}, Revision: "abc123"},
			want: v1alpha1.ApplicationSpec{Project: "team", Source: &v1alpha1.ApplicationSource{RepoURL: evil, Path: "x", TargetRevision: "abc123"}},
		},
		{
			name: "source replaces spec.sources",
			spec: multi(src(ours, "main"), src(ours, "dev")),
			op:   v1alpha1.SyncOperation{Source: &v1alpha1.ApplicationSource{RepoURL: evil, TargetRevision: "main"}},
			want: v1alpha1.ApplicationSpec{Project: "team", Source: &v1alpha1.ApplicationSource{RepoURL: evil, TargetRevision: "main"}},
		},
		{
			name: "sources replace spec.source",
			spec: single(src(ours, "main")),
			op:   v1alpha1.SyncOperation{Sources: []v1alpha1.ApplicationSource{src(evil, "main"), src(ours, "main")}, Revisions: []string{"", "abc123"}},
			want: multi(src(evil, "main"), src(ours, "abc123")),
		},
		{
			// As Argo CD: an Application of several sources reads revisions
			// only, one of a single source revision only.
			name: "revision of a multi-source application is not read",
			spec: multi(src(ours, "main"), src(ours, "dev")),
			op:   v1alpha1.SyncOperation{Revision: "abc123"},
			want: multi(src(ours, "main"), src(ours, "dev")),
		},
		{
			name: "revisions of a single-source application are not read",
			spec: v1alpha1.ApplicationSpec{Source: new(src(ours, "main"))},
			op:   v1alpha1.SyncOperation{Revisions: []string{"abc123"}},
			want: v1alpha1.ApplicationSpec{Source: new(src(ours, "main"))},
		},
		{
			name: "revisions one per source",
			spec: multi(src(ours, "main"), src(ours, "dev")),
			op:   v1alpha1.SyncOperation{Revisions: []string{"a1", "b2", "c3"}},
			want: multi(src(ours, "a1"), src(ours, "b2")),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "argocd"}, Spec: tc.spec}
			before := app.DeepCopy()
			got := requestedApplication(app, &tc.op)
			if diff := cmp.Diff(tc.want, got.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, app); diff != "" {
				t.Errorf("the Application was modified (-want +got):\n%s", diff)
			}
		})
	}
}

// The repositories of the judge tests: the project permits only ours.
const ours, evil = "https://git.example.com/ours.git", "https://git.example.com/evil.git"

// judgeFixture returns the built-in policies and a project that permits
// the repository ours and the namespace shop.
func judgeFixture(t *testing.T) (*policies.Evaluator, *v1alpha1.AppProject) {
	t.Helper()
	e, err := policies.New(t.Context(), policies.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return e, &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: "argocd"},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{ours},
			Destinations: []v1alpha1.ApplicationDestination{{Server: "https://kubernetes.default.svc", Namespace: "shop"}},
		},
	}
}

// TestJudgeOperation judges operations with the built-in policies, as the
// gate does: one whose sources the project does not permit fails with the
// rule named, before anything is fetched.
func TestJudgeOperation(t *testing.T) {
	e, project := judgeFixture(t)
	now := metav1.NewTime(time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC))
	denied := "[project-source-denied] Application/argocd/shop: Application \"shop\" uses source repository \"" + evil +
		"\", which AppProject \"team\" does not permit; use a repository listed in the project's spec.sourceRepos or add this one there"
	tests := []struct {
		name        string
		op          v1alpha1.SyncOperation
		wantAllowed bool
		// wantState is the operation state recorded; nil for none.
		wantState *v1alpha1.OperationState
		wantConds map[string]string
	}{
		{
			name:        "revision of a permitted repository",
			op:          v1alpha1.SyncOperation{Revision: "v1.2.0"},
			wantAllowed: true,
			wantConds:   map[string]string{},
		},
		{
			name: "source outside the project",
			op:   v1alpha1.SyncOperation{Source: &v1alpha1.ApplicationSource{RepoURL: evil, Path: "manifests", TargetRevision: "main"}},
			wantState: &v1alpha1.OperationState{
				Phase: v1alpha1.OperationFailed, Message: refusedByPolicy + ", nothing was applied:\n" + denied,
				StartedAt: now, FinishedAt: &now,
			},
			wantConds: map[string]string{
				v1alpha1.ApplicationConditionPolicyViolation: denied,
				v1alpha1.ApplicationConditionSyncError:       refusedByPolicy + ", nothing was applied:\n" + denied,
			},
		},
		{
			name: "one of the sources outside the project",
			op: v1alpha1.SyncOperation{Sources: []v1alpha1.ApplicationSource{
				{RepoURL: ours, Path: "manifests", TargetRevision: "main"},
				{RepoURL: evil, Path: "manifests", TargetRevision: "main"},
			}},
			wantState: &v1alpha1.OperationState{
				Phase: v1alpha1.OperationFailed, Message: refusedByPolicy + ", nothing was applied:\n" + denied,
				StartedAt: now, FinishedAt: &now,
			},
			wantConds: map[string]string{
				v1alpha1.ApplicationConditionPolicyViolation: denied,
				v1alpha1.ApplicationConditionSyncError:       refusedByPolicy + ", nothing was applied:\n" + denied,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := types.NamespacedName{Namespace: "argocd", Name: "shop"}
			r := &Reconciler{evaluator: e, metrics: metrics.NewMetrics(), opts: Options{Namespace: "argocd", Now: time.Now, CompareMaxAge: time.Hour},
				memos: map[types.NamespacedName]*memo{key: {}}, allowed: map[types.NamespacedName]string{}}
			op := &v1alpha1.Operation{Sync: tc.op.DeepCopy(), InitiatedBy: v1alpha1.OperationInitiator{Username: "mallory"}}
			app := &v1alpha1.Application{
				ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "argocd"},
				Spec: v1alpha1.ApplicationSpec{
					Project:     "team",
					Source:      &v1alpha1.ApplicationSource{RepoURL: ours, Path: "manifests", TargetRevision: "main"},
					Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "shop"},
				},
				Operation: op,
			}
			p := &pass{app: app, key: key, now: now}
			tg := &target{app: requestedApplication(app, op.Sync), project: project, op: op}
			allowed, judged, err := r.judgeBeforeFetch(t.Context(), p, tg)
			if err != nil {
				t.Fatal(err)
			}
			if allowed != tc.wantAllowed {
				t.Errorf("allowed = %v, want %v", allowed, tc.wantAllowed)
			}
			var wantState *v1alpha1.OperationState
			if tc.wantState != nil {
				wantState = tc.wantState.DeepCopy()
				wantState.Operation = *op
			}
			if diff := cmp.Diff(wantState, app.Status.OperationState); diff != "" {
				t.Errorf("operation state (-want +got):\n%s", diff)
			}
			conds := map[string]string{}
			for _, c := range conditionsAfter(judged, p.now) {
				conds[c.Type] = c.Message
			}
			if diff := cmp.Diff(tc.wantConds, conds); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if _, kept := r.memos[key]; kept != tc.wantAllowed {
				t.Errorf("memo kept = %v, want it forgotten only on a denial", kept)
			}
			if !tc.wantAllowed && (p.ranOp == nil || p.ranOp.InitiatedBy.Username != "mallory") {
				t.Errorf("ranOp = %+v, want the refused operation, to be cleared", p.ranOp)
			}
		})
	}
}

// conditionsAfter returns the conditions an outcome gives an Application
// without any.
func conditionsAfter(o outcome, now metav1.Time) []v1alpha1.ApplicationCondition {
	conds, _ := applyOutcomes(nil, []outcome{o}, now)
	return conds
}

// TestJudgeSpecBeforeFetch: without an operation, a spec source the project
// does not permit ends the pass before anything is fetched; other denials
// are left to the gate, which also lists what the Application renders.
func TestJudgeSpecBeforeFetch(t *testing.T) {
	e, project := judgeFixture(t)
	tests := []struct {
		name        string
		repo, ns    string
		wantAllowed bool
		wantConds   map[string]string
	}{
		{name: "permitted", repo: ours, ns: "shop", wantAllowed: true, wantConds: map[string]string{}},
		{
			name: "source outside the project", repo: evil, ns: "shop",
			wantConds: map[string]string{
				v1alpha1.ApplicationConditionPolicyViolation: "[project-source-denied] Application/argocd/shop: Application \"shop\" uses source repository \"" + evil +
					"\", which AppProject \"team\" does not permit; use a repository listed in the project's spec.sourceRepos or add this one there",
			},
		},
		{name: "destination outside the project is the gate's", repo: ours, ns: "elsewhere", wantAllowed: true, wantConds: map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := types.NamespacedName{Namespace: "argocd", Name: "shop"}
			r := &Reconciler{evaluator: e, metrics: metrics.NewMetrics(), opts: Options{Namespace: "argocd", Now: time.Now, CompareMaxAge: time.Hour},
				memos: map[types.NamespacedName]*memo{key: {}}, allowed: map[types.NamespacedName]string{}}
			app := &v1alpha1.Application{
				ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "argocd"},
				Spec: v1alpha1.ApplicationSpec{
					Project:     "team",
					Source:      &v1alpha1.ApplicationSource{RepoURL: tc.repo, Path: "manifests", TargetRevision: "main"},
					Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: tc.ns},
				},
			}
			p := &pass{app: app, key: key, now: metav1.Now()}
			allowed, judged, err := r.judgeBeforeFetch(t.Context(), p, &target{app: app, project: project})
			if err != nil {
				t.Fatal(err)
			}
			if allowed != tc.wantAllowed {
				t.Errorf("allowed = %v, want %v", allowed, tc.wantAllowed)
			}
			conds := map[string]string{}
			for _, c := range conditionsAfter(judged, p.now) {
				if c.Type == v1alpha1.ApplicationConditionPolicyViolation {
					conds[c.Type] = c.Message
				}
			}
			if diff := cmp.Diff(tc.wantConds, conds); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if app.Status.OperationState != nil {
				t.Errorf("operation state %+v recorded without an operation or automation", app.Status.OperationState)
			}
		})
	}
}
