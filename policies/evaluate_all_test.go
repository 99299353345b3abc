package policies

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"
)

func TestEvaluateAllOrder(t *testing.T) {
	dir := writePolicies(t, map[string]string{"main.rego": `package main

deny contains sprintf("deployment %s", [input.metadata.name]) if input.kind == "Deployment"

warn contains sprintf("configmap %s", [input.metadata.name]) if input.kind == "ConfigMap"
`})
	var calls atomic.Int64
	count := func(Input) []Violation {
		calls.Add(1)
		return nil
	}
	e, err := newEvaluator(t.Context(), Options{PolicyDirs: []string{dir}, Checks: []Check{count}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	ins := make([]Input, n)
	want := make([]Decision, n)
	for i := range ins {
		name := fmt.Sprintf("obj-%03d", i)
		if i%3 == 0 {
			ins[i] = Input{Object: object("v1", "ConfigMap", "shop", name)}
			want[i] = Decision{Violations: []Violation{{
				Rule: "main", Severity: SeverityWarn, Message: "configmap " + name,
				Object: ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: name},
			}}}
		} else {
			ins[i] = Input{Object: deployment(name, "nginx:1", nil)}
			want[i] = Decision{Violations: []Violation{{
				Rule: "main", Severity: SeverityDeny, Message: "deployment " + name, Object: deploymentRef(name),
			}}}
		}
	}
	got, err := e.EvaluateAll(t.Context(), ins)
	if err != nil {
		t.Fatalf("EvaluateAll() error = %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EvaluateAll() mismatch (-want +got):\n%s", diff)
	}
	if calls.Load() != n {
		t.Errorf("checks ran %d times, want %d", calls.Load(), n)
	}

	empty, err := e.EvaluateAll(t.Context(), nil)
	if err != nil || len(empty) != 0 {
		t.Errorf("EvaluateAll(nil) = %v, %v; want no decisions", empty, err)
	}
}

func TestEvaluateAllFirstError(t *testing.T) {
	dir := writePolicies(t, map[string]string{"main.rego": `package main

deny contains {"no": "msg"} if input.metadata.name == "broken"
`})
	e, err := newEvaluator(t.Context(), Options{PolicyDirs: []string{dir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ins := make([]Input, 50)
	for i := range ins {
		ins[i] = Input{Object: deployment(fmt.Sprintf("ok-%d", i), "nginx:1", nil)}
	}
	ins[37] = Input{Object: deployment("broken", "nginx:1", nil)}
	got, err := e.EvaluateAll(t.Context(), ins)
	if err == nil {
		t.Fatalf("EvaluateAll() = %d decisions, want an error", len(got))
	}
	if want := "input 37: evaluate policies for Deployment/broken: "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("EvaluateAll() error = %q, want prefix %q", err, want)
	}
}

// TestEvaluatorConcurrentUse shares one Evaluator between goroutines that
// call Evaluate and EvaluateAll at once; run with -race.
func TestEvaluatorConcurrentUse(t *testing.T) {
	dir := writePolicies(t, map[string]string{"main.rego": `package main

deny contains input.metadata.name if true
`})
	e, err := newEvaluator(t.Context(), Options{Builtin: true, PolicyDirs: []string{dir}}, fakeLibrary)
	if err != nil {
		t.Fatal(err)
	}
	ins := []Input{
		{Object: deployment("a", "nginx:latest", nil)},
		{Object: deployment("b", "nginx:1", nil)},
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for range 20 {
				if g%2 == 0 {
					ds, err := e.EvaluateAll(t.Context(), ins)
					if err != nil {
						errs <- err
						return
					}
					if len(ds[0].Violations) != 2 || len(ds[1].Violations) != 1 {
						errs <- fmt.Errorf("EvaluateAll() = %+v", ds)
						return
					}
					continue
				}
				d, err := e.Evaluate(t.Context(), ins[1])
				if err != nil {
					errs <- err
					return
				}
				if len(d.Violations) != 1 || d.Violations[0].Message != "b" {
					errs <- fmt.Errorf("Evaluate() = %+v", d)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestSharedValues(t *testing.T) {
	app := application("shop", "team")
	project := appProject("team", "argocd")
	lone := application("blog", "team")
	ins := []Input{
		{Object: deployment("a", "nginx:1", nil), Application: app, Project: project},
		{Object: deployment("b", "nginx:1", nil), Application: app, Project: project},
		{Object: lone, Application: lone, Project: project},
		{Object: deployment("c", "nginx:1", nil)},
	}
	cache, err := sharedValues(ins)
	if err != nil {
		t.Fatal(err)
	}
	if len(cache) != 2 {
		t.Errorf("sharedValues() cached %d maps, want 2 (the shared Application and AppProject)", len(cache))
	}
	for _, m := range []map[string]any{app, project} {
		if _, ok := cache[mapKey(m)]; !ok {
			t.Errorf("sharedValues() did not cache %s", describe(m))
		}
	}
	for _, m := range []map[string]any{app, project, lone} {
		got, err := cache.value(m)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ast.InterfaceToValue(m)
		if err != nil {
			t.Fatal(err)
		}
		if got.Compare(want) != 0 {
			t.Errorf("value(%s) = %v, want %v", describe(m), got, want)
		}
	}
}

// TestEvaluateAllKeepsNoDocuments: EvaluateAll converts what its inputs
// share for the call only; Evaluate keeps the documents it converted.
func TestEvaluateAllKeepsNoDocuments(t *testing.T) {
	e, err := New(t.Context(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	app := application("shop", "team")
	project := appProject("team", "argocd")
	lone := application("blog", "team")
	ins := []Input{
		{Object: deployment("a", "nginx:1", nil), Application: app, Project: project},
		{Object: deployment("b", "nginx:1", nil), Application: app, Project: project},
		{Object: deployment("c", "nginx:1", nil), Application: lone, Project: project},
	}
	if _, err := e.EvaluateAll(t.Context(), ins); err != nil {
		t.Fatal(err)
	}
	if n := len(e.inputs.docs.entries); n != 0 {
		t.Errorf("EvaluateAll kept %d documents, want none", n)
	}
	if _, err := e.Evaluate(t.Context(), ins[2]); err != nil {
		t.Fatal(err)
	}
	if n := len(e.inputs.docs.entries); n != 2 {
		t.Errorf("Evaluate kept %d documents, want 2 (its Application and AppProject)", n)
	}
}

func TestEvaluateConversionErrors(t *testing.T) {
	e, err := New(t.Context(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	bad := application("shop", "team")
	bad["spec"].(map[string]any)["broken"] = make(chan int)
	t.Run("shared application", func(t *testing.T) {
		ins := []Input{
			{Object: deployment("a", "nginx:1", nil), Application: bad},
			{Object: deployment("b", "nginx:1", nil), Application: bad},
		}
		_, err := e.EvaluateAll(t.Context(), ins)
		if err == nil || !strings.HasPrefix(err.Error(), "evaluate inputs: input 0: convert Application/shop: ") {
			t.Errorf("EvaluateAll() error = %v, want one naming input 0 and the Application", err)
		}
	})
	t.Run("single project", func(t *testing.T) {
		_, err := e.Evaluate(t.Context(), Input{Object: deployment("a", "nginx:1", nil), Project: bad})
		if err == nil || !strings.HasPrefix(err.Error(), "evaluate policies for Deployment/a: convert project: ") {
			t.Errorf("Evaluate() error = %v, want one naming the object and the project", err)
		}
	})
}
