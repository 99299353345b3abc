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

// recordingRenderer renders in process and records the directories it was
// asked to render, and the ApplicationSets it generated.
type recordingRenderer struct {
	mu   sync.Mutex
	dirs []string
	sets []string
}

func (r *recordingRenderer) Generate(ctx context.Context, set *v1alpha1.ApplicationSet, src appset.Sources) ([]reposerver.Generated, error) {
	r.mu.Lock()
	r.sets = append(r.sets, set.Name)
	r.mu.Unlock()
	return appset.Generate(ctx, set, src)
}

func (r *recordingRenderer) Build(ctx context.Context, root, dir string, opts render.Options, lim render.Limits) (render.Result, error) {
	r.mu.Lock()
	r.dirs = append(r.dirs, dir)
	r.mu.Unlock()
	return render.Build(ctx, root, dir, opts, lim)
}

// TestRunRenderer: Kustomize overlays and Helm charts, walked or named by
// an Application, and ApplicationSets go to Options.Renderer; plain
// directories are decoded in process.
func TestRunRenderer(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, chartRepo)
	testutil.WriteFiles(t, repo, map[string]string{
		"kust/kustomization.yaml": "resources: [cm.yaml]\n",
		"kust/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"plain/cm.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\n",
		"apps/plain.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: plain, namespace: argocd}
spec:
  source: {repoURL: "https://example.com/r.git", path: plain}
  destination: {namespace: web}
`,
		"apps/web.yaml": chartApp("helm: {valueFiles: [values-prod.yaml]}"),
		"apps/set.yaml": `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: set, namespace: argocd}
spec:
  generators: [{list: {elements: [{env: a}]}}]
  template:
    metadata: {name: 'set-{{env}}'}
    spec:
      project: default
      source: {repoURL: "https://example.com/r.git", path: plain}
      destination: {server: https://kubernetes.default.svc, namespace: other}
`,
	})
	r := &recordingRenderer{}
	if _, _, err := Run(t.Context(), Options{Paths: []string{repo + "/kust", repo + "/plain", repo + "/apps"}, RepoRoot: repo, RepoURL: "https://example.com/r", Renderer: r}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"kust", "charts/web"}, r.dirs); diff != "" {
		t.Errorf("rendered directories (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"set"}, r.sets); diff != "" {
		t.Errorf("generated ApplicationSets (-want +got):\n%s", diff)
	}
}
