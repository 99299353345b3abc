package policies

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fakeLibrary is a stand-in built-in library, so the built-in pipeline is
// tested independently of the real rules.
var fakeLibrary = fstest.MapFS{
	"lib.rego": {Data: []byte(`package tollgate.lib

containers(obj) := obj.spec.template.spec.containers
`)},
	"latest.rego": {Data: []byte(`package tollgate.builtin.latest

import data.tollgate.lib

violation contains {"rule": "no-latest-tag", "msg": msg, "path": ["spec", "template", "spec", "containers", i, "image"]} if {
	some i, c in lib.containers(input.object)
	endswith(c.image, ":latest")
	msg := sprintf("container %s uses the latest tag", [c.name])
}
`)},
	"project.rego": {Data: []byte(`package tollgate.builtin.project

violation contains {"rule": "default-project", "msg": "uses the default project"} if {
	input.project.metadata.name == "default"
}

violation contains {"rule": "app-namespace", "msg": sprintf("must be in %s", [input.context.argocdNamespace])} if {
	input.object.kind == "Application"
	input.object.metadata.namespace != input.context.argocdNamespace
}
`)},
	"echo.rego": {Data: []byte(`package tollgate.builtin.echo

violation contains {"rule": "echo", "msg": json.marshal(input)} if input.object.kind == "Echo"
`)},
	"latest_test.rego": {Data: []byte(`package tollgate.builtin.latest

this test file is not valid rego and must not be compiled
`)},
	"README.md": {Data: []byte("not a policy")},
}

func TestBuiltinPipeline(t *testing.T) {
	app := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Application",
		"metadata":   map[string]any{"name": "shop", "namespace": "team-a"},
		"spec":       map[string]any{"project": "default"},
	}
	appRef := ObjectRef{APIVersion: "argoproj.io/v1alpha1", Kind: "Application", Namespace: "team-a", Name: "shop"}
	tests := []struct {
		name string
		cfg  Config
		in   Input
		want []Violation
	}{
		{
			name: "latest tag with path",
			in:   Input{Object: deployment("web", "nginx:latest", nil)},
			want: []Violation{{
				Rule: "no-latest-tag", Severity: SeverityDeny, Message: "container app uses the latest tag",
				Path: []any{"spec", "template", "spec", "containers", 0, "image"}, Object: deploymentRef("web"),
			}},
		},
		{
			name: "application with default project and configured namespace",
			cfg:  Config{ArgoCDNamespace: "gitops"},
			in:   Input{Object: app, Application: app, Project: DefaultProject()},
			want: []Violation{
				{Rule: "app-namespace", Severity: SeverityDeny, Message: "must be in gitops", Object: appRef},
				{Rule: "default-project", Severity: SeverityWarn, Message: "uses the default project", Object: appRef},
			},
		},
		{
			name: "context namespace wins over config",
			cfg:  Config{ArgoCDNamespace: "gitops"},
			in:   Input{Object: app, Context: Context{ArgoCDNamespace: "argo"}},
			want: []Violation{
				{Rule: "app-namespace", Severity: SeverityDeny, Message: "must be in argo", Object: appRef},
			},
		},
		{
			name: "overrides apply to built-in rules",
			cfg:  Config{Rules: RuleSeverities{"default-project": SeverityOff, "app-namespace": SeverityWarn}},
			in:   Input{Object: app, Application: app, Project: DefaultProject()},
			want: []Violation{
				{Rule: "app-namespace", Severity: SeverityWarn, Message: "must be in argocd", Object: appRef},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := newEvaluator(t.Context(), Options{Builtin: true, Config: tt.cfg}, fakeLibrary)
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			got, err := e.Evaluate(t.Context(), tt.in)
			if err != nil {
				t.Fatalf("Evaluate() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got.Violations, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Evaluate() violations mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuiltinInputIsInputJSON checks that the ast.Value built for the
// built-in rules is exactly the JSON encoding of Input.
func TestBuiltinInputIsInputJSON(t *testing.T) {
	e, err := newEvaluator(t.Context(), Options{Builtin: true}, fakeLibrary)
	if err != nil {
		t.Fatal(err)
	}
	echo := map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Echo",
		"metadata":   map[string]any{"name": "e", "labels": map[string]any{"a": "b"}},
		"spec": map[string]any{
			"int": int64(3), "float": 1.5, "bool": false, "null": nil,
			"list": []any{"x", int64(-2), map[string]any{}}, "empty": []any{},
		},
	}
	app := map[string]any{"kind": "Application", "metadata": map[string]any{"name": "a"}}
	tests := []struct {
		name string
		in   Input
	}{
		{name: "object only", in: Input{Object: echo, Context: Context{ArgoCDNamespace: "argocd"}}},
		{name: "everything", in: Input{
			Object:      echo,
			Application: app,
			Project:     DefaultProject(),
			Context: Context{
				EnforcementPoint:     PointAdmission,
				ArgoCDNamespace:      "gitops",
				ClusterScoped:        true,
				ScaledByHPA:          true,
				ExistingApplications: []map[string]any{app, app},
			},
		}},
		{name: "empty maps are omitted like omitempty", in: Input{
			Object:      echo,
			Application: map[string]any{},
			Context:     Context{EnforcementPoint: PointSync, ArgoCDNamespace: "argocd", ExistingApplications: []map[string]any{}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Evaluate(t.Context(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			var echoed []string
			for _, v := range got.Violations {
				if v.Rule == "echo" {
					echoed = append(echoed, v.Message)
				}
			}
			if len(echoed) != 1 {
				t.Fatalf("Evaluate() = %+v, want one echo violation", got.Violations)
			}
			want := builtinInputJSON(t, tt.in)
			if diff := cmp.Diff(want, jsonDecode(t, echoed[0])); diff != "" {
				t.Errorf("built-in input mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuiltinResultErrors(t *testing.T) {
	tests := []struct {
		name    string
		rego    string
		wantErr string
	}{
		{
			name:    "missing rule",
			rego:    "package tollgate.builtin.broken\n\nviolation contains {\"msg\": \"m\"} if true\n",
			wantErr: "evaluate policies for Deployment/web: built-in policy tollgate.builtin.broken: violation has no string rule",
		},
		{
			name:    "string violation",
			rego:    "package tollgate.builtin.broken\n\nviolation contains \"m\" if true\n",
			wantErr: "built-in policy tollgate.builtin.broken: violation is a string",
		},
		{
			name:    "bad path element",
			rego:    "package tollgate.builtin.broken\n\nviolation contains {\"rule\": \"x\", \"msg\": \"m\", \"path\": [1.5]} if true\n",
			wantErr: "rule x: path[0]: 1.5 is not an index",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib := fstest.MapFS{"broken.rego": {Data: []byte(tt.rego)}}
			e, err := newEvaluator(t.Context(), Options{Builtin: true}, lib)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Evaluate(t.Context(), Input{Object: deployment("web", "nginx:1", nil)})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Evaluate() error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestBuiltinTimeout checks that the built-in query stops at the
// evaluator's timeout (OPA watches the context through a topdown.Cancel).
func TestBuiltinTimeout(t *testing.T) {
	lib := fstest.MapFS{"slow.rego": {Data: []byte(`package tollgate.builtin.slow

violation contains {"rule": "slow", "msg": "never"} if {
	some i in numbers.range(1, 100000000)
	i < 0
}
`)}}
	const timeout = 100 * time.Millisecond
	e, err := newEvaluator(t.Context(), Options{Builtin: true, Timeout: timeout}, lib)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = e.Evaluate(t.Context(), Input{Object: deployment("web", "nginx:1", nil)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Evaluate() error = %v, want errors.Is DeadlineExceeded", err)
	}
	// Generous bound: the point is that it returns, not how fast.
	if elapsed := time.Since(start); elapsed > 20*timeout {
		t.Errorf("Evaluate() took %s with a %s timeout", elapsed, timeout)
	}
}

func TestBuiltinCompileError(t *testing.T) {
	lib := fstest.MapFS{"bad.rego": {Data: []byte("package tollgate.builtin.bad\n\nviolation contains x if {\n\tx := nope(1)\n}\n")}}
	_, err := newEvaluator(t.Context(), Options{Builtin: true}, lib)
	if err == nil || !strings.Contains(err.Error(), "library/bad.rego:4") {
		t.Fatalf("New() error = %v, want one naming library/bad.rego:4", err)
	}
}

// TestEmbeddedLibrary checks the real built-in rules: they compile, and a
// Deployment running nginx:latest violates no-latest-tag.
func TestEmbeddedLibrary(t *testing.T) {
	e, err := New(t.Context(), DefaultOptions())
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	in := BuildInputs(InputOptions{Point: PointCLI}, []Item{{Object: deployment("web", "nginx:latest", nil)}})[0]
	got, err := e.Evaluate(t.Context(), in)
	if err != nil {
		t.Fatalf("Evaluate() error = %v", err)
	}
	var rules []string
	for _, v := range got.Violations {
		rules = append(rules, v.Rule)
		if v.Rule == "no-latest-tag" && v.Severity != SeverityDeny {
			t.Errorf("no-latest-tag severity = %s, want deny", v.Severity)
		}
	}
	if !strings.Contains(strings.Join(rules, ","), "no-latest-tag") {
		t.Errorf("Evaluate() rules = %v, want no-latest-tag", rules)
	}
}

// TestRulesTable checks that Rules is sorted, complete and a copy.
func TestRulesTable(t *testing.T) {
	got := Rules()
	want := map[string]Severity{
		"no-latest-tag": SeverityDeny, "no-plaintext-secret": SeverityDeny, "no-argocd-destination": SeverityDeny,
		"project-source-denied": SeverityDeny, "project-destination-denied": SeverityDeny,
		"destination-server-and-name": SeverityDeny, "project-resource-denied": SeverityDeny,
		"project-not-found": SeverityDeny, "app-namespace": SeverityDeny,
		"missing-resources-finalizer": SeverityWarn, "default-project": SeverityWarn, "hpa-replicas-conflict": SeverityWarn,
		"exemption-not-allowed": SeverityDeny, "protected-namespace": SeverityDeny, "reserved-annotation": SeverityDeny,
		"source-path-outside-repo": SeverityDeny,
	}
	wantBoundary := []string{
		"app-namespace", "destination-server-and-name", "exemption-not-allowed", "no-argocd-destination",
		"project-destination-denied", "project-not-found", "project-resource-denied", "project-source-denied",
		"protected-namespace", "reserved-annotation", "source-path-outside-repo",
	}
	gotSev := map[string]Severity{}
	var gotBoundary []string
	for i, r := range got {
		gotSev[r.ID] = r.Severity
		if r.Boundary {
			gotBoundary = append(gotBoundary, r.ID)
		}
		if i > 0 && got[i-1].ID >= r.ID {
			t.Errorf("Rules() not sorted at %d: %s >= %s", i, got[i-1].ID, r.ID)
		}
		if r.Description == "" {
			t.Errorf("rule %s has no description", r.ID)
		}
		if d, ok := builtinRule(r.ID); !ok || d != r {
			t.Errorf("builtinRule(%s) = %+v, %v", r.ID, d, ok)
		}
	}
	if diff := cmp.Diff(want, gotSev); diff != "" {
		t.Errorf("Rules() severities mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantBoundary, gotBoundary); diff != "" {
		t.Errorf("Rules() boundary rules mismatch (-want +got):\n%s", diff)
	}
	got[0].ID = "changed"
	if Rules()[0].ID == "changed" {
		t.Error("Rules() returned the shared table")
	}
}

// jsonRoundTrip returns v as generic decoded JSON.
func jsonRoundTrip(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return jsonDecode(t, string(b))
}

// jsonDecode decodes a JSON document.
func jsonDecode(t testing.TB, s string) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return out
}
