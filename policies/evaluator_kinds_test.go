package policies

import (
	"encoding/json"
	"io/fs"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestPackageKinds(t *testing.T) {
	lib := fstest.MapFS{
		"equal.rego": {Data: []byte(`package tollgate.builtin.equal

violation contains {"rule": "a", "msg": "m"} if {
	input.object.apiVersion == "v1"
	input.object.kind == "Secret"
}

violation contains {"rule": "a", "msg": "m"} if "ConfigMap" == input.object.kind
`)},
		"member.rego": {Data: []byte(`package tollgate.builtin.member

violation contains {"rule": "b", "msg": "m"} if {
	input.object.kind in {"Pod", "Job"}
}

violation contains {"rule": "b", "msg": "m"} if {
	kind := input.object.kind
	kind in ["CronJob"]
}
`)},
		"negated.rego": {Data: []byte(`package tollgate.builtin.negated

violation contains {"rule": "c", "msg": "m"} if not input.object.kind == "Pod"
`)},
		"with.rego": {Data: []byte(`package tollgate.builtin.with

violation contains {"rule": "d", "msg": "m"} if {
	input.object.kind == "Pod" with input as {"object": {"kind": "Pod"}}
}
`)},
		"mixed.rego": {Data: []byte(`package tollgate.builtin.mixed

violation contains {"rule": "e", "msg": "m"} if input.object.kind == "Pod"

violation contains {"rule": "e", "msg": "m"} if input.application.kind == "Application"
`)},
		"other_kind.rego": {Data: []byte(`package tollgate.builtin.other_kind

violation contains {"rule": "f", "msg": "m"} if input.object.kind in {"Pod", 1}
`)},
		"no_violation.rego": {Data: []byte(`package tollgate.builtin.no_violation

deny contains "x" if true
`)},
	}
	compiler := compileFS(t, lib)
	want := map[string][]string{
		"equal":      {"ConfigMap", "Secret"},
		"member":     {"CronJob", "Job", "Pod"},
		"negated":    nil,
		"with":       nil,
		"mixed":      nil,
		"other_kind": nil,
	}
	if diff := cmp.Diff(want, packageKinds(compiler)); diff != "" {
		t.Errorf("packageKinds() mismatch (-want +got):\n%s", diff)
	}

	qs, err := prepareKindQueries(t.Context(), compiler)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(qs.byKind)); !slices.Equal(got, []string{"ConfigMap", "CronJob", "Job", "Pod", "Secret"}) {
		t.Errorf("queries for kinds %v", got)
	}
	if qs.byKind["Pod"].query != qs.byKind["Job"].query {
		t.Error("Pod and Job have the same packages but separately prepared queries")
	}
	for _, obj := range []map[string]any{nil, {"kind": "Deployment"}, {"kind": []any{"Pod"}}} {
		if qs.forObject(obj) != qs.other {
			t.Errorf("forObject(%v) is not the query for other kinds", obj)
		}
	}
}

// TestKindQueriesMatchFullQuery judges a corpus with the per-kind queries
// and with the query over every package: the decisions must be equal. Each
// object of the corpus is also judged relabelled with every kind the
// library's guards name, so a guard that wrongly excludes a package for a
// kind shows up whatever shape of object that package reports on.
func TestKindQueriesMatchFullQuery(t *testing.T) {
	e, ref := kindAndFullEvaluators(t)
	kinds := slices.Sorted(maps.Keys(e.builtin.byKind))
	if len(kinds) < 10 {
		t.Fatalf("the library's guards name %d kinds: %v", len(kinds), kinds)
	}
	objects := kindObjects(t)
	ins := kindCorpus(t, objects, append(kinds, "ConfigMap", "ClusterRole"))
	ins = append(ins, mutants(t, objects, kinds, 6000)...)
	ins = append(ins, applicationLookalikes(t)...)
	t.Logf("%d inputs", len(ins))
	seen := map[string]bool{}
	for _, in := range ins {
		got, err := e.Evaluate(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ref.Evaluate(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			js, _ := json.Marshal(in)
			t.Errorf("decision on %s differs (-full +per kind):\n%s", js, diff)
		}
		for _, v := range want.Violations {
			seen[v.Rule] = true
		}
	}
	// The corpus must exercise every rule, not only pass.
	for _, r := range builtinRules {
		if !seen[r.ID] {
			t.Errorf("no input of the corpus breaks %s", r.ID)
		}
	}
}

// FuzzPrunedMatchesWhole is TestKindQueriesMatchFullQuery for any object:
// the per-kind query on the pruned object and the query over every package
// on the whole object must agree.
func FuzzPrunedMatchesWhole(f *testing.F) {
	e, ref := kindAndFullEvaluators(f)
	for _, obj := range kindObjects(f) {
		doc, err := json.Marshal(obj)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(doc, true, false)
	}
	app, project := benchApplication(), benchProject()
	f.Fuzz(func(t *testing.T, doc []byte, withApplication, clusterScoped bool) {
		var obj map[string]any
		if json.Unmarshal(doc, &obj) != nil || obj == nil {
			return
		}
		in := Input{Object: obj, Context: Context{EnforcementPoint: PointSync, ClusterScoped: clusterScoped, ScaledByHPA: true}}
		if withApplication {
			in.Application, in.Project = app, project
		}
		got, err := e.Evaluate(t.Context(), in)
		want, wantErr := ref.Evaluate(t.Context(), in)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("Evaluate() error = %v, with the full query %v", err, wantErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("decision on %s differs (-full +per kind):\n%s", doc, diff)
		}
	})
}

// kindAndFullEvaluators returns the built-in Evaluator and one that runs
// the query over every package on the whole object.
func kindAndFullEvaluators(tb testing.TB) (e, full *Evaluator) {
	tb.Helper()
	e, err := New(tb.Context(), DefaultOptions())
	if err != nil {
		tb.Fatal(err)
	}
	sub, err := fs.Sub(library, libraryDir)
	if err != nil {
		tb.Fatal(err)
	}
	compiler := compileFS(tb, sub)
	pq, err := prepare(tb.Context(), compiler, builtinQuery)
	if err != nil {
		tb.Fatal(err)
	}
	full, err = New(tb.Context(), DefaultOptions())
	if err != nil {
		tb.Fatal(err)
	}
	full.builtin = &kindQueries{other: &kindQuery{query: pq}}
	full.shared = newSharedCache(compiler, defaultSharedCacheEntries)
	return e, full
}

// kindObjects returns objects that break every built-in rule.
func kindObjects(t testing.TB) []map[string]any {
	t.Helper()
	image := func(ref string) map[string]any {
		return map[string]any{"containers": []any{map[string]any{"name": "app", "image": ref}}}
	}
	var objects []map[string]any
	add := func(s string) { objects = append(objects, jsonDecode(t, s).(map[string]any)) }
	add(`{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "child", "namespace": "shop",
		"annotations": {"tollgate.dev/operation-replica": "tollgate-controller-0"}},
		"spec": {"project": "missing", "source": {"repoURL": "https://elsewhere.example.com/x.git", "path": "../other-team"},
		"destination": {"server": "https://kubernetes.default.svc", "name": "in-cluster", "namespace": "argocd"}}}`)
	add(`{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "plain", "namespace": "argocd"},
		"spec": {"source": {"repoURL": "https://git.example.com/shop.git"}, "destination": {"server": "https://other", "namespace": "kube-system"}}}`)
	add(`{"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject", "metadata": {"name": "open", "namespace": "shop"},
		"spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "argo*"}]}}`)
	add(`{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": "argocd"}, "data": {"password": "aHVudGVyMg=="}, "stringData": {"user": "x"}}`)
	add(`{"apiVersion": "bitnami.com/v1alpha1", "kind": "SealedSecret", "metadata": {"name": "db"}, "spec": {"encryptedData": {"password": ""}}}`)
	add(`{"apiVersion": "external-secrets.io/v1beta1", "kind": "ExternalSecret", "metadata": {"name": "db"}, "spec": {"data": [{"secretKey": "a"}]}}`)
	add(`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"a": "Yg=="}}]}`)
	add(`{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "admin-all"}, "rules": []}`)
	add(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "argocd",
		"annotations": {"tollgate.dev/exempt": "project-resource-denied, no-latest-tag"}}, "data": {"a": "b"}}`)
	for _, path := range [][]string{{"spec"}, {"template", "spec"}, {"spec", "template", "spec"}, {"spec", "jobTemplate", "spec", "template", "spec"}} {
		for _, apiVersion := range []string{"v1", "apps/v1", "extensions/v1beta1", "batch/v1", "example.com/v1"} {
			obj := map[string]any{
				"apiVersion": apiVersion, "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "namespace": "argocd"},
			}
			at := obj
			for _, key := range path[:len(path)-1] {
				next := map[string]any{}
				at[key] = next
				at = next
			}
			at[path[len(path)-1]] = image("nginx")
			if path[0] == "spec" {
				obj["spec"].(map[string]any)["replicas"] = int64(3)
			}
			objects = append(objects, obj)
		}
	}
	return append(objects, benchDeployment("web"), benchApplication(), benchProject())
}

// kindCorpus returns inputs judging each object with and without an
// Application, relabelled with every kind in kinds.
func kindCorpus(t *testing.T, objects []map[string]any, kinds []string) []Input {
	t.Helper()
	app := benchApplication()
	project := benchProject()
	var ins []Input
	for _, obj := range objects {
		for _, kind := range append(kinds, "", "Other") {
			o := jsonRoundTrip(t, obj).(map[string]any)
			if kind != "" {
				o["kind"] = kind
			} else {
				delete(o, "kind")
			}
			for _, scoped := range []bool{false, true} {
				ctx := Context{EnforcementPoint: PointSync, ClusterScoped: scoped, ScaledByHPA: true, ReservedAnnotations: ReservedAnnotationsOf(o)}
				ins = append(ins,
					Input{Object: o, Application: app, Project: project, Context: ctx},
					Input{Object: o, Context: ctx},
				)
				if o["kind"] == "Application" {
					ins = append(ins, Input{Object: o, Application: o, Project: project, Context: ctx})
				}
			}
		}
	}
	ins = append(ins, Input{Context: Context{EnforcementPoint: PointCLI}})
	return ins
}

// mutants returns n inputs whose objects are objects changed at random: a
// key deleted, added or given another value of another type, the kind
// relabelled, one to three times each.
func mutants(t *testing.T, objects []map[string]any, kinds []string, n int) []Input {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	keys := []string{"image", "name", "namespace", "containers", "initContainers", "kind", "apiVersion",
		"metadata", "spec", "template", "data", "stringData", "destination", "replicas", "x"}
	values := []func() any{
		func() any { return "" },
		func() any { return "nginx" },
		func() any { return "nginx:latest" },
		func() any { return "nginx@sha256:" + strings.Repeat("ab", 32) },
		func() any { return "argocd" },
		func() any { return int64(3) },
		func() any { return 3.5 },
		func() any { return true },
		func() any { return nil },
		func() any { return map[string]any{} },
		func() any { return []any{} },
		func() any { return map[string]any{"name": "x", "image": "y:latest", "namespace": "argocd"} },
		func() any { return []any{map[string]any{"image": "a"}, "b"} },
	}
	var ins []Input
	app, project := benchApplication(), benchProject()
	for range n {
		o := jsonRoundTrip(t, objects[rng.IntN(len(objects))]).(map[string]any)
		for range 1 + rng.IntN(3) {
			var nodes []any
			collectNodes(o, &nodes)
			switch node := nodes[rng.IntN(len(nodes))].(type) {
			case map[string]any:
				k := keys[rng.IntN(len(keys))]
				if rng.IntN(4) == 0 {
					delete(node, k)
				} else {
					node[k] = values[rng.IntN(len(values))]()
				}
			case []any:
				if len(node) > 0 {
					node[rng.IntN(len(node))] = values[rng.IntN(len(values))]()
				}
			}
		}
		if rng.IntN(3) == 0 {
			o["kind"] = kinds[rng.IntN(len(kinds))]
		}
		in := Input{Object: o, Context: Context{EnforcementPoint: PointSync, ClusterScoped: rng.IntN(2) == 0, ScaledByHPA: rng.IntN(2) == 0}}
		if rng.IntN(4) > 0 {
			in.Application, in.Project = app, project
		}
		ins = append(ins, in)
	}
	return ins
}

// collectNodes appends the objects and arrays in x.
func collectNodes(x any, nodes *[]any) {
	switch x := x.(type) {
	case map[string]any:
		*nodes = append(*nodes, x)
		for _, v := range x {
			collectNodes(v, nodes)
		}
	case []any:
		*nodes = append(*nodes, x)
		for _, v := range x {
			collectNodes(v, nodes)
		}
	}
}

// applicationLookalikes are Applications compared with the Application of
// their review: an equal copy, and copies with fields no rule reads, whose
// pruned form equals the Application while the whole one does not.
func applicationLookalikes(t *testing.T) []Input {
	t.Helper()
	app := jsonDecode(t, `{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": {"name": "root", "namespace": "argocd"},
		"spec": {"project": "team", "destination": {"server": "https://kubernetes.default.svc", "namespace": "argocd"}}}`).(map[string]any)
	project := benchProject()
	var ins []Input
	for _, extra := range []map[string]any{nil, {"status": map[string]any{"sync": "Synced"}}, {"operation": int64(3)}} {
		o := jsonRoundTrip(t, app).(map[string]any)
		maps.Copy(o, extra)
		ins = append(ins,
			Input{Object: o, Application: app, Project: project, Context: Context{EnforcementPoint: PointSync}},
			Input{Object: o, Application: o, Project: project, Context: Context{EnforcementPoint: PointSync}},
		)
	}
	return ins
}
