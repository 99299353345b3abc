package policies

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"slices"
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
	modules, err := loadFS(lib)
	if err != nil {
		t.Fatal(err)
	}
	compiler, err := compileModules(modules)
	if err != nil {
		t.Fatal(err)
	}
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
	if qs.byKind["Pod"] != qs.byKind["Job"] {
		t.Error("Pod and Job have the same packages but separate queries")
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
	e, err := New(t.Context(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	sub, err := fs.Sub(library, libraryDir)
	if err != nil {
		t.Fatal(err)
	}
	modules, err := loadFS(sub)
	if err != nil {
		t.Fatal(err)
	}
	compiler, err := compileModules(modules)
	if err != nil {
		t.Fatal(err)
	}
	full, err := prepare(t.Context(), compiler, builtinQuery)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := New(t.Context(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	ref.builtin = &kindQueries{other: full}
	ref.shared = newSharedCache(compiler, defaultSharedCacheEntries)

	kinds := slices.Sorted(maps.Keys(e.builtin.byKind))
	if len(kinds) < 10 {
		t.Fatalf("the library's guards name %d kinds: %v", len(kinds), kinds)
	}
	ins := kindCorpus(t, append(kinds, "ConfigMap", "ClusterRole"))
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

// kindCorpus returns inputs that break every built-in rule, each object
// judged with and without an Application and relabelled with every kind in
// kinds.
func kindCorpus(t *testing.T, kinds []string) []Input {
	t.Helper()
	image := func(ref string) map[string]any {
		return map[string]any{"containers": []any{map[string]any{"name": "app", "image": ref}}}
	}
	var objects []map[string]any
	add := func(s string) { objects = append(objects, jsonDecode(t, s).(map[string]any)) }
	add(`{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "child", "namespace": "shop"},
		"spec": {"project": "missing", "source": {"repoURL": "https://elsewhere.example.com/x.git"},
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
	add(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "argocd"}, "data": {"a": "b"}}`)
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
				ctx := Context{EnforcementPoint: PointSync, ClusterScoped: scoped, ScaledByHPA: true}
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
	if testing.Verbose() {
		fmt.Printf("kind corpus: %d inputs\n", len(ins))
	}
	return ins
}
