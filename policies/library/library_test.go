// Package library_test runs the Rego unit tests of the built-in policies
// (every *_test.rego beside them) and checks the contract the policies
// evaluator relies on: package layout, the query
// data.tollgate.builtin[_].violation[v], the shape of each violation and
// opa fmt formatting.
package library_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/format"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/tester"
)

var update = flag.Bool("update", false, "rewrite the .rego files in opa fmt form")

// violationQuery is the query the policies evaluator runs.
const violationQuery = "data.tollgate.builtin[_].violation[v]"

// ruleIDs are the ids the built-in rules emit; the evaluator's severity
// table is keyed by them.
var ruleIDs = []string{
	"app-namespace",
	"default-project",
	"destination-server-and-name",
	"hpa-replicas-conflict",
	"missing-resources-finalizer",
	"no-argocd-destination",
	"no-latest-tag",
	"no-plaintext-secret",
	"project-destination-denied",
	"project-not-found",
	"project-resource-denied",
	"project-source-denied",
}

// regoFiles returns the .rego files of this directory, tests or not.
func regoFiles(t testing.TB, tests bool) []string {
	t.Helper()
	all, err := filepath.Glob("*.rego")
	if err != nil {
		t.Fatalf("list rego files: %v", err)
	}
	var out []string
	for _, f := range all {
		if strings.HasSuffix(f, "_test.rego") == tests {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatalf("list rego files: none found (tests=%v)", tests)
	}
	return out
}

// onlyRego is a loader filter that keeps .rego files and directories.
func onlyRego(_ string, info fs.FileInfo, _ int) bool {
	return !info.IsDir() && filepath.Ext(info.Name()) != ".rego"
}

func TestRegoUnitTests(t *testing.T) {
	modules, store, err := tester.Load([]string{"."}, onlyRego)
	if err != nil {
		t.Fatalf("load rego: %v", err)
	}
	compiler := ast.NewCompiler().
		WithCapabilities(ast.CapabilitiesForThisVersion()).
		WithStrict(true).
		WithEnablePrintStatements(true)
	ch, err := tester.NewRunner().
		SetCompiler(compiler).
		SetStore(store).
		SetModules(modules).
		CapturePrintOutput(true).
		RaiseBuiltinErrors(true).
		SetTimeout(time.Minute).
		RunTests(t.Context(), nil)
	if err != nil {
		t.Fatalf("run rego tests: %v", err)
	}
	var results []*tester.Result
	for r := range ch {
		results = append(results, r)
	}
	if len(results) == 0 {
		t.Fatal("run rego tests: no test_ rules found")
	}
	sort.Slice(results, func(i, j int) bool {
		if results[i].Package != results[j].Package {
			return results[i].Package < results[j].Package
		}
		return results[i].Name < results[j].Name
	})
	for _, r := range results {
		t.Run(strings.TrimPrefix(r.Package, "data.")+"."+r.Name, func(t *testing.T) {
			switch {
			case r.Error != nil:
				t.Errorf("%s: error: %v\n%s", r.Location, r.Error, r.Output)
			case r.Skip:
				t.Errorf("%s: skipped (todo_test_); built-in rules ship with every test enabled", r.Location)
			case r.Fail:
				t.Errorf("%s: failed%s\n%s", r.Location, failedCases(r), r.Output)
			}
		})
	}
}

// failedCases lists the failed cases of a parameterized test (test_x[case]).
func failedCases(r *tester.Result) string {
	var names []string
	for path, sr := range r.SubResults.Iter {
		if sr.Fail && len(sr.SubResults) == 0 {
			names = append(names, strings.Join(path, "/"))
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return " in cases " + strings.Join(names, ", ")
}

func TestPackageLayout(t *testing.T) {
	for _, file := range regoFiles(t, false) {
		t.Run(file, func(t *testing.T) {
			mod := parse(t, file)
			pkg := strings.TrimPrefix(mod.Package.Path.String(), "data.")
			base := strings.TrimSuffix(file, ".rego")
			want := "tollgate.builtin." + base
			if strings.HasPrefix(base, "lib") {
				want = "tollgate.lib"
			}
			if pkg != want {
				t.Errorf("%s declares package %s, want %s", file, pkg, want)
			}
			testFile := base + "_test.rego"
			if _, err := os.Stat(testFile); err != nil {
				t.Errorf("%s has no tests beside it: %v", file, err)
				return
			}
			testPkg := strings.TrimPrefix(parse(t, testFile).Package.Path.String(), "data.")
			if testPkg != want+"_test" {
				t.Errorf("%s declares package %s, want %s_test", testFile, testPkg, want)
			}
		})
	}
}

func TestRegoFormatted(t *testing.T) {
	for _, file := range append(regoFiles(t, false), regoFiles(t, true)...) {
		t.Run(file, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("read %s: %v", file, err)
			}
			got, err := format.SourceWithOpts(file, src, format.Opts{RegoVersion: ast.RegoV1})
			if err != nil {
				t.Fatalf("format %s: %v", file, err)
			}
			if string(got) == string(src) {
				return
			}
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatalf("write %s: %v", file, err)
				}
				return
			}
			t.Errorf("%s is not in opa fmt form; run go test ./policies/library -run TestRegoFormatted -update (-src +fmt):\n%s",
				file, cmp.Diff(string(src), string(got)))
		})
	}
}

func parse(t *testing.T, file string) *ast.Module {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	mod, err := ast.ParseModuleWithOpts(file, string(src), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	return mod
}

// prepare compiles the policies, without their tests, as the evaluator
// does, and prepares the violation query. With strict, a builtin error
// (a type error in a rule) fails the evaluation instead of making an
// expression undefined.
func prepare(tb testing.TB, strict bool) rego.PreparedEvalQuery {
	tb.Helper()
	opts := []func(*rego.Rego){rego.Query(violationQuery), rego.StrictBuiltinErrors(strict)}
	for _, file := range regoFiles(tb, false) {
		src, err := os.ReadFile(file)
		if err != nil {
			tb.Fatalf("read %s: %v", file, err)
		}
		opts = append(opts, rego.Module(file, string(src)))
	}
	q, err := rego.New(opts...).PrepareForEval(tb.Context())
	if err != nil {
		tb.Fatalf("prepare %s: %v", violationQuery, err)
	}
	return q
}

// finding is a violation with its path spelled as a JSON path string.
type finding struct {
	Rule string
	Path string
}

// evaluate runs the violation query on the JSON input and checks the shape
// of every violation.
func evaluate(t *testing.T, q rego.PreparedEvalQuery, input string) []finding {
	t.Helper()
	var in map[string]any
	if err := json.Unmarshal([]byte(input), &in); err != nil {
		t.Fatalf("decode input: %v", err)
	}
	rs, err := q.Eval(t.Context(), rego.EvalInput(in))
	if err != nil {
		t.Fatalf("eval %s: %v", violationQuery, err)
	}
	got := []finding{}
	for _, r := range rs {
		raw, err := json.Marshal(r.Bindings["v"])
		if err != nil {
			t.Fatalf("encode violation: %v", err)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw, &keys); err != nil {
			t.Fatalf("violation %s is not an object: %v", raw, err)
		}
		for k := range keys {
			if k != "rule" && k != "msg" && k != "path" {
				t.Errorf("violation %s has key %q; want only rule, msg and path", raw, k)
			}
		}
		var v struct {
			Rule string `json:"rule"`
			Msg  string `json:"msg"`
			Path []any  `json:"path"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("decode violation %s: %v", raw, err)
		}
		if !slices.Contains(ruleIDs, v.Rule) {
			t.Errorf("violation %s has unknown rule id %q", raw, v.Rule)
		}
		if v.Msg == "" || strings.ContainsAny(v.Msg, "\n\r") || !strings.Contains(v.Msg, "; ") {
			t.Errorf("violation %s: message must be one non-empty line saying what is wrong, then \"; \" and how to fix it", raw)
		}
		got = append(got, finding{Rule: v.Rule, Path: jsonPath(t, v.Path)})
	}
	sort.Slice(got, func(i, j int) bool {
		if got[i].Rule != got[j].Rule {
			return got[i].Rule < got[j].Rule
		}
		return got[i].Path < got[j].Path
	})
	return got
}

// jsonPath spells a violation path as spec.containers[0].image.
func jsonPath(t *testing.T, path []any) string {
	t.Helper()
	var b strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		case float64:
			if p != float64(int(p)) || p < 0 {
				t.Errorf("path %v has index %v; want a non-negative integer", path, p)
			}
			fmt.Fprintf(&b, "[%d]", int(p))
		default:
			t.Errorf("path %v has element %v of type %T; want string keys and integer indexes", path, p, p)
		}
	}
	return b.String()
}

// Fixtures for the contract test and the benchmark, as the Go side would
// pass them (see policies.Input).
const (
	ctxCLI   = `"context": {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false}`
	appShop  = `{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "shop", "namespace": "argocd", "finalizers": ["resources-finalizer.argocd.argoproj.io"]}, "spec": {"project": "team-a", "source": {"repoURL": "https://github.com/org/shop.git", "path": "deploy", "targetRevision": "main"}, "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"}}}`
	projTeam = `{"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject", "metadata": {"name": "team-a", "namespace": "argocd"}, "spec": {"sourceRepos": ["https://github.com/org/*"], "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "shop"}, {"server": "*", "namespace": "shop-*"}], "namespaceResourceBlacklist": [{"group": "", "kind": "ResourceQuota"}], "clusterResourceWhitelist": [{"group": "", "kind": "Namespace"}]}}`
	projAll  = `{"metadata": {"name": "default"}, "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}], "clusterResourceWhitelist": [{"group": "*", "kind": "*"}]}}`
	deploy   = `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"initContainers": [{"name": "migrate", "image": "ghcr.io/org/shop-migrate:1.4.2"}], "containers": [{"name": "web", "image": "ghcr.io/org/shop:1.4.2", "ports": [{"containerPort": 8080}], "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}}}, {"name": "proxy", "image": "envoyproxy/envoy:v1.31.0@sha256:2a3c2b0d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5"}]}}}}`
)

func TestViolationContract(t *testing.T) {
	q := prepare(t, true)
	tests := []struct {
		name  string
		input string
		want  []finding
	}{
		{
			name:  "clean deployment of an application",
			input: `{"object": ` + deploy + `, "application": ` + appShop + `, "project": ` + projTeam + `, ` + ctxCLI + `}`,
			want:  []finding{},
		},
		{
			name: "deployment with problems",
			input: `{"object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "argocd"}, "spec": {"replicas": 2, "template": {"spec": {"initContainers": [{"name": "setup", "image": "localhost:5000/setup"}], "containers": [{"name": "web", "image": "nginx:1.27"}]}}}},
				"application": ` + appShop + `, "project": ` + projTeam + `,
				"context": {"enforcementPoint": "sync", "argocdNamespace": "argocd", "clusterScoped": false, "scaledByHPA": true}}`,
			want: []finding{
				{Rule: "hpa-replicas-conflict", Path: "spec.replicas"},
				{Rule: "no-argocd-destination", Path: "metadata.namespace"},
				{Rule: "no-latest-tag", Path: "spec.template.spec.initContainers[0].image"},
				{Rule: "project-destination-denied", Path: "metadata.namespace"},
			},
		},
		{
			name: "application in the default project",
			input: `{"object": {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "shop", "namespace": "team-a"}, "spec": {"source": {"repoURL": "https://github.com/org/shop"}, "destination": {"server": "https://kubernetes.default.svc", "name": "in-cluster", "namespace": "argocd"}}},
				"project": ` + projAll + `, ` + ctxCLI + `}`,
			want: []finding{
				{Rule: "app-namespace", Path: "metadata.namespace"},
				{Rule: "default-project", Path: ""},
				{Rule: "destination-server-and-name", Path: "spec.destination"},
				{Rule: "missing-resources-finalizer", Path: "metadata"},
				{Rule: "no-argocd-destination", Path: "spec.destination.namespace"},
			},
		},
		{
			name: "application outside its project",
			input: `{"object": {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "shop", "namespace": "argocd", "finalizers": ["resources-finalizer.argocd.argoproj.io/background"]}, "spec": {"project": "team-a", "sources": [{"repoURL": "https://github.com/org/shop"}, {"repoURL": "https://github.com/other/chart"}], "destination": {"server": "https://kubernetes.default.svc", "namespace": "kube-system"}}},
				"project": ` + projTeam + `, ` + ctxCLI + `}`,
			want: []finding{
				{Rule: "project-destination-denied", Path: "spec.destination"},
				{Rule: "project-source-denied", Path: "spec.sources[1].repoURL"},
			},
		},
		{
			name:  "application of a missing project",
			input: `{"object": {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "shop", "finalizers": ["resources-finalizer.argocd.argoproj.io"]}, "spec": {"project": "team-b", "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"}}}, ` + ctxCLI + `}`,
			want:  []finding{{Rule: "project-not-found", Path: "spec.project"}},
		},
		{
			name: "cluster role outside the whitelist",
			input: `{"object": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "admin"}},
				"application": ` + appShop + `, "project": ` + projTeam + `,
				"context": {"enforcementPoint": "sync", "argocdNamespace": "argocd", "clusterScoped": true}}`,
			want: []finding{{Rule: "project-resource-denied", Path: "kind"}},
		},
		{
			name:  "plain secret",
			input: `{"object": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}, "stringData": {"password": "hunter2"}}, ` + ctxCLI + `}`,
			want:  []finding{{Rule: "no-plaintext-secret", Path: "stringData"}},
		},
		{
			name:  "project open to the argo cd namespace",
			input: `{"object": {"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject", "metadata": {"name": "team-a", "namespace": "argocd"}, "spec": {"destinations": [{"server": "*", "namespace": "argo*"}]}}, ` + ctxCLI + `}`,
			want:  []finding{{Rule: "no-argocd-destination", Path: "spec.destinations[0].namespace"}},
		},
		{
			name:  "unrelated object",
			input: `{"object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"image": "nginx"}}, ` + ctxCLI + `}`,
			want:  []finding{},
		},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := evaluate(t, q, tt.input)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			for _, f := range got {
				seen[f.Rule] = true
			}
		})
	}
	var missing []string
	for _, id := range ruleIDs {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Errorf("rules never fired in the contract cases: %v", missing)
	}
}

// BenchmarkDeployment measures one Deployment through every rule with plain
// OPA (no evaluator, so no cache shared across evaluations), input
// conversion included: plain (a manifest no Application claims) and
// rendered (by an Application, judged against its AppProject). "yardstick"
// is the same input through one trivial query: on a shared machine, compare
// ratios within one run. The evaluator's figure is policies'
// BenchmarkEvaluateDeployment.
func BenchmarkDeployment(b *testing.B) {
	q := prepare(b, false)
	trivial, err := rego.New(rego.Query("input.object.nothing")).PrepareForEval(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	rendered := `{"object": ` + deploy + `, "application": ` + appShop + `, "project": ` + projTeam + `, ` + ctxCLI + `}`
	for _, bb := range []struct {
		name  string
		query rego.PreparedEvalQuery
		input string
	}{
		{name: "yardstick", query: trivial, input: rendered},
		{name: "plain", query: q, input: `{"object": ` + deploy + `, ` + ctxCLI + `}`},
		{name: "rendered", query: q, input: rendered},
	} {
		var in map[string]any
		if err := json.Unmarshal([]byte(bb.input), &in); err != nil {
			b.Fatalf("decode input: %v", err)
		}
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				rs, err := bb.query.Eval(b.Context(), rego.EvalInput(in))
				if err != nil {
					b.Fatalf("eval: %v", err)
				}
				if len(rs) != 0 {
					b.Fatalf("eval: want no results, got %v", rs)
				}
			}
		})
	}
}

// TestPinnedPatternWrittenOut checks that image_pinned's regular expression
// is the value of pinned_pattern, which spells it out from commented parts.
func TestPinnedPatternWrittenOut(t *testing.T) {
	q, err := rego.New(rego.Query("data.tollgate.lib.pinned_pattern"), rego.Module("lib_images.rego", readFile(t, "lib_images.rego"))).PrepareForEval(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	rs, err := q.Eval(t.Context())
	if err != nil || len(rs) != 1 {
		t.Fatalf("eval pinned_pattern = %v, %v", rs, err)
	}
	want, _ := rs[0].Expressions[0].Value.(string)

	var got []string
	for _, rule := range parse(t, "lib_images.rego").Rules {
		if rule.Head.Name != "image_pinned" {
			continue
		}
		ast.WalkExprs(rule, func(e *ast.Expr) bool {
			if e.IsCall() && e.Operator().String() == "regex.match" {
				if s, ok := e.Operand(0).Value.(ast.String); ok {
					got = append(got, string(s))
				}
			}
			return false
		})
	}
	if diff := cmp.Diff([]string{want}, got); diff != "" {
		t.Errorf("image_pinned's pattern is not pinned_pattern (-want +got):\n%s", diff)
	}
}

// readFile returns the content of a file of this directory.
func readFile(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(src)
}

// TestInvalidGlobPatterns checks what an AppProject pattern that does not
// compile (an unclosed "[") does under the evaluator's default, non-strict
// builtin errors: as in Argo CD it matches nothing, and its "!" form
// matches everything.
func TestInvalidGlobPatterns(t *testing.T) {
	q := prepare(t, false)
	app := `{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "shop", "namespace": "argocd", "finalizers": ["resources-finalizer.argocd.argoproj.io"]}, "spec": {"project": "team-a", "source": {"repoURL": "https://github.com/org/shop"}, "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"}}}`
	tests := []struct {
		name    string
		project string
		want    []finding
	}{
		{
			name:    "invalid patterns permit nothing",
			project: `{"metadata": {"name": "team-a"}, "spec": {"sourceRepos": ["https://github.com/[org/*"], "destinations": [{"server": "*", "namespace": "[shop"}]}}`,
			want: []finding{
				{Rule: "project-destination-denied", Path: "spec.destination"},
				{Rule: "project-source-denied", Path: "spec.source.repoURL"},
			},
		},
		{
			name:    "invalid deny patterns reject nothing",
			project: `{"metadata": {"name": "team-a"}, "spec": {"sourceRepos": ["*", "![bad"], "destinations": [{"server": "*", "namespace": "*"}, {"server": "*", "namespace": "![bad"}]}}`,
			want:    []finding{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := evaluate(t, q, `{"object": `+app+`, "application": `+app+`, "project": `+tt.project+`, `+ctxCLI+`}`)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}
