package check

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/appset"
	"github.com/tollgate-dev/tollgate/reposerver/render"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// countingRenderer renders in process and counts the renders of each
// directory.
type countingRenderer struct {
	mu     sync.Mutex
	builds map[string]int
}

func (c *countingRenderer) Build(ctx context.Context, root, dir string, opts render.Options, lim render.Limits) (render.Result, error) {
	c.mu.Lock()
	c.builds[dir]++
	c.mu.Unlock()
	return render.Build(ctx, root, dir, opts, lim)
}

func (c *countingRenderer) Generate(ctx context.Context, set *v1alpha1.ApplicationSet, src appset.Sources) ([]reposerver.Generated, error) {
	return appset.Generate(ctx, set, src)
}

// TestClaimedDirectoriesRenderOnce: a kustomization an Application renders
// from its path is rendered once, as the Application's; one no Application
// claims, or one holding Argo CD's kinds, is rendered as a walked unit.
func TestClaimedDirectoriesRenderOnce(t *testing.T) {
	const url = "https://git.example.com/team/config.git"
	app := func(name, path string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: " + name + ", namespace: argocd}\n" +
			"spec:\n  project: default\n  source: {repoURL: " + url + ", path: " + path + "}\n" +
			"  destination: {server: https://kubernetes.default.svc, namespace: web}\n"
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n"
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"argocd/apps.yaml": app("web", "apps/web") + "---\n" + app("root", "argocd/children") + "---\n" + app("gone", "apps/missing") + "---\n" +
			"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: bad, namespace: argocd}\n" +
			"spec: {project: default, destination: nope, source: {repoURL: " + url + ", path: apps/late}}\n",
		"apps/late/kustomization.yaml":       "resources: [cm.yaml]\n",
		"apps/late/cm.yaml":                  cm,
		"apps/web/kustomization.yaml":        "resources: [cm.yaml]\n",
		"apps/web/cm.yaml":                   cm,
		"apps/other/kustomization.yaml":      "resources: [cm.yaml]\n",
		"apps/other/cm.yaml":                 cm,
		"argocd/children/kustomization.yaml": "resources: [child.yaml]\n",
		"argocd/children/child.yaml":         app("child", "apps/other"),
	})
	r := &countingRenderer{builds: map[string]int{}}
	rep, _, err := Run(t.Context(), Options{Paths: []string{dir}, RepoRoot: dir, RepoURL: url, Renderer: r})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"apps/web":        1, // claimed by web: its render only
		"argocd/children": 2, // holds an Application: walked and rendered by root
		"apps/other":      2, // walked (no Application in a file names it) and rendered by child
		"apps/late":       1, // named by bad, which does not render: walked after all
	}
	if diff := cmp.Diff(want, r.builds); diff != "" {
		t.Errorf("renders per directory (-want +got):\n%s", diff)
	}
	// The report is the same as with every directory walked.
	var apps []string
	for _, res := range rep.Results {
		if res.Kind == "ConfigMap" {
			apps = append(apps, res.File+" "+res.Application)
		}
	}
	if diff := cmp.Diff([]string{"apps/late/cm.yaml ", "apps/other/cm.yaml child", "apps/web/cm.yaml web"}, apps); diff != "" {
		t.Errorf("ConfigMaps reported (-want +got):\n%s", diff)
	}
}
