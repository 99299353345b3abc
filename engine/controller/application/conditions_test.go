package application

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestApplyOutcomes: the outcomes of a pass's steps in, the conditions
// out; who clears what is the clears table's.
func TestApplyOutcomes(t *testing.T) {
	old := metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC))
	const (
		invalidSpec = v1alpha1.ApplicationConditionInvalidSpecError
		comparison  = v1alpha1.ApplicationConditionComparisonError
		violation   = v1alpha1.ApplicationConditionPolicyViolation
		syncError   = v1alpha1.ApplicationConditionSyncError
		hooks       = v1alpha1.ApplicationConditionUnknownHookWarning
		excluded    = v1alpha1.ApplicationConditionExcludedResourceWarning
		shared      = v1alpha1.ApplicationConditionSharedResourceWarning
		orphaned    = v1alpha1.ApplicationConditionOrphanedResourceWarning
		deletion    = v1alpha1.ApplicationConditionDeletionError
	)
	refused := refusedByPolicy + ", nothing was applied:\n[rule] Deployment/shop/web: no"
	blocked := blockedByWindow + "deny window 0 * * * * (1h)"
	cond := func(typ, msg string, at metav1.Time) v1alpha1.ApplicationCondition {
		return v1alpha1.ApplicationCondition{Type: typ, Message: msg, LastTransitionTime: &at}
	}
	tests := []struct {
		name        string
		conds       []v1alpha1.ApplicationCondition
		outs        []outcome
		want        []v1alpha1.ApplicationCondition
		wantChanged []string
	}{
		{
			name:  "the zero outcome changes nothing",
			conds: []v1alpha1.ApplicationCondition{cond(syncError, "boom", old)},
			outs:  []outcome{{}},
			want:  []v1alpha1.ApplicationCondition{cond(syncError, "boom", old)},
		},
		{
			name:  "a valid spec clears InvalidSpecError",
			conds: []v1alpha1.ApplicationCondition{cond(invalidSpec, "no sources", old), cond(orphaned, "x", old)},
			outs:  []outcome{{step: stepSpec}},
			want:  []v1alpha1.ApplicationCondition{cond(orphaned, "x", old)},
		},
		{
			name:        "a spec found invalid after its destination and sources stays invalid",
			outs:        []outcome{{step: stepSpec}, raise(stepSpec, invalidSpec, "cluster not permitted")},
			want:        []v1alpha1.ApplicationCondition{cond(invalidSpec, "cluster not permitted", now)},
			wantChanged: []string{invalidSpec},
		},
		{
			name: "a failure raises ComparisonError and clears nothing",
			conds: []v1alpha1.ApplicationCondition{
				cond(violation, "v", old), cond(shared, "s", old), cond(hooks, "h", old), cond(invalidSpec, "i", old),
			},
			outs: []outcome{failed(errors.New("repository unreachable"))},
			want: []v1alpha1.ApplicationCondition{
				cond(comparison, "repository unreachable", now), cond(invalidSpec, "i", old),
				cond(violation, "v", old), cond(shared, "s", old), cond(hooks, "h", old),
			},
			wantChanged: []string{comparison},
		},
		{
			name:  "a comparison clears ComparisonError and SharedResourceWarning",
			conds: []v1alpha1.ApplicationCondition{cond(comparison, "git down", old), cond(shared, "s", old)},
			outs:  []outcome{{step: stepCompared}},
		},
		{
			name:        "a comparison raises SharedResourceWarning",
			conds:       []v1alpha1.ApplicationCondition{cond(comparison, "git down", old)},
			outs:        []outcome{raise(stepCompared, shared, "s")},
			want:        []v1alpha1.ApplicationCondition{cond(shared, "s", now)},
			wantChanged: []string{shared},
		},
		{
			name:        "a failure after the comparison raises ComparisonError again",
			conds:       []v1alpha1.ApplicationCondition{cond(comparison, "git down", old)},
			outs:        []outcome{{step: stepCompared}, failed(errors.New("build: bad object"))},
			want:        []v1alpha1.ApplicationCondition{cond(comparison, "build: bad object", now)},
			wantChanged: []string{comparison},
		},
		{
			name:  "built objects raise one warning and clear the other",
			conds: []v1alpha1.ApplicationCondition{cond(hooks, "h", old), cond(excluded, "e", old)},
			outs:  []outcome{raise(stepBuilt, excluded, "e")},
			want:  []v1alpha1.ApplicationCondition{cond(excluded, "e", old)},
		},
		{
			name:        "a denial raises PolicyViolation and SyncError",
			outs:        []outcome{{step: stepGate, raised: map[string]string{violation: "[rule] no", syncError: refused}}},
			want:        []v1alpha1.ApplicationCondition{cond(violation, "[rule] no", now), cond(syncError, refused, now)},
			wantChanged: []string{violation, syncError},
		},
		{
			name:  "the gate allowing ends its refusal",
			conds: []v1alpha1.ApplicationCondition{cond(violation, "[rule] no", old), cond(syncError, refused, old)},
			outs:  []outcome{{step: stepGate}},
		},
		{
			name:  "the gate allowing leaves another step's SyncError",
			conds: []v1alpha1.ApplicationCondition{cond(violation, "[rule] no", old), cond(syncError, "sync failed: boom", old)},
			outs:  []outcome{{step: stepGate}},
			want:  []v1alpha1.ApplicationCondition{cond(syncError, "sync failed: boom", old)},
		},
		{
			name:  "a prefix rule looks at the conditions read, not at an earlier outcome",
			conds: []v1alpha1.ApplicationCondition{cond(syncError, refused, old)},
			outs:  []outcome{raise(stepRefused, syncError, "only sync operations are supported"), {step: stepGate}},
		},
		{
			name:        "an operation refused before the gate allows keeps its SyncError",
			outs:        []outcome{raise(stepRefused, syncError, "only sync operations are supported"), {step: stepGate}},
			want:        []v1alpha1.ApplicationCondition{cond(syncError, "only sync operations are supported", now)},
			wantChanged: []string{syncError},
		},
		{
			name:  "windows allowing end their block",
			conds: []v1alpha1.ApplicationCondition{cond(syncError, blocked, old)},
			outs:  []outcome{{step: stepWindows}},
		},
		{
			name:  "windows allowing leave another step's SyncError",
			conds: []v1alpha1.ApplicationCondition{cond(syncError, "sync failed: boom", old)},
			outs:  []outcome{{step: stepWindows}},
			want:  []v1alpha1.ApplicationCondition{cond(syncError, "sync failed: boom", old)},
		},
		{
			name:        "windows blocking raise SyncError",
			conds:       []v1alpha1.ApplicationCondition{cond(syncError, "sync failed: boom", old)},
			outs:        []outcome{raise(stepWindows, syncError, blocked)},
			want:        []v1alpha1.ApplicationCondition{cond(syncError, blocked, now)},
			wantChanged: []string{syncError},
		},
		{
			name:  "a sync that succeeds clears any SyncError",
			conds: []v1alpha1.ApplicationCondition{cond(syncError, "sync failed: boom", old)},
			outs:  []outcome{{step: stepWindows}, {step: stepSync}},
		},
		{
			name:        "a sync that fails overrides what the windows cleared",
			conds:       []v1alpha1.ApplicationCondition{cond(syncError, blocked, old)},
			outs:        []outcome{{step: stepWindows}, raise(stepSync, syncError, "sync failed: boom")},
			want:        []v1alpha1.ApplicationCondition{cond(syncError, "sync failed: boom", now)},
			wantChanged: []string{syncError},
		},
		{
			name:        "a stuck deletion raises DeletionError",
			conds:       []v1alpha1.ApplicationCondition{cond(deletion, "first", old), cond(syncError, "sync failed: boom", old)},
			outs:        []outcome{raise(stepDeletion, deletion, "second")},
			want:        []v1alpha1.ApplicationCondition{cond(deletion, "second", now), cond(syncError, "sync failed: boom", old)},
			wantChanged: []string{deletion},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := applyOutcomes(tc.conds, tc.outs, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantChanged, changed); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConditionEditsApply(t *testing.T) {
	old := metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC))
	cond := func(typ, msg string, at metav1.Time) v1alpha1.ApplicationCondition {
		return v1alpha1.ApplicationCondition{Type: typ, Message: msg, LastTransitionTime: &at}
	}
	tests := []struct {
		name        string
		conds       []v1alpha1.ApplicationCondition
		edits       func(conditionEdits)
		want        []v1alpha1.ApplicationCondition
		wantChanged []string
	}{
		{
			name:  "same message keeps its transition time",
			conds: []v1alpha1.ApplicationCondition{cond("SyncError", "boom", old)},
			edits: func(e conditionEdits) { e.set("SyncError", "boom") },
			want:  []v1alpha1.ApplicationCondition{cond("SyncError", "boom", old)},
		},
		{
			name:        "new message is a transition",
			conds:       []v1alpha1.ApplicationCondition{cond("SyncError", "boom", old)},
			edits:       func(e conditionEdits) { e.set("SyncError", "bang") },
			want:        []v1alpha1.ApplicationCondition{cond("SyncError", "bang", now)},
			wantChanged: []string{"SyncError"},
		},
		{
			name:  "clear removes, untouched types stay, result sorted",
			conds: []v1alpha1.ApplicationCondition{cond("SyncError", "boom", old), cond("OrphanedResourceWarning", "x", old)},
			edits: func(e conditionEdits) {
				e.clear("SyncError")
				e.set("ComparisonError", "git down")
				e.clear("InvalidSpecError")
			},
			want:        []v1alpha1.ApplicationCondition{cond("ComparisonError", "git down", now), cond("OrphanedResourceWarning", "x", old)},
			wantChanged: []string{"ComparisonError"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := conditionEdits{}
			tc.edits(e)
			got, changed := e.apply(tc.conds, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantChanged, changed); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConditionMessageTruncated(t *testing.T) {
	e := conditionEdits{}
	e.set("PolicyViolation", strings.Repeat("x", maxConditionMessage+10))
	got := *e["PolicyViolation"]
	if len(got) > maxConditionMessage+32 || !strings.HasSuffix(got, "(truncated)") {
		t.Errorf("message of %d bytes not truncated: ...%s", len(got), got[len(got)-20:])
	}
}
