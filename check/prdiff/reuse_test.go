package prdiff

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/check"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// TestReuseMatchesRenderingTwice: the report with the base's renders
// reused is the report of rendering every Application at both revisions.
func TestReuseMatchesRenderingTwice(t *testing.T) {
	dir, _ := fixture(t, true)
	got, err := Run(t.Context(), Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got.ReusedRenders == 0 {
		t.Error("no render reused")
	}
	base, _ := fixture(t, false)
	o := check.Options{RepoURL: repoURL}
	before, err := take(t.Context(), o, base, ".", "")
	if err != nil {
		t.Fatal(err)
	}
	after, err := take(t.Context(), o, dir, ".", "")
	if err != nil {
		t.Fatal(err)
	}
	want := Compare(before, after)
	got.Base, got.Head, got.ReusedRenders = Revision{}, Revision{}, 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report with renders reused (-rendered twice +reused):\n%s", diff)
	}
}

// TestReuse: which Applications the head may take from the base.
func TestReuse(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFiles(t, root, map[string]string{
		"apps/web/deployment.yaml":        "kind: Deployment",
		"apps/overlay/kustomization.yaml": "resources: [../base]\nconfigMapGenerator:\n- name: c\n  files: [cfg=../../config/app.properties]\n",
		"apps/base/kustomization.yaml":    "resources: [deployment.yaml]",
		"apps/base/deployment.yaml":       "kind: Deployment",
		"config/app.properties":           "a=b",
		"charts/app/Chart.yaml":           "dependencies:\n- name: lib\n  repository: file://../lib\n",
		"charts/lib/Chart.yaml":           "name: lib",
		"values/prod.yaml":                "replicas: 3",
		"apps/jsonnet/main.jsonnet":       "{}",
	})
	app := func(source map[string]any) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"source": source}}
	}
	src := func(p string, extra map[string]any) map[string]any {
		s := map[string]any{"repoURL": repoURL, "path": p}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	multi := map[string]any{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"sources": []any{
		map[string]any{"repoURL": "https://charts.example.com", "chart": "web", "helm": map[string]any{"valueFiles": []any{"$values/values/prod.yaml"}}},
		map[string]any{"repoURL": repoURL, "ref": "values"},
	}}}
	for _, tc := range []struct {
		name    string
		app     map[string]any
		changed string
		want    bool
	}{
		{"nothing it reads changed", app(src("apps/web", nil)), "apps/other/x.yaml", true},
		{"its path changed", app(src("apps/web", nil)), "apps/web/deployment.yaml", false},
		{"a sibling with a common prefix changed", app(src("apps/web", nil)), "apps/web2/x.yaml", true},
		{"its kustomize base changed", app(src("apps/overlay", nil)), "apps/base/deployment.yaml", false},
		{"a generator's file changed", app(src("apps/overlay", nil)), "config/app.properties", false},
		{"a file:// chart dependency changed", app(src("charts/app", nil)), "charts/lib/Chart.yaml", false},
		{"a value file outside changed", app(src("charts/app", map[string]any{"helm": map[string]any{"valueFiles": []any{"../../values/prod.yaml"}}})), "values/prod.yaml", false},
		{"a $ref value file changed", multi, "values/prod.yaml", false},
		{"another value file changed", multi, "values/dev.yaml", true},
		{"a plugin", app(src("apps/web", map[string]any{"plugin": map[string]any{"name": "p"}})), "unrelated", false},
		{"jsonnet", app(src("apps/jsonnet", nil)), "unrelated", false},
		{"the commit in a parameter", app(src("apps/web", map[string]any{"helm": map[string]any{"parameters": []any{map[string]any{"name": "rev", "value": "$ARGOCD_APP_REVISION"}}}})), "unrelated", false},
		{"another repository", app(map[string]any{"repoURL": "https://github.com/other/repo.git", "path": "apps/web"}), "apps/web/deployment.yaml", true},
		{"the repository root", app(src(".", nil)), "anything.yaml", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := reuser{root: root, repoURL: reposerver.NormalizeURL(repoURL), changed: map[string]bool{tc.changed: true}}
			if got := r.reuse(tc.app, tc.app); got != tc.want {
				t.Errorf("reuse = %v, want %v", got, tc.want)
			}
		})
	}
	changedApp := app(src("apps/web", map[string]any{"targetRevision": "v2"}))
	r := reuser{root: root, repoURL: reposerver.NormalizeURL(repoURL), changed: map[string]bool{}}
	if r.reuse(app(src("apps/web", nil)), changedApp) {
		t.Error("an Application whose spec changed reuses its old render")
	}
}

// TestReuseRemovedBase: a kustomize base removed at the head is an input
// of the overlay that still names it, so the overlay renders again (and
// fails there) rather than showing its old render.
func TestReuseRemovedBase(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFiles(t, root, map[string]string{"apps/overlay/kustomization.yaml": "resources: [../base]\n"})
	r := reuser{root: root, repoURL: reposerver.NormalizeURL(repoURL), changed: map[string]bool{"apps/base/kustomization.yaml": true}}
	app := map[string]any{"spec": map[string]any{"source": map[string]any{"repoURL": repoURL, "path": "apps/overlay"}}}
	if r.reuse(app, app) {
		t.Error("the overlay of a removed base reuses its old render")
	}
}

// TestReuseLinkOutside: a kustomization that names a link leading out of
// the checkout is not seen through (nothing outside is read), so its
// Application renders again.
func TestReuseLinkOutside(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	testutil.WriteFiles(t, root, map[string]string{"apps/web/kustomization.yaml": "resources: [../link]\n"})
	testutil.WriteFiles(t, outside, map[string]string{"kustomization.yaml": "resources: [x.yaml]\n"})
	if err := os.Symlink(outside, filepath.Join(root, "apps", "link")); err != nil {
		t.Fatal(err)
	}
	if _, ok := check.SourceInputs(root, "apps/web"); ok {
		t.Error("SourceInputs saw through a link leading outside the checkout")
	}
	r := reuser{root: root, repoURL: reposerver.NormalizeURL(repoURL), changed: map[string]bool{}}
	app := map[string]any{"spec": map[string]any{"source": map[string]any{"repoURL": repoURL, "path": "apps/web"}}}
	if r.reuse(app, app) {
		t.Error("reused the render of an Application reading through a link outside")
	}
}
