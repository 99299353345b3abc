package policies

import (
	"fmt"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// compileFS parses and compiles the .rego files at the top of lib.
func compileFS(t testing.TB, lib fs.FS) *ast.Compiler {
	t.Helper()
	modules, err := loadFS(lib)
	if err != nil {
		t.Fatal(err)
	}
	c, err := compileModules(modules)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPureFunctions(t *testing.T) {
	c := compileFS(t, fstest.MapFS{"t.rego": {Data: []byte(`package t

k := 3

from_input := input.n

pure_direct(x) := x + k

pure_via_function(x) := pure_direct(x) * 2

pure_else(x) := 1 if x == 1 else := pure_direct(x)

reads_input(x) := x + input.n

reads_whole_input(x) := [x, input]

via_rule(x) := x + from_input

via_function(x) := reads_input(x) + 1

in_comprehension(x) := [y | some y in input.list; y > x]

one_impure_definition(x) := 1 if x == 1

one_impure_definition(x) := input.n if x == 2

impure_else(x) := 1 if x == 1 else := input.n

uses_with(x) := y if y := pure_direct(x) with data.t.k as 10

nondeterministic(x) := [x, time.now_ns()]
`)}})
	want := map[string]bool{
		"data.t.pure_direct":           true,
		"data.t.pure_via_function":     true,
		"data.t.pure_else":             true,
		"data.t.reads_input":           false,
		"data.t.reads_whole_input":     false,
		"data.t.via_rule":              false,
		"data.t.via_function":          false,
		"data.t.in_comprehension":      false,
		"data.t.one_impure_definition": false,
		"data.t.impure_else":           false,
		"data.t.uses_with":             false,
		"data.t.nondeterministic":      false,
	}
	if diff := cmp.Diff(want, pureFunctions(c)); diff != "" {
		t.Errorf("pureFunctions() mismatch (-want +got):\n%s", diff)
	}
}

func TestSharedFunctions(t *testing.T) {
	c := compileFS(t, fstest.MapFS{"t.rego": {Data: []byte(`package t

inner(x) := x + 1

outer(x) := inner(x) * 2

both(x) := x - 1

via_pure(x) := both(x)

impure(x) := both(x) + input.n

unused(x) := x

r := outer(1)

s := impure(2)
`)}})
	want := map[string]bool{
		"data.t.outer":  true, // a rule calls it
		"data.t.both":   true, // an impure function calls it
		"data.t.impure": false,
	}
	got := sharedFunctions(c)
	for path, shared := range want {
		if got[path] != shared {
			t.Errorf("sharedFunctions()[%s] = %v, want %v", path, got[path], shared)
		}
	}
	for _, path := range []string{"data.t.inner", "data.t.via_pure", "data.t.unused"} {
		if got[path] {
			t.Errorf("sharedFunctions() shares %s, which only pure functions (or nothing) call", path)
		}
	}
}

// cacheLibrary is a built-in library whose results would be wrong if the
// shared cache held an impure function's result, or a result computed under
// `with`.
var cacheLibrary = fstest.MapFS{
	"lib.rego": {Data: []byte(`package tollgate.lib

k := 3

# scaled is pure: its result depends on x (and the constant k) only.
scaled(x) := x * k

# labelled reads input: its result must not outlive the review.
labelled(x) := concat("/", [x, input.object.metadata.name])
`)},
	"check.rego": {Data: []byte(`package tollgate.builtin.check

import data.tollgate.lib

violation contains {"rule": "pure", "msg": sprintf("%d", [lib.scaled(input.object.spec.replicas)])} if {
	input.object.kind == "Deployment"
}

violation contains {"rule": "impure", "msg": lib.labelled("x")} if {
	input.object.kind == "Deployment"
}

violation contains {"rule": "with", "msg": sprintf("%d", [n])} if {
	input.object.kind == "Deployment"
	n := lib.scaled(input.object.spec.replicas) with data.tollgate.lib.k as 10
}
`)},
}

func TestSharedCacheKeepsEvaluationsApart(t *testing.T) {
	e, err := newEvaluator(t.Context(), Options{Builtin: true}, cacheLibrary)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]bool{"data.tollgate.lib.scaled": true}, e.shared.functions); diff != "" {
		t.Fatalf("shared functions mismatch (-want +got):\n%s", diff)
	}
	type finding struct{ Rule, Message string }
	for round := range 2 {
		for _, obj := range []struct {
			name     string
			replicas int64
		}{{"a", 1}, {"b", 1}, {"c", 2}} {
			d := deployment(obj.name, "nginx:1", nil)
			d["spec"].(map[string]any)["replicas"] = obj.replicas
			got, err := e.Evaluate(t.Context(), Input{Object: d})
			if err != nil {
				t.Fatal(err)
			}
			var findings []finding
			for _, v := range got.Violations {
				findings = append(findings, finding{v.Rule, v.Message})
			}
			want := []finding{
				{"impure", "x/" + obj.name},
				{"pure", fmt.Sprint(3 * obj.replicas)},
				{"with", fmt.Sprint(10 * obj.replicas)},
			}
			if diff := cmp.Diff(want, findings); diff != "" {
				t.Errorf("round %d, object %s: violations (-want +got):\n%s", round, obj.name, diff)
			}
		}
	}
	if e.shared.entries == 0 {
		t.Error("shared cache is empty after the reviews, want the pure results in it")
	}
	for _, key := range e.shared.values.Keys() {
		if !e.shared.holds(key) {
			t.Errorf("shared cache holds %v, which is not a pure function call", key)
		}
	}
}

func TestSharedCacheBounded(t *testing.T) {
	c := compileFS(t, fstest.MapFS{"t.rego": {Data: []byte("package t\n\nf(x) := x\n")}})
	s := newSharedCache(c, 2)
	f := ast.RefTerm(ast.MustParseRef("data.t.f").Copy()...)
	key := func(i int) ast.Ref { return ast.Ref{f, ast.IntNumberTerm(i)} }
	for i := range 3 {
		s.put(key(i), ast.IntNumberTerm(i))
	}
	if s.entries != 1 {
		t.Errorf("entries = %d after 3 puts with room for 2, want 1 (started over)", s.entries)
	}
	if v := s.get(key(2)); v == nil || !v.Equal(ast.IntNumberTerm(2)) {
		t.Errorf("get(f(2)) = %v, want 2", v)
	}
	if v := s.get(key(0)); v != nil {
		t.Errorf("get(f(0)) = %v after the cache started over, want nothing", v)
	}
}

func TestEvalCacheRouting(t *testing.T) {
	c := compileFS(t, fstest.MapFS{"t.rego": {Data: []byte(`package t

pure(x) := x

impure(x) := input.x

r := [pure(1), impure(2)]
`)}})
	shared := newSharedCache(c, 10)
	call := func(name string) ast.Ref {
		return ast.Ref{ast.RefTerm(ast.MustParseRef("data.t." + name)...), ast.StringTerm("a")}
	}
	rule := ast.MustParseRef("data.t.r")
	one := ast.IntNumberTerm(1)

	ec := newEvalCache(shared)
	ec.Put(call("pure"), one)
	ec.Put(call("impure"), one)
	ec.Put(rule, one)

	next := newEvalCache(shared)
	tests := []struct {
		name string
		ref  ast.Ref
		want *ast.Term
	}{
		{name: "pure call shared", ref: call("pure"), want: one},
		{name: "impure call not shared", ref: call("impure")},
		{name: "rule not shared", ref: rule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := next.Get(tt.ref); !got.Equal(tt.want) {
				t.Errorf("Get(%v) in the next evaluation = %v, want %v", tt.ref, got, tt.want)
			}
		})
	}

	// Under a `with` frame nothing is shared either way.
	next.Push()
	if got, _ := next.Get(call("pure")); got != nil {
		t.Errorf("Get(pure) under with = %v, want nothing", got)
	}
	next.Put(call("pure"), ast.IntNumberTerm(2))
	next.Pop()
	if got, _ := next.Get(call("pure")); !got.Equal(one) {
		t.Errorf("Get(pure) after with = %v, want the shared 1", got)
	}
	var _ topdown.VirtualCache = next
}

// TestSharedCacheConcurrentReviews checks that reviews sharing the cache
// concurrently decide as reviews that share nothing.
func TestSharedCacheConcurrentReviews(t *testing.T) {
	items := benchItems(300)
	// Some objects break the rules, so that both outcomes are cached.
	for i := 3; i < len(items); i += 7 {
		items[i].Object["metadata"].(map[string]any)["namespace"] = "argocd"
	}
	ins := BuildInputs(InputOptions{Point: PointSync, ImplicitDefaultProject: true}, items)
	shared, err := New(t.Context(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	got, err := shared.EvaluateAll(t.Context(), ins)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := New(t.Context(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	alone.shared = nil
	denied := 0
	for i, in := range ins {
		want, err := alone.Evaluate(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		if want.Denied() {
			denied++
		}
		if diff := cmp.Diff(want, got[i]); diff != "" {
			t.Errorf("input %d (%s): decision with the shared cache (-alone +shared):\n%s", i, describe(in.Object), diff)
		}
	}
	if denied == 0 || denied == len(ins) {
		t.Errorf("%d of %d inputs denied; want a mix", denied, len(ins))
	}
}
