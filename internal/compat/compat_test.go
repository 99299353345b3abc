package compat

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/engine/apply/plan"
)

var update = flag.Bool("update", false, "write docs/compatibility.md from the ledger")

// root is the module's root, from this package's directory.
const root = "../.."

// sources reads the module's Go files: product files (no tests, nothing
// under test/) and test files, by path.
func sources(t *testing.T) (product, tests map[string]string) {
	t.Helper()
	product, tests = map[string]string{}, map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case strings.HasSuffix(p, "_test.go"):
			tests[rel] = string(data)
		case !strings.HasPrefix(filepath.ToSlash(rel), "test/") && !strings.HasPrefix(filepath.ToSlash(rel), "internal/compat/"):
			product[rel] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return product, tests
}

// TestLedgerCoversTheAPI: every field of the API has exactly one row, and
// no field row names a field that does not exist.
func TestLedgerCoversTheAPI(t *testing.T) {
	fields := Fields()
	rows := map[string]int{}
	for _, r := range Ledger() {
		if r.Kind == Field {
			rows[r.Name]++
		}
	}
	var missing []string
	for _, f := range fields {
		switch rows[f] {
		case 0:
			missing = append(missing, f)
		case 1:
		default:
			t.Errorf("field %s has %d rows, want one", f, rows[f])
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d fields of the API have no row in the ledger; add one each (honoured, refused or different):\n%s", len(missing), strings.Join(missing, "\n"))
	}
	for name := range rows {
		if !slices.Contains(fields, name) {
			t.Errorf("ledger row %s names no field of the API", name)
		}
	}
}

// annotationKey finds the argocd.argoproj.io annotations the code spells.
var annotationKey = regexp.MustCompile(`"(argocd\.argoproj\.io/[A-Za-z0-9._-]+)"`)

// argoCDAnnotations are the argocd.argoproj.io/ annotations Argo CD reads
// or writes: the AnnotationKey* and Annotation* constants of its
// common/common.go, pkg/apis/application/v1alpha1 and gitops-engine's
// pkg/sync/common, and the annotations of its docs
// (user-guide/annotations-and-labels.md). Labels (secret-type,
// kubernetes-version, auto-label-cluster-info), finalizers (hook-finalizer)
// and keys under another prefix (link.*, notice.*, pref.*) are not in it.
var argoCDAnnotations = []string{
	"argocd.argoproj.io/application-set-refresh",
	"argocd.argoproj.io/client-side-apply-migration-manager",
	"argocd.argoproj.io/compare-options",
	"argocd.argoproj.io/deletion-approved",
	"argocd.argoproj.io/hook",
	"argocd.argoproj.io/hook-delete-policy",
	"argocd.argoproj.io/hydrate",
	"argocd.argoproj.io/hydrate-timestamp",
	"argocd.argoproj.io/ignore-default-links",
	"argocd.argoproj.io/ignore-healthcheck",
	"argocd.argoproj.io/ignore-resource-updates",
	"argocd.argoproj.io/ignore-restart-policy",
	"argocd.argoproj.io/installation-id",
	"argocd.argoproj.io/managed-by-url",
	"argocd.argoproj.io/manifest-generate-paths",
	"argocd.argoproj.io/refresh",
	"argocd.argoproj.io/refresh-timestamp",
	"argocd.argoproj.io/skip-reconcile",
	"argocd.argoproj.io/sync-options",
	"argocd.argoproj.io/sync-wave",
	"argocd.argoproj.io/tracking-id",
}

// TestLedgerCoversAnnotationsAndOptions: every argocd.argoproj.io
// annotation Argo CD reads or writes (argoCDAnnotations) and every one the
// product's code spells, every sync option it knows and Argo CD's compare
// options have a row.
func TestLedgerCoversAnnotationsAndOptions(t *testing.T) {
	product, _ := sources(t)
	want := map[Kind][]string{
		Annotation:    slices.Clone(argoCDAnnotations),
		SyncOption:    plan.KnownSyncOptions(),
		CompareOption: {"IgnoreExtraneous", "IncludeMutationWebhook", "ServerSideDiff"},
	}
	for file, src := range product {
		for _, m := range annotationKey.FindAllStringSubmatch(src, -1) {
			if !slices.Contains(want[Annotation], m[1]) {
				want[Annotation] = append(want[Annotation], m[1])
			}
			_ = file
		}
	}
	have := map[Kind]map[string]int{}
	for _, r := range Ledger() {
		if have[r.Kind] == nil {
			have[r.Kind] = map[string]int{}
		}
		have[r.Kind][r.Name]++
	}
	for kind, names := range want {
		for _, n := range names {
			if have[kind][n] != 1 {
				t.Errorf("%s %s has %d rows, want one", kind, n, have[kind][n])
			}
		}
	}
}

// TestLedgerProofs: each honoured row names a test that exists, each
// refused row an error the product's code spells, each different row a
// section of the docs that exists; every row says what tollgate does.
func TestLedgerProofs(t *testing.T) {
	product, tests := sources(t)
	testFuncs := map[string]bool{}
	testFunc := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	for _, src := range tests {
		for _, m := range testFunc.FindAllStringSubmatch(src, -1) {
			testFuncs[m[1]] = true
		}
	}
	anchors := map[string]bool{}
	for _, r := range Ledger() {
		if r.Note == "" {
			t.Errorf("%s %s: no note saying what tollgate does", r.Kind, r.Name)
		}
		switch r.Verdict {
		case Honoured:
			if !testFuncs[r.Proof] {
				t.Errorf("%s %s: honoured, proved by %q, but no test has that name", r.Kind, r.Name, r.Proof)
			}
		case Refused:
			if !slices.ContainsFunc(slices.Collect(mapValues(product)), func(src string) bool { return strings.Contains(src, r.Proof) }) {
				t.Errorf("%s %s: refused with %q, but the product's code never spells that", r.Kind, r.Name, r.Proof)
			}
		case Different:
			if len(anchors) == 0 {
				anchors = docAnchors(t)
			}
			if !anchors[r.Proof] {
				t.Errorf("%s %s: different, described at %q, but the docs have no such section", r.Kind, r.Name, r.Proof)
			}
		default:
			t.Errorf("%s %s: verdict %q", r.Kind, r.Name, r.Verdict)
		}
	}
}

func mapValues(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// docAnchors returns "file.md#anchor" for every heading of docs/*.md, as
// GitHub names them.
func docAnchors(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	heading := regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(f)
		seen := map[string]int{}
		for _, m := range heading.FindAllStringSubmatch(string(data), -1) {
			slug := slugify(m[1])
			if n := seen[slug]; n > 0 {
				seen[slug]++
				slug = slug + "-" + string(rune('0'+n))
			} else {
				seen[slug] = 1
			}
			out[base+"#"+slug] = true
		}
	}
	return out
}

// slugify is GitHub's heading anchor: lower case, spaces to hyphens,
// everything but letters, digits, hyphens and underscores dropped.
func slugify(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocs: docs/compatibility.md is the ledger's Markdown.
func TestDocs(t *testing.T) {
	path := filepath.Join(root, "docs", "compatibility.md")
	want := Markdown()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Error("docs/compatibility.md is not the ledger's; run: go test ./internal/compat -run TestDocs -update")
	}
}
