package applicationset

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// labelled is an Application of name with labels.
func labelled(name string, labels map[string]string) *v1alpha1.Application {
	a := &v1alpha1.Application{}
	a.Name, a.Labels = name, labels
	return a
}

// steps decodes a RollingSync's steps from YAML.
func steps(t *testing.T, doc string) []v1alpha1.ApplicationSetRolloutStep {
	t.Helper()
	var out []v1alpha1.ApplicationSetRolloutStep
	if err := yaml.UnmarshalStrict([]byte(doc), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRolloutSteps: the steps select Applications by their labels, every
// expression of a step must match, In and NotIn as Argo CD matches them
// (NotIn matches an absent label, and wins over an In of another
// expression), and what is wrong with the steps is reported with Argo CD's
// messages.
func TestRolloutSteps(t *testing.T) {
	apps := []*v1alpha1.Application{
		labelled("dev", map[string]string{"env": "dev"}),
		labelled("qa", map[string]string{"env": "qa", "region": "eu"}),
		labelled("prod-eu", map[string]string{"env": "prod", "region": "eu"}),
		labelled("prod-us", map[string]string{"env": "prod", "region": "us"}),
		labelled("bare", nil),
	}
	for name, tc := range map[string]struct {
		steps  string
		want   [][]string
		issues string
	}{
		"by environment": {
			steps: `[{matchExpressions: [{key: env, operator: In, values: [dev, qa]}]},
			         {matchExpressions: [{key: env, operator: In, values: [prod]}, {key: region, operator: NotIn, values: [us]}]},
			         {matchExpressions: [{key: region, operator: In, values: [us]}]}]`,
			want: [][]string{{"dev", "qa"}, {"prod-eu"}, {"prod-us"}},
		},
		"NotIn selects an absent label": {
			steps: `[{matchExpressions: [{key: env, operator: NotIn, values: [prod, qa]}]}]`,
			want:  [][]string{{"dev", "bare"}},
		},
		"no expression selects every Application": {
			steps: `[{}]`,
			want:  [][]string{{"dev", "qa", "prod-eu", "prod-us", "bare"}},
		},
		"an Application two steps select": {
			steps:  `[{matchExpressions: [{key: env, operator: In, values: [prod]}]}, {matchExpressions: [{key: region, operator: In, values: [us]}]}]`,
			want:   [][]string{{"prod-eu", "prod-us"}, {"prod-us"}},
			issues: "Application 'prod-us' is selected by multiple steps: (1-2)",
		},
		"an invalid operator": {
			steps:  `[{matchExpressions: [{key: env, operator: Exists}]}, {matchExpressions: [{key: env, operator: In, values: [dev]}]}]`,
			want:   [][]string{{"bare"}, {"dev"}},
			issues: "Step 1 has invalid matchExpression operators: Exists. Supported Operators are 'In' and 'NotIn'",
		},
		"an empty step": {
			steps:  `[{matchExpressions: [{key: env, operator: In, values: [staging]}]}, {matchExpressions: [{key: env, operator: In, values: [dev]}]}]`,
			want:   [][]string{nil, {"dev"}},
			issues: "Steps [1] have no applications matching their criteria",
		},
	} {
		t.Run(name, func(t *testing.T) {
			ro := newRollout(steps(t, tc.steps), apps)
			if diff := cmp.Diff(tc.want, ro.byStep); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if got := ro.issues.message(); got != tc.issues {
				t.Errorf("issues = %q, want %q", got, tc.issues)
			}
		})
	}
}

// TestRolloutMaxUpdate: maxUpdate bounds how many of a step's
// Applications are Pending or Progressing at once: a number, or a
// percentage of the step's Applications rounded down and at least one
// (but 0%); unset is all; an invalid value is reported and lets one
// through, as in Argo CD.
func TestRolloutMaxUpdate(t *testing.T) {
	now := metav1.NewTime(time.Unix(1000, 0))
	for name, tc := range map[string]struct {
		maxUpdate   *intstr.IntOrString
		progressing int // of the step's 5 Applications, the first ones
		wantPending int
		issues      string
	}{
		"unset is all":                   {nil, 0, 5, ""},
		"a number":                       {ptrIntStr(intstr.FromInt32(2)), 0, 2, ""},
		"a number, some already syncing": {ptrIntStr(intstr.FromInt32(2)), 1, 1, ""},
		"a number reached":               {ptrIntStr(intstr.FromInt32(2)), 2, 0, ""},
		"zero":                           {ptrIntStr(intstr.FromInt32(0)), 0, 0, ""},
		"a percentage rounds down":       {ptrIntStr(intstr.FromString("50%")), 0, 2, ""},
		"a small percentage is one":      {ptrIntStr(intstr.FromString("10%")), 0, 1, ""},
		"zero percent":                   {ptrIntStr(intstr.FromString("0%")), 0, 0, ""},
		"100%":                           {ptrIntStr(intstr.FromString("100%")), 0, 5, ""},
		"invalid":                        {ptrIntStr(intstr.FromString("half")), 0, 1, "Step 1 has an invalid maxUpdate value: half"},
	} {
		t.Run(name, func(t *testing.T) {
			var apps []*v1alpha1.Application
			var statuses []v1alpha1.ApplicationSetApplicationStatus
			for i, n := range []string{"a", "b", "c", "d", "e"} {
				apps = append(apps, labelled(n, map[string]string{"env": "prod"}))
				st := v1alpha1.ProgressiveSyncWaiting
				if i < tc.progressing {
					st = v1alpha1.ProgressiveSyncProgressing
				}
				statuses = append(statuses, v1alpha1.ApplicationSetApplicationStatus{Application: n, Status: st, Step: "1"})
			}
			ro := newRollout([]v1alpha1.ApplicationSetRolloutStep{{MaxUpdate: tc.maxUpdate}}, apps)
			ro.statuses = statuses
			ro.toSync = map[string]bool{"a": true, "b": true, "c": true, "d": true, "e": true}
			ro.promote(now)
			pending := len(ro.pending())
			if pending != tc.wantPending {
				t.Errorf("%d Pending, want %d: %+v", pending, tc.wantPending, ro.statuses)
			}
			if got := ro.issues.message(); got != tc.issues {
				t.Errorf("issues = %q, want %q", got, tc.issues)
			}
		})
	}
}

func ptrIntStr(v intstr.IntOrString) *intstr.IntOrString { return &v }

// appState is an Application's sync, health, revision and last operation
// for TestRolloutStatuses.
func appState(name string, labels map[string]string, sync v1alpha1.SyncStatusCode, health v1alpha1.HealthStatusCode, rev string, opStarted *time.Time, phase v1alpha1.OperationPhase) v1alpha1.Application {
	a := labelled(name, labels)
	a.Status.Sync = v1alpha1.SyncStatus{Status: sync, Revision: rev}
	a.Status.Health.Status = health
	if opStarted != nil {
		a.Status.OperationState = &v1alpha1.OperationState{Phase: phase, StartedAt: metav1.NewTime(*opStarted)}
		a.Status.ReconciledAt = &metav1.Time{Time: opStarted.Add(time.Second)}
	}
	return *a
}

// TestRolloutStatuses: a rollout of one dev and two prod Applications
// (prod with maxUpdate 1) pass after pass, as Argo CD moves them: dev
// Waiting -> Pending (its sync requested) -> Progressing (its sync
// started) -> Healthy, while prod waits; then one prod Application at a
// time; a new revision sets an Application Waiting again; the
// RolloutProgressing condition names the step in progress.
func TestRolloutStatuses(t *testing.T) {
	rs := steps(t, `[{matchExpressions: [{key: env, operator: In, values: [dev]}]},
	                {matchExpressions: [{key: env, operator: In, values: [prod]}], maxUpdate: 1}]`)
	dev, prod := map[string]string{"env": "dev"}, map[string]string{"env": "prod"}
	generated := []*v1alpha1.Application{labelled("dev", dev), labelled("prod-a", prod), labelled("prod-b", prod)}
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var prev []v1alpha1.ApplicationSetApplicationStatus
	pass := func(s int, live ...v1alpha1.Application) *rollout {
		t.Helper()
		ro := newRollout(rs, generated)
		now := metav1.NewTime(at(s))
		ro.updateStatuses(prev, live, func(*v1alpha1.Application) bool { return false }, now)
		ro.allowSync(live)
		ro.promote(now)
		prev = ro.statuses
		return ro
	}
	type state struct{ Status, Step, Message string }
	check := func(ro *rollout, want map[string]state, progressing string) {
		t.Helper()
		got := map[string]state{}
		for _, s := range ro.statuses {
			got[s.Application] = state{string(s.Status), s.Step, s.Message}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("statuses (-want +got):\n%s", diff)
		}
		c := ro.conditions()[1]
		if c.Type != v1alpha1.ApplicationSetConditionRolloutProgressing || c.Message != progressing {
			t.Errorf("RolloutProgressing %+v, want message %q", c, progressing)
		}
	}
	const outOf, synced, unknown = v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.SyncStatusCodeSynced, v1alpha1.SyncStatusCode("")
	const healthy, missing, progressingH = v1alpha1.HealthStatusHealthy, v1alpha1.HealthStatusMissing, v1alpha1.HealthStatusProgressing
	waiting := func(step string) state { return state{"Waiting", step, msgNoStatus} }

	// New Applications: dev's step may sync, prod's waits.
	ro := pass(1, appState("dev", dev, outOf, missing, "r1", nil, ""), appState("prod-a", prod, outOf, missing, "r1", nil, ""), appState("prod-b", prod, unknown, "", "", nil, ""))
	check(ro, map[string]state{"dev": {"Pending", "1", msgPending}, "prod-a": waiting("2"), "prod-b": waiting("2")}, "ApplicationSet is performing rollout of step 1")
	if p := ro.pending(); len(p) != 1 || p[0].Application != "dev" {
		t.Errorf("pending = %+v, want dev", p)
	}
	// dev's sync started (in the second it became Pending) and succeeded; its resources progress.
	ro = pass(2, appState("dev", dev, synced, progressingH, "r1", ptr.To(at(1)), v1alpha1.OperationSucceeded), appState("prod-a", prod, outOf, missing, "r1", nil, ""), appState("prod-b", prod, outOf, missing, "r1", nil, ""))
	check(ro, map[string]state{"dev": {"Progressing", "1", msgSyncSucceeded}, "prod-a": waiting("2"), "prod-b": {"Waiting", "2", msgRevision}}, "ApplicationSet is performing rollout of step 1")
	// dev is Healthy: the first prod Application becomes Pending, not the second.
	ro = pass(3, appState("dev", dev, synced, healthy, "r1", ptr.To(at(1)), v1alpha1.OperationSucceeded), appState("prod-a", prod, outOf, missing, "r1", nil, ""), appState("prod-b", prod, outOf, missing, "r1", nil, ""))
	check(ro, map[string]state{"dev": {"Healthy", "1", msgBecameHealthy}, "prod-a": {"Pending", "2", msgPending}, "prod-b": {"Waiting", "2", msgRevision}}, "ApplicationSet is performing rollout of step 2")
	// prod-a synced and healthy at once: Progressing first, then Healthy, then prod-b.
	ro = pass(4, appState("dev", dev, synced, healthy, "r1", ptr.To(at(1)), v1alpha1.OperationSucceeded), appState("prod-a", prod, synced, healthy, "r1", ptr.To(at(3)), v1alpha1.OperationSucceeded), appState("prod-b", prod, outOf, missing, "r1", nil, ""))
	check(ro, map[string]state{"dev": {"Healthy", "1", msgBecameHealthy}, "prod-a": {"Progressing", "2", msgSyncSucceeded}, "prod-b": {"Waiting", "2", msgRevision}}, "ApplicationSet is performing rollout of step 2")
	if !ro.again {
		t.Error("prod-a is Progressing, Synced and Healthy, and the next pass is not asked for at once")
	}
	ro = pass(5, appState("dev", dev, synced, healthy, "r1", ptr.To(at(1)), v1alpha1.OperationSucceeded), appState("prod-a", prod, synced, healthy, "r1", ptr.To(at(3)), v1alpha1.OperationSucceeded), appState("prod-b", prod, outOf, missing, "r1", nil, ""))
	check(ro, map[string]state{"dev": {"Healthy", "1", msgBecameHealthy}, "prod-a": {"Healthy", "2", msgBecameHealthy}, "prod-b": {"Pending", "2", msgPending}}, "ApplicationSet is performing rollout of step 2")
	// prod-b's sync failed: Progressing, not Healthy while OutOfSync.
	ro = pass(6, appState("dev", dev, synced, healthy, "r1", ptr.To(at(1)), v1alpha1.OperationSucceeded), appState("prod-a", prod, synced, healthy, "r1", ptr.To(at(3)), v1alpha1.OperationSucceeded), appState("prod-b", prod, outOf, missing, "r1", ptr.To(at(5)), v1alpha1.OperationFailed))
	check(ro, map[string]state{"dev": {"Healthy", "1", msgBecameHealthy}, "prod-a": {"Healthy", "2", msgBecameHealthy}, "prod-b": {"Progressing", "2", msgSyncCompleted}}, "ApplicationSet is performing rollout of step 2")
	ro = pass(7, appState("dev", dev, synced, healthy, "r1", ptr.To(at(1)), v1alpha1.OperationSucceeded), appState("prod-a", prod, synced, healthy, "r1", ptr.To(at(3)), v1alpha1.OperationSucceeded), appState("prod-b", prod, synced, healthy, "r1", ptr.To(at(6)), v1alpha1.OperationSucceeded))
	check(ro, map[string]state{"dev": {"Healthy", "1", msgBecameHealthy}, "prod-a": {"Healthy", "2", msgBecameHealthy}, "prod-b": {"Healthy", "2", msgBecameHealthy}}, msgRolloutComplete)
	// A new revision: dev Waiting, and at once Pending again; prod waits for it.
	ro = pass(8, appState("dev", dev, outOf, healthy, "r2", ptr.To(at(1)), v1alpha1.OperationSucceeded), appState("prod-a", prod, outOf, healthy, "r2", ptr.To(at(3)), v1alpha1.OperationSucceeded), appState("prod-b", prod, outOf, healthy, "r2", ptr.To(at(6)), v1alpha1.OperationSucceeded))
	check(ro, map[string]state{"dev": {"Pending", "1", msgPending}, "prod-a": {"Waiting", "2", msgRevision}, "prod-b": {"Waiting", "2", msgRevision}}, "ApplicationSet is performing rollout of step 1")
}

// TestDisableAutomated: automated sync is turned off (enabled: false) on
// the Applications of a RollingSync, and its prune kept for their syncs.
func TestDisableAutomated(t *testing.T) {
	for name, tc := range map[string]struct {
		syncPolicy, want string
		prune            bool
	}{
		"automated with prune": {`{automated: {prune: true}}`, `{automated: {prune: true, enabled: false}}`, true},
		"automated disabled":   {`{automated: {prune: true, enabled: false}}`, `{automated: {prune: true, enabled: false}}`, false},
		"no automated":         {`{syncOptions: [CreateNamespace=true]}`, `{syncOptions: [CreateNamespace=true]}`, false},
	} {
		t.Run(name, func(t *testing.T) {
			var sp, want map[string]any
			if err := yaml.Unmarshal([]byte(tc.syncPolicy), &sp); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			app := map[string]any{"spec": map[string]any{"syncPolicy": sp}}
			if prune := disableAutomated(app); prune != tc.prune {
				t.Errorf("prune = %v, want %v", prune, tc.prune)
			}
			if diff := cmp.Diff(want, sp); diff != "" {
				t.Errorf("syncPolicy (-want +got):\n%s", diff)
			}
		})
	}
}
