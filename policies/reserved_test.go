package policies

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func fenced(app map[string]any, replica string) map[string]any {
	app["metadata"].(map[string]any)["annotations"] = map[string]any{AnnotationOperationReplica: replica}
	return app
}

// TestReservedAnnotation: an Application carrying the controller's
// operation fence is denied at every point, whether reviewed on its own or
// rendered by a parent, and neither the object's own exemption annotation
// nor a missing fence on other kinds changes that.
func TestReservedAnnotation(t *testing.T) {
	e, err := New(t.Context(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	parent := application("root", "default")
	exempting := fenced(application("sneaky", "default"), "tollgate-controller-0")
	exempting["metadata"].(map[string]any)["annotations"].(map[string]any)[ExemptAnnotation] = ruleReservedAnnotation
	cm := deployment("web", "nginx:1.27", map[string]any{AnnotationOperationReplica: "x"})
	for _, point := range []EnforcementPoint{PointCLI, PointSync, PointAdmission} {
		ins := BuildInputs(InputOptions{Point: point, ImplicitDefaultProject: true}, []Item{
			{Object: fenced(application("alone", "default"), "tollgate-controller-0")},
			{Object: fenced(application("child", "default"), "tollgate-controller-1"), Application: parent},
			{Object: exempting},
			{Object: application("plain", "default")},
			{Object: cm},
		})
		for i, want := range []bool{true, true, true, false, false} {
			dec, err := e.Evaluate(t.Context(), ins[i])
			if err != nil {
				t.Fatal(err)
			}
			var got []Violation
			for _, v := range dec.Violations {
				if v.Rule == ruleReservedAnnotation {
					got = append(got, v)
				}
			}
			if (len(got) == 1) != want || len(got) > 1 {
				t.Errorf("%s: item %d: reserved-annotation violations %v, want one: %v", point, i, got, want)
				continue
			}
			if want && (got[0].Severity != SeverityDeny || cmp.Diff([]any{"metadata", "annotations", AnnotationOperationReplica}, got[0].Path) != "") {
				t.Errorf("%s: item %d: %+v", point, i, got[0])
			}
		}
	}
}

func TestReservedAnnotationChanges(t *testing.T) {
	app := func(value string) map[string]any {
		a := application("a", "default")
		if value != "" {
			fenced(a, value)
		}
		return a
	}
	fence := []string{AnnotationOperationReplica}
	for _, tt := range []struct {
		name     string
		old, cur map[string]any
		want     []string
	}{
		{"create without", nil, app(""), nil},
		{"create with", nil, app("r0"), fence},
		{"unchanged", app("r0"), app("r0"), nil},
		{"changed", app("r0"), app("r1"), fence},
		{"removed", app("r0"), app(""), fence},
		{"added", app(""), app("r1"), fence},
		{"not an Application", nil, deployment("web", "nginx:1", map[string]any{AnnotationOperationReplica: "r0"}), nil},
	} {
		if diff := cmp.Diff(tt.want, ReservedAnnotationChanges(tt.old, tt.cur)); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tt.name, diff)
		}
	}
}
