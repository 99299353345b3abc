package policies

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"
)

// mustValue is ast.InterfaceToValue(x) or a failed test.
func mustValue(t *testing.T, x any) ast.Value {
	t.Helper()
	v, err := ast.InterfaceToValue(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDocumentCacheReuse(t *testing.T) {
	c := newDocumentCache(4)
	first, err := c.value(application("shop", "team"))
	if err != nil {
		t.Fatal(err)
	}
	// A fresh map with the same content, as the webhook reads per request.
	again := application("shop", "team")
	got, err := c.value(again)
	if err != nil {
		t.Fatal(err)
	}
	if got != first {
		t.Error("value() converted an unchanged document again, want the kept value")
	}
	if got.Compare(mustValue(t, again)) != 0 {
		t.Errorf("value() = %v, want %v", got, mustValue(t, again))
	}
}

// TestDocumentCacheNeverStale changes a document the cache holds, in place,
// in every way a caller might, and checks that the value is always that of
// the document as it is.
func TestDocumentCacheNeverStale(t *testing.T) {
	m := benchProject()
	spec := m["spec"].(map[string]any)
	changes := []struct {
		name   string
		change func()
	}{
		{name: "nested string", change: func() {
			spec["destinations"].([]any)[0].(map[string]any)["namespace"] = "kube-system"
		}},
		{name: "list element added", change: func() {
			spec["sourceRepos"] = append(spec["sourceRepos"].([]any), "https://other.example.com/*")
		}},
		{name: "list element removed", change: func() { spec["sourceRepos"] = []any{} }},
		{name: "key added", change: func() { spec["clusterResourceWhitelist"] = []any{map[string]any{"group": "*", "kind": "*"}} }},
		{name: "key removed", change: func() { delete(spec, "namespaceResourceWhitelist") }},
		{name: "number", change: func() { spec["n"] = int64(1) }},
		{name: "same number, other Go type", change: func() { spec["n"] = float64(1) }},
		{name: "other number", change: func() { spec["n"] = 1.5 }},
		{name: "bool", change: func() { spec["b"] = true }},
		{name: "bool flipped", change: func() { spec["b"] = false }},
		{name: "null", change: func() { spec["b"] = nil }},
		{name: "map to list", change: func() { m["metadata"].(map[string]any)["labels"] = []any{"a"} }},
		{name: "list to map", change: func() { m["metadata"].(map[string]any)["labels"] = map[string]any{"a": "b"} }},
		{name: "empty string", change: func() { m["metadata"].(map[string]any)["labels"] = map[string]any{"a": ""} }},
	}
	c := newDocumentCache(4)
	if _, err := c.value(m); err != nil {
		t.Fatal(err)
	}
	for _, ch := range changes {
		ch.change()
		got, err := c.value(m)
		if err != nil {
			t.Fatal(err)
		}
		if want := mustValue(t, m); got.Compare(want) != 0 || got.String() != want.String() {
			t.Errorf("after %s: value() = %v, want %v", ch.name, got, want)
		}
	}
}

func TestDocumentCacheKeys(t *testing.T) {
	c := newDocumentCache(8)
	docs := []map[string]any{
		application("shop", "team"),
		application("blog", "team"),
		appProject("shop", "argocd"), // the same name, another kind
		{"kind": "Application", "metadata": map[string]any{"name": "shop", "namespace": "team-a"}},
	}
	for round := range 2 {
		for i, d := range docs {
			got, err := c.value(d)
			if err != nil {
				t.Fatal(err)
			}
			if want := mustValue(t, d); got.Compare(want) != 0 {
				t.Errorf("round %d, document %d: value() = %v, want %v", round, i, got, want)
			}
		}
	}
	if len(c.entries) != len(docs) {
		t.Errorf("cache holds %d documents, want %d", len(c.entries), len(docs))
	}
}

func TestDocumentCacheSkips(t *testing.T) {
	c := newDocumentCache(8)
	for name, d := range map[string]map[string]any{
		"no name":         {"kind": "AppProject", "spec": map[string]any{}},
		"name not string": {"kind": "AppProject", "metadata": map[string]any{"name": 7}},
		"other Go types":  {"kind": "AppProject", "metadata": map[string]any{"name": "p"}, "spec": map[string]any{"sourceRepos": []string{"*"}}},
	} {
		got, err := c.value(d)
		if err != nil {
			t.Fatal(err)
		}
		if want := mustValue(t, d); got.Compare(want) != 0 {
			t.Errorf("%s: value() = %v, want %v", name, got, want)
		}
	}
	if len(c.entries) != 0 {
		t.Errorf("cache holds %d documents, want none", len(c.entries))
	}
	if _, err := c.value(map[string]any{"metadata": map[string]any{"name": "x"}, "bad": make(chan int)}); err == nil {
		t.Error("value() of a document that does not convert: no error")
	}
}

func TestDocumentCacheBounded(t *testing.T) {
	c := newDocumentCache(3)
	for i := range 10 {
		d := application(fmt.Sprintf("app-%d", i), "team")
		got, err := c.value(d)
		if err != nil {
			t.Fatal(err)
		}
		if want := mustValue(t, d); got.Compare(want) != 0 {
			t.Errorf("value(app-%d) = %v, want %v", i, got, want)
		}
		if len(c.entries) > 3 {
			t.Fatalf("cache holds %d documents, want at most 3", len(c.entries))
		}
	}
}

// TestDocumentCacheConcurrent has goroutines look up, change and replace
// documents of the same names at once (run it with -race).
func TestDocumentCacheConcurrent(t *testing.T) {
	c := newDocumentCache(4)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				d := application(fmt.Sprintf("app-%d", i%6), fmt.Sprintf("team-%d", (g+i)%3))
				got, err := c.value(d)
				if err != nil {
					t.Error(err)
					return
				}
				if want := mustValue(t, d); got.Compare(want) != 0 {
					t.Errorf("value() = %v, want %v", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestContextCache(t *testing.T) {
	c := newContextCache(nil)
	var contexts []Context
	for _, point := range []EnforcementPoint{PointCLI, PointAdmission, PointSync} {
		for _, ns := range []string{"", "argocd", "gitops"} {
			for _, flags := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				contexts = append(contexts, Context{EnforcementPoint: point, ArgoCDNamespace: ns, ClusterScoped: flags[0], ScaledByHPA: flags[1]})
			}
		}
	}
	for round := range 2 {
		for _, ctx := range contexts {
			got, err := c.value(ctx, "argocd")
			if err != nil {
				t.Fatal(err)
			}
			want, err := contextValue(ctx, "argocd", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Compare(want) != 0 {
				t.Errorf("round %d: value(%+v) = %v, want %v", round, ctx, got, want)
			}
		}
	}
	// "" and "argocd" are the same context once defaulted.
	if want := len(contexts) * 2 / 3; len(c.values) != want {
		t.Errorf("cache holds %d contexts, want %d", len(c.values), want)
	}

	apps := Context{EnforcementPoint: PointAdmission, ExistingApplications: []map[string]any{application("a", "team")}}
	before := len(c.values)
	got, err := c.value(apps, "argocd")
	if err != nil {
		t.Fatal(err)
	}
	want, err := contextValue(apps, "argocd", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Compare(want) != 0 || len(c.values) != before {
		t.Errorf("value() with existing Applications = %v (cache %d -> %d), want %v and nothing kept", got, before, len(c.values), want)
	}

	for i := range 3 * maxContexts {
		if _, err := c.value(Context{ArgoCDNamespace: fmt.Sprintf("ns-%d", i)}, "argocd"); err != nil {
			t.Fatal(err)
		}
		if len(c.values) > maxContexts {
			t.Fatalf("cache holds %d contexts, want at most %d", len(c.values), maxContexts)
		}
	}
}

// TestEvaluateSeesChangedDocuments reuses and changes an Application and an
// AppProject between evaluations, as callers may, and checks that the
// built-in rules always see them as they are.
func TestEvaluateSeesChangedDocuments(t *testing.T) {
	e, err := newEvaluator(t.Context(), Options{Builtin: true}, fakeLibrary)
	if err != nil {
		t.Fatal(err)
	}
	echo := map[string]any{"apiVersion": "example.com/v1", "kind": "Echo", "metadata": map[string]any{"name": "e"}}
	app := application("shop", "team")
	project := appProject("team", "argocd")
	in := Input{Object: echo, Application: app, Project: project, Context: Context{EnforcementPoint: PointSync, ArgoCDNamespace: "argocd"}}
	changes := []func(){
		func() {},
		func() { app["spec"].(map[string]any)["destination"].(map[string]any)["namespace"] = "kube-system" },
		func() { project["spec"].(map[string]any)["sourceRepos"] = []any{"*"} },
		func() { delete(app, "spec") },
		func() { project["metadata"].(map[string]any)["labels"] = map[string]any{"a": "b"} },
		func() { in.Context.ClusterScoped = true },
		func() { in.Context.ArgoCDNamespace = "gitops" },
	}
	for i, change := range changes {
		change()
		got, err := e.Evaluate(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Violations) != 1 || got.Violations[0].Rule != "echo" {
			t.Fatalf("change %d: Evaluate() = %+v, want one echo violation", i, got.Violations)
		}
		want := builtinInputJSON(t, in)
		if diff := cmp.Diff(want, jsonDecode(t, got.Violations[0].Message)); diff != "" {
			t.Errorf("change %d: built-in input (-want +got):\n%s", i, diff)
		}
	}
}
