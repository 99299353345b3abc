package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

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

func TestIsEmptyPatch(t *testing.T) {
	tests := []struct {
		patch string
		want  bool
	}{
		{`{}`, true},
		{`{"metadata":{"resourceVersion":"12"}}`, true},
		{`{"metadata":{"resourceVersion":"12","annotations":{"a":null}}}`, false},
		{`{"status":{"reconciledAt":"2024-01-01T00:00:00Z"}}`, false},
		{`not json`, false},
	}
	for _, tc := range tests {
		t.Run(tc.patch, func(t *testing.T) {
			if got := isEmptyPatch([]byte(tc.patch)); got != tc.want {
				t.Errorf("isEmptyPatch(%s) = %v, want %v", tc.patch, got, tc.want)
			}
		})
	}
}
