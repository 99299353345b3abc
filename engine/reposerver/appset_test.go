package reposerver

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/appset"
)

// appSetOf decodes an ApplicationSet of the fixture's repositories.
func appSetOf(t *testing.T, f *fixture, spec string) v1alpha1.ApplicationSet {
	t.Helper()
	var set v1alpha1.ApplicationSet
	if err := yaml.UnmarshalStrict([]byte(strings.ReplaceAll(spec, "REPO", f.charts)), &set); err != nil {
		t.Fatal(err)
	}
	set.Name, set.Namespace = "set", "argocd"
	return set
}

// TestGenerateApplicationsOverTheWire: the git generator of an
// ApplicationSet reads the repository in the repo-server, and the answer
// is the same in the process and over HTTPS; a generation error keeps its
// ApplicationSet condition reason across the wire.
func TestGenerateApplicationsOverTheWire(t *testing.T) {
	f := newFixture(t)
	ca := newTestCA(t)
	c := newClient(t, ca, ca.serve(t, "repo.test", NewHandler(f.svc, logr.Discard())))
	set := appSetOf(t, f, `
spec:
  goTemplate: true
  generators:
  - git: {repoURL: REPO, revision: main, directories: [{path: '*'}]}
  - clusters: {}
  template:
    metadata: {name: '{{ if .path }}{{ .path.basename }}{{ else }}{{ .name }}{{ end }}'}
    spec:
      project: default
      source: {repoURL: REPO, path: '{{ if .path }}{{ .path.path }}{{ end }}'}
      destination: {server: 'https://kubernetes.default.svc', namespace: apps}
`)
	clusters := ClusterSecretsForGeneration([]corev1.Secret{{
		ObjectMeta: metav1.ObjectMeta{Name: "prod", Labels: map[string]string{appset.SecretTypeLabel: appset.SecretTypeCluster}},
		Data:       map[string][]byte{"name": []byte("prod"), "server": []byte("https://prod.example.com"), "config": []byte(`{"bearerToken":"s3cret"}`)},
	}, {ObjectMeta: metav1.ObjectMeta{Name: "repo"}, Data: map[string][]byte{"password": []byte("s3cret")}}})
	if len(clusters) != 1 || clusters[0].Data["config"] != nil {
		t.Fatalf("cluster Secrets sent for generation: %+v; want the cluster's name and server only", clusters)
	}
	req := &AppSetRequest{ApplicationSet: set, Clusters: clusters}
	local, err := f.svc.GenerateApplications(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := c.GenerateApplications(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range remote.Applications {
		names = append(names, g.Application["metadata"].(map[string]any)["name"].(string))
	}
	if got, want := strings.Join(names, ","), "overlay,plain,web,in-cluster,prod"; got != want {
		t.Errorf("generated %s, want %s", got, want)
	}
	if len(local.Applications) != len(remote.Applications) {
		t.Errorf("in-process %d Applications, over HTTPS %d", len(local.Applications), len(remote.Applications))
	}

	set.Spec.Template.Spec.Project = "{{ .nosuchparam"
	_, err = c.GenerateApplications(t.Context(), &AppSetRequest{ApplicationSet: set})
	var we *Error
	if !errors.As(err, &we) || we.Reason != v1alpha1.ApplicationSetReasonRenderTemplateParamsError {
		t.Errorf("a template that does not render: %v, want reason %s", err, v1alpha1.ApplicationSetReasonRenderTemplateParamsError)
	}
}
