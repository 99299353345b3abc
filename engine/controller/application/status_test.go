package application

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
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

// TestMergePatch checks that the field-by-field patch is the same merge
// patch a whole-document diff gives, and that applying it turns the old
// document into the new one.
func TestMergePatch(t *testing.T) {
	base := `{"metadata":{"name":"a","resourceVersion":"1","managedFields":[{"manager":"m"}],"annotations":{"x":"1","y":"2"}},` +
		`"spec":{"project":"p","destination":{"namespace":"n"}},` +
		`"status":{"reconciledAt":"2024-01-01T00:00:00Z","resources":[{"kind":"ConfigMap","name":"c"}],"health":{"status":"Healthy","message":"ok"},"sync":{"status":"Synced"}}}`
	tests := []struct {
		name, after string
		empty       bool
	}{
		{name: "equal", after: base, empty: true},
		{name: "timestamp", after: strings.Replace(base, "2024-01-01", "2024-01-02", 1)},
		{name: "removed nested field", after: strings.Replace(base, `,"message":"ok"`, "", 1)},
		{name: "removed top-level field", after: strings.Replace(base, `,"sync":{"status":"Synced"}`, "", 1)},
		{name: "annotation removed", after: strings.Replace(base, `,"y":"2"`, "", 1)},
		{name: "list changed", after: strings.Replace(base, `"name":"c"}]`, `"name":"c"},{"kind":"Service","name":"s"}]`, 1)},
		{name: "value became object", after: strings.Replace(base, `"project":"p"`, `"project":{"name":"p"}`, 1)},
		{name: "new top-level field", after: strings.Replace(base, `{"metadata"`, `{"operation":{"sync":{}},"metadata"`, 1)},
		{name: "escaped key added", after: strings.Replace(base, `"x":"1"`, `"x":"1","a\u003cb\"c":"2"`, 1)},
		{name: "string with brackets and quotes", after: strings.Replace(base, `"message":"ok"`, `"message":"}]{[\"\\"`, 1)},
		{name: "numbers and literals", after: strings.Replace(base, `"sync":{"status":"Synced"}`, `"sync":{"n":-1.5e3,"t":true,"f":false}`, 1)},
		{name: "spaces", after: "{ \"status\" : { \"reconciledAt\" : \"x\" } ,\n\"spec\":{}}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mergePatch([]byte(base), []byte(tc.after), applicationPatchDepth)
			if err != nil {
				t.Fatal(err)
			}
			if tc.empty {
				if got != nil {
					t.Fatalf("patch %s, want none", got)
				}
				return
			}
			want, err := jsonpatch.CreateMergePatch([]byte(base), []byte(tc.after))
			if err != nil {
				t.Fatal(err)
			}
			if !jsonpatch.Equal(got, want) {
				t.Errorf("patch\n got %s\nwant %s", got, want)
			}
			applied, err := jsonpatch.MergePatch([]byte(base), got)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonpatch.Equal(applied, []byte(tc.after)) {
				t.Errorf("applied patch gives %s, want %s", applied, tc.after)
			}
		})
	}
}

// TestMembers checks members against decoding into a map of raw values.
func TestMembers(t *testing.T) {
	for _, doc := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":{"b":[1,{"c":"}"}]},"d":"x\"y","e":null,"f":true,"g":-2.5e-3}`,
		`{"a\u003c\"b":"\\","c":[]}`, "{ \"a\" :\t[ 1 , 2 ] ,\n\"b\" : { } }", `{"a":1,"a":2}`,
	} {
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatal(err)
		}
		got, ok := members([]byte(doc))
		if !ok {
			t.Errorf("members(%s) is not an object", doc)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("members(%s) (-want +got):\n%s", doc, diff)
		}
	}
	for _, doc := range []string{`[]`, `"{}"`, `null`, `1`} {
		if _, ok := members([]byte(doc)); ok {
			t.Errorf("members(%s) is an object", doc)
		}
	}
}

func TestWithResourceVersion(t *testing.T) {
	for patch, want := range map[string]string{
		`{"status":{"a":1}}`:                 `{"metadata":{"resourceVersion":"7"},"status":{"a":1}}`,
		`{"metadata":{"labels":{"l":null}}}`: `{"metadata":{"labels":{"l":null},"resourceVersion":"7"}}`,
	} {
		got, err := withResourceVersion([]byte(patch), "7")
		if err != nil {
			t.Fatal(err)
		}
		if !jsonpatch.Equal(got, []byte(want)) {
			t.Errorf("withResourceVersion(%s) = %s, want %s", patch, got, want)
		}
	}
}
