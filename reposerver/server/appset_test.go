package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
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

// everything permits every repository, as the default project does.
var everything = &reposerver.GitAccess{Project: "default", Projects: []reposerver.AccessProject{{Name: "default", SourceRepos: []string{"*"}}}}

// TestGenerateApplicationsRefusesRepository: a git generator reads only
// what the request's reposerver.GitAccess permits, a repoURL rendered from the
// parameters of a matrix's first generator included, and nothing without
// one: refused with reason ApplicationGenerationFromParamsError, naming
// the generator, the repository and the project, and nothing is fetched.
func TestGenerateApplicationsRefusesRepository(t *testing.T) {
	f := newFixture(t)
	onlyCharts := &reposerver.GitAccess{Project: "team", Projects: []reposerver.AccessProject{{Name: "team", SourceRepos: []string{f.charts}}}}
	values := f.srv.RepoURL("values")
	for _, tc := range []struct {
		name, spec string
		access     *reposerver.GitAccess
		want       string
	}{{
		name:   "literal repository",
		spec:   `{generators: [{git: {repoURL: VALUES, revision: main, files: [{path: '*.yaml'}]}}]}`,
		access: onlyCharts,
		want:   `spec.generators[0].git reads repository "` + values + `", which AppProject "team" does not permit; nothing was read`,
	}, {
		name:   "repository rendered from parameters",
		spec:   `{generators: [{matrix: {generators: [{list: {elements: [{repo: VALUES}]}}, {git: {repoURL: '{{repo}}', revision: main, files: [{path: '*.yaml'}]}}]}}]}`,
		access: onlyCharts,
		want:   `spec.generators[0].matrix.generators[1].git reads repository "` + values + `", which AppProject "team" does not permit`,
	}, {
		name: "no access",
		spec: `{generators: [{git: {repoURL: REPO, revision: main, directories: [{path: '*'}]}}]}`,
		want: "spec.generators[0].git: not read: the request grants no repository",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			set := appSetOf(t, f, "spec: "+strings.ReplaceAll(tc.spec, "VALUES", values))
			set.Spec.Template.Spec.Project = "team"
			_, err := f.svc.GenerateApplications(t.Context(), &reposerver.AppSetRequest{ApplicationSet: set, Access: tc.access})
			var we *reposerver.Error
			if !errors.As(err, &we) || we.Reason != v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError || !strings.Contains(we.Message, tc.want) {
				t.Errorf("got %v, want reason %s and %q", err, v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError, tc.want)
			}
		})
	}
	if n := f.srv.Fetches("values"); n != 0 {
		t.Errorf("the refused repository was fetched %d times", n)
	}
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
	clusters := reposerver.ClusterSecretsForGeneration([]corev1.Secret{{
		ObjectMeta: metav1.ObjectMeta{Name: "prod", Labels: map[string]string{reposerver.SecretTypeLabel: reposerver.SecretTypeCluster}},
		Data:       map[string][]byte{"name": []byte("prod"), "server": []byte("https://prod.example.com"), "config": []byte(`{"bearerToken":"s3cret"}`)},
	}, {ObjectMeta: metav1.ObjectMeta{Name: "repo"}, Data: map[string][]byte{"password": []byte("s3cret")}}})
	if len(clusters) != 1 || clusters[0].Data["config"] != nil {
		t.Fatalf("cluster Secrets sent for generation: %+v; want the cluster's name and server only", clusters)
	}
	req := &reposerver.AppSetRequest{ApplicationSet: set, Clusters: clusters, Access: everything}
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
	_, err = c.GenerateApplications(t.Context(), &reposerver.AppSetRequest{ApplicationSet: set, Access: everything})
	var we *reposerver.Error
	if !errors.As(err, &we) || we.Reason != v1alpha1.ApplicationSetReasonRenderTemplateParamsError {
		t.Errorf("a template that does not render: %v, want reason %s", err, v1alpha1.ApplicationSetReasonRenderTemplateParamsError)
	}
}
