package engine_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/chartserver"
)

// kustomizeHelmFixture is a fixture whose kustomization inflates chart
// "web" 1.0.0 of a Helm repository behind basic auth (credentials in a
// repository Secret of type helm) through helmCharts, beside a resource
// of its own, with argocd-cm's kustomize.buildOptions enabling Helm as
// Argo CD needs it.
func kustomizeHelmFixture(t *testing.T) (*fixture, *chartserver.Repo) {
	t.Helper()
	repo := chartserver.NewRepo("reader", "s3cret")
	t.Cleanup(repo.Close)
	repo.Add("web", "1.0.0", chartArchive(t, "web", "1.0.0", "settings"), "")
	f := newFixture(t, map[string]string{
		"manifests/kustomization.yaml": "resources: [extra.yaml]\ncommonLabels: {team: web}\nhelmCharts:\n" +
			"- name: web\n  repo: " + repo.URL + "\n  version: 1.0.0\n  releaseName: web\n  valuesInline: {tier: inline}\n",
		"manifests/extra.yaml": configMap("extra", "kustomize"),
	})
	f.create(repositorySecret(argoNS, f.name+"-charts", map[string]string{
		"type": "helm", "url": repo.URL, "username": "reader", "password": "s3cret", "insecure": "true",
	}))
	f.create(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: f.cp},
		Data:       map[string]string{"kustomize.buildOptions": "--enable-helm"},
	})
	return f, repo
}

// TestKustomizeHelmCharts syncs a kustomization whose helmCharts entry
// the repo-server pulls from a Helm repository the project permits: the
// chart's objects are applied with the inline values and the
// kustomization's labels, beside the kustomization's own resource.
func TestKustomizeHelmCharts(t *testing.T) {
	f, repo := kustomizeHelmFixture(t)
	f.repos = append(f.repos, repo.URL)
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	f.waitSynced(f.head)
	var cm corev1.ConfigMap
	if err := f.get(&cm, "settings"); err != nil || cm.Data["chart"] != "1.0.0" || cm.Data["tier"] != "inline" || cm.Labels["team"] != "web" {
		t.Errorf("the chart's ConfigMap: %v, data %v labels %v; want chart 1.0.0, tier inline, label team=web", err, cm.Data, cm.Labels)
	}
	if err := f.get(&cm, "extra"); err != nil {
		t.Errorf("the kustomization's own ConfigMap: %v", err)
	}
	if repo.Requests() == 0 {
		t.Error("the Helm repository received no request")
	}
}

// TestKustomizeHelmChartsNotPermitted: the project's sourceRepos do not
// permit the chart's repository: a ComparisonError names the rule, the
// kustomization and the chart; nothing is applied and the repository
// receives no request.
func TestKustomizeHelmChartsNotPermitted(t *testing.T) {
	f, repo := kustomizeHelmFixture(t)
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	f.waitRefused(fmt.Sprintf(`project-source-denied: spec.source: manifests/kustomization.yaml line 3: helmCharts chart "web": repository %s is not permitted in project %q: add it to the project's spec.sourceRepos`,
		repo.URL, f.name))
	var cm corev1.ConfigMap
	if err := f.get(&cm, "extra"); err == nil {
		t.Error("the kustomization's ConfigMap was applied")
	}
	if n := repo.Requests(); n != 0 {
		t.Errorf("the Helm repository received %d requests, want none", n)
	}
}
