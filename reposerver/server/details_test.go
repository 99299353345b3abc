package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// TestAppDetails: what the repo-server tells of an Application's first
// source, as Argo CD's GetAppDetails: a chart's value files, values.yaml
// and the parameters they and the source's value files set (one from a
// ref source, one missing and skipped), flattened as Argo CD flattens
// them, without rendering the chart; a Kustomize source's images, sorted;
// a directory's type only.
func TestAppDetails(t *testing.T) {
	srv := gitserver.New(t)
	repo := srv.CreateRepo(t, "apps", map[string]string{
		"web/Chart.yaml":             chartYAML,
		"web/templates/bad.yaml":     "{{ fail \"not rendered for details\" }}\n",
		"web/values.yaml":            "image: {repository: web, tag: 1.0.0}\nreplicas: 2\nbig: 1000000\nargs: [--a, {name: b}]\nempty: null\n",
		"web/values-prod.yaml":       "replicas: 3\n",
		"overlay/kustomization.yaml": "resources: [deploy.yaml]\n",
		"overlay/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      initContainers: [{name: init, image: busybox:1.36}]\n" +
			"      containers: [{name: web, image: web:1.0}, {name: side, image: envoy:1.30}]\n",
		"plain/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
	})
	values := srv.CreateRepo(t, "values", map[string]string{"prod.yaml": "image: {tag: 1.1.0}\n"})
	f := newFixture(t)
	chart := src(repo, "web")
	chart.Source.Helm = &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-prod.yaml", "missing.yaml", "$values/prod.yaml"}}
	ref := src(values, "")
	ref.Source.Ref = "values"

	got, err := f.svc.AppDetails(t.Context(), &reposerver.Request{AppName: "shop", MultipleSources: true, Sources: []reposerver.Source{chart, ref}})
	if err != nil {
		t.Fatal(err)
	}
	want := &reposerver.AppDetails{Type: v1alpha1.ApplicationSourceTypeHelm, Helm: &reposerver.HelmDetails{
		ValueFiles: []string{"values-prod.yaml", "values.yaml"},
		Values:     "image: {repository: web, tag: 1.0.0}\nreplicas: 2\nbig: 1000000\nargs: [--a, {name: b}]\nempty: null\n",
		Parameters: map[string]string{
			"image.repository": "web", "image.tag": "1.1.0", "replicas": "3", "big": "1e+06",
			"args[0]": "--a", "args[1].name": "b", "empty": "<nil>",
		},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("helm details (-want +got):\n%s", diff)
	}
	if n := f.renders.n.Load(); n != 1 {
		t.Errorf("%d builds, want 1 (details, not a render)", n)
	}
	// The same details again come from the cache.
	again, err := f.svc.AppDetails(t.Context(), &reposerver.Request{AppName: "shop", MultipleSources: true, Sources: []reposerver.Source{chart, ref}})
	if err != nil || !cmp.Equal(want, again) || f.renders.n.Load() != 1 {
		t.Errorf("second request: %v, equal %v, builds %d; want the cached details", err, cmp.Equal(want, again), f.renders.n.Load())
	}

	got, err = f.svc.AppDetails(t.Context(), &reposerver.Request{AppName: "shop", Sources: []reposerver.Source{src(repo, "overlay")}})
	if err != nil {
		t.Fatal(err)
	}
	want = &reposerver.AppDetails{Type: v1alpha1.ApplicationSourceTypeKustomize, Kustomize: &reposerver.KustomizeDetails{Images: []string{"busybox:1.36", "envoy:1.30", "web:1.0"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kustomize details (-want +got):\n%s", diff)
	}

	got, err = f.svc.AppDetails(t.Context(), &reposerver.Request{AppName: "shop", Sources: []reposerver.Source{src(repo, "plain")}})
	if err != nil || got.Type != v1alpha1.ApplicationSourceTypeDirectory || got.Helm != nil || got.Kustomize != nil {
		t.Errorf("directory details %+v, %v", got, err)
	}
	if _, err := f.svc.AppDetails(t.Context(), &reposerver.Request{AppName: "shop"}); err == nil {
		t.Error("details of no source: no error")
	}
}
