package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tollgate-dev/tollgate/test/testutil"
	"sigs.k8s.io/yaml"
)

// appSetRepo is a repository under test with two application directories
// and an ApplicationSet of a matrix of its directories and the clusters.
var appSetRepo = map[string]string{
	"apps/web/deployment.yaml": deployment,
	"apps/api/deployment.yaml": deployment,
	"appsets/apps.yaml": `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: apps
  namespace: argocd
spec:
  goTemplate: true
  generators:
  - matrix:
      generators:
      - git:
          repoURL: ` + fixtureURL + `
          revision: main
          directories: [{path: apps/*}]
      - clusters:
          selector: {matchLabels: {env: prod}}
  template:
    metadata:
      name: '{{ .path.basename }}-{{ .name }}'
    spec:
      project: team
      source: {repoURL: ` + fixtureURL + `, targetRevision: main, path: '{{ .path.path }}'}
      destination: {server: '{{ .server }}', namespace: '{{ .path.basename }}'}
`,
	"clusters.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: prod-eu
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: cluster, env: prod}
stringData: {name: prod-eu, server: https://prod-eu.example.com}
---
apiVersion: v1
kind: Secret
metadata:
  name: dev
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: cluster, env: dev}
stringData: {name: dev, server: https://dev.example.com}
`,
}

func TestAppSetGenerate(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, appSetRepo)
	r := runCLI(t, nil, "appset", "generate", "--repo-root", repo, "--repo-url", fixtureURL,
		"--cluster", filepath.Join(repo, "clusters.yaml"), filepath.Join(repo, "appsets/apps.yaml"))
	if r.code != 0 {
		t.Fatalf("exit code = %d (error %q)", r.code, r.err)
	}
	var got []string
	for _, doc := range strings.Split(r.stdout, "\n---\n") {
		var app struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name, Namespace string
				Finalizers      []string
			} `json:"metadata"`
			Spec struct {
				Source      struct{ Path string }
				Destination struct{ Server, Namespace string }
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &app); err != nil {
			t.Fatalf("decode %q: %v", doc, err)
		}
		got = append(got, strings.Join([]string{app.Kind, app.Metadata.Namespace, app.Metadata.Name, app.Spec.Source.Path,
			app.Spec.Destination.Server, app.Spec.Destination.Namespace, strings.Join(app.Metadata.Finalizers, ",")}, " "))
	}
	want := []string{
		"Application argocd api-prod-eu apps/api https://prod-eu.example.com api resources-finalizer.argocd.argoproj.io",
		"Application argocd web-prod-eu apps/web https://prod-eu.example.com web resources-finalizer.argocd.argoproj.io",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Applications (-want +got):\n%s", diff)
	}
}

// TestAppSetClusterCredentials: a cluster Secret applied client-side
// carries its data in the last-applied annotation; a template that asks
// for that annotation gets nothing, neither from appset generate nor from
// tollgate test, which report no value of the Secret's data.
func TestAppSetClusterCredentials(t *testing.T) {
	const token = "cluster-bearer-token-do-not-print"
	files := map[string]string{
		"apps/web/deployment.yaml": deployment,
		"appsets/apps.yaml": `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: apps
  namespace: argocd
spec:
  goTemplate: true
  generators:
  - clusters:
      selector: {matchLabels: {env: prod}}
  template:
    metadata:
      name: 'web-{{ .name }}'
      annotations:
        leak: '{{ index .metadata.annotations "kubectl.kubernetes.io/last-applied-configuration" }}'
        all: '{{ .metadata.annotations }}'
    spec:
      project: team
      source: {repoURL: ` + fixtureURL + `, targetRevision: main, path: apps/web}
      destination: {server: '{{ .server }}', namespace: web}
`,
		"clusters/prod.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: prod
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: cluster, env: prod}
  annotations:
    team: web
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"Secret","stringData":{"config":"{\"bearerToken\":\"` + token + `\"}"}}'
stringData: {name: prod, server: 'https://prod.example.com', config: '{"bearerToken":"` + token + `"}'}
`,
	}
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, files)
	r := runCLI(t, nil, "appset", "generate", "--repo-root", repo, "--repo-url", fixtureURL, "-o", "json",
		"--cluster", filepath.Join(repo, "clusters/prod.yaml"), filepath.Join(repo, "appsets/apps.yaml"))
	if r.code != 0 {
		t.Fatalf("appset generate: exit code = %d (error %q)", r.code, r.err)
	}
	var apps []struct {
		Metadata struct {
			Name        string            `json:"name"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &apps); err != nil {
		t.Fatalf("decode %q: %v", r.stdout, err)
	}
	if len(apps) != 1 || apps[0].Metadata.Name != "web-prod" {
		t.Fatalf("generated %s, want web-prod", r.stdout)
	}
	if diff := cmp.Diff(map[string]string{"leak": "", "all": "map[team:web]"}, apps[0].Metadata.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if strings.Contains(r.stdout+r.err, token) {
		t.Errorf("appset generate printed the cluster Secret's token:\n%s\n%s", r.stdout, r.err)
	}
	r = runCLI(t, nil, "test", "--repo-root", repo, "--repo-url", fixtureURL, "-o", "json", repo)
	if !strings.Contains(r.stdout, "Application/web-prod") && !strings.Contains(r.stdout, `"web-prod"`) {
		t.Errorf("tollgate test did not judge the generated Application:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout+r.err, token) {
		t.Errorf("tollgate test printed the cluster Secret's token:\n%s\n%s", r.stdout, r.err)
	}
}

func TestAppSetGenerateErrors(t *testing.T) {
	set := func(generator string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s, namespace: argocd}\nspec:\n  generators:\n  - " +
			generator + "\n  template: {metadata: {name: x}, spec: {project: default, destination: {}}}\n"
	}
	tests := []struct {
		name, file string
		args       []string
		want       string
	}{
		{"a cluster decision resource generator", set("clusterDecisionResource: {configMapRef: placement}"), nil,
			`set.yaml:1: ApplicationSet "s": spec.generators[0].clusterDecisionResource: not generated here: the controller reads the cluster decision resource`},
		{"an SCM provider tollgate does not serve", set("scmProvider: {awsCodeCommit: {region: eu-west-1}}"), nil,
			`set.yaml:1: ApplicationSet "s": spec.generators[0].scmProvider.awsCodeCommit is not supported: tollgate's SCM provider generator serves GitHub, GitLab and Gitea`},
		{"an SCM provider generator", set("scmProvider: {github: {organization: example}}"), nil,
			`set.yaml:1: ApplicationSet "s": spec.generators[0].scmProvider: not generated here: the SCM provider generator asks the SCM provider's API, which only the controller's repo-server calls`},
		{"a field tollgate does not know", set("list: {elements: [], elementz: []}"), nil,
			`set.yaml:1: ApplicationSet: json: unknown field "elementz"`},
		{"another repository", set("git: {repoURL: https://elsewhere.example.com/x.git, directories: [{path: '*'}]}"), nil,
			`repository https://elsewhere.example.com/x.git is not the repository under test`},
		{"two Applications of one name", set("list: {elements: [{a: b}, {a: c}]}"), nil,
			`set.yaml:1: ApplicationSet s contains applications with duplicate name: x`},
		{"no ApplicationSet", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", nil, "set.yaml: no ApplicationSet"},
		{"an unknown output", set("list: {elements: []}"), []string{"-o", "xml"}, `invalid --output "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			testutil.WriteFiles(t, repo, map[string]string{"set.yaml": tt.file})
			args := append([]string{"appset", "generate", "--repo-root", repo, "--repo-url", fixtureURL}, tt.args...)
			r := runCLI(t, nil, append(args, filepath.Join(repo, "set.yaml"))...)
			if r.code != exitUsage || !strings.Contains(strings.ReplaceAll(r.err, repo+"/", ""), tt.want) {
				t.Errorf("exit %d, error %q; want exit %d and an error containing %q", r.code, r.err, exitUsage, tt.want)
			}
		})
	}
}

// TestAppSetGenerateProject: with the template's AppProject known (a
// --project file for appset generate, a file under PATH for tollgate
// test), a git generator reads only a repository the project permits, as
// in the controller; a project that permits it generates as before.
func TestAppSetGenerateProject(t *testing.T) {
	project := func(repos string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: team, namespace: argocd}\nspec:\n  sourceRepos: " + repos +
			"\n  destinations: [{server: '*', namespace: '*'}]\n"
	}
	const refusal = `spec.generators[0].matrix.generators[0].git reads repository "` + fixtureURL + `", which AppProject "team" does not permit; nothing was read`
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, appSetRepo)
	testutil.WriteFiles(t, repo, map[string]string{
		"projects/other.yaml": project("[https://git.example.com/other.git]"),
		"projects/team.yaml":  project("['" + fixtureURL + "']"),
	})
	generate := func(projectFile string) cliResult {
		return runCLI(t, nil, "appset", "generate", "--repo-root", repo, "--repo-url", fixtureURL, "--project", filepath.Join(repo, projectFile),
			"--cluster", filepath.Join(repo, "clusters.yaml"), filepath.Join(repo, "appsets/apps.yaml"))
	}
	if r := generate("projects/other.yaml"); r.code != exitUsage || !strings.Contains(r.err, refusal) {
		t.Errorf("appset generate with a project that does not permit the repository: exit %d, error %q; want exit %d and %q", r.code, r.err, exitUsage, refusal)
	}
	if r := generate("projects/team.yaml"); r.code != 0 || strings.Count(r.stdout, "kind: Application") != 2 {
		t.Errorf("appset generate with a project that permits the repository: exit %d, error %q, output\n%s", r.code, r.err, r.stdout)
	}

	testutil.WriteFiles(t, repo, map[string]string{"projects/team.yaml": project("[https://git.example.com/other.git]")})
	r := runCLI(t, nil, "test", "--repo-root", repo, "--repo-url", fixtureURL, "-o", "json", filepath.Join(repo, "appsets"), filepath.Join(repo, "projects/team.yaml"))
	quoted, _ := json.Marshal(refusal)
	if !strings.Contains(r.stdout, strings.Trim(string(quoted), `"`)) || strings.Contains(r.stdout, `"web-prod-eu"`) {
		t.Errorf("tollgate test with the project under PATH: want the refusal as the ApplicationSet's error result and no Application:\n%s\n%s", r.stdout, r.err)
	}
}

// TestTestApplicationSets: tollgate test generates the Applications of the
// ApplicationSets it finds and judges and renders them like Applications
// written by hand; one that cannot generate is an error result, one whose
// generator only the controller runs (a plugin) a note.
func TestTestApplicationSets(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, appSetRepo)
	testutil.WriteFiles(t, repo, map[string]string{
		"apps/api/deployment.yaml": strings.Replace(deployment, "nginx:1.27.3", "nginx:latest", 1),
		"appsets/plugin.yaml": `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: plugged, namespace: argocd}
spec:
  generators:
  - plugin: {configMapRef: {name: x}}
  template: {metadata: {name: x}, spec: {project: default, destination: {}}}
`,
		"appsets/codecommit.yaml": `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: codecommit, namespace: argocd}
spec:
  generators:
  - scmProvider: {awsCodeCommit: {region: eu-west-1}}
  template: {metadata: {name: x}, spec: {project: default, destination: {}}}
`,
	})
	r := runCLI(t, nil, "test", "--repo-root", repo, "--repo-url", fixtureURL, "-o", "json", repo)
	if r.code != exitUsage {
		t.Fatalf("exit code = %d, want %d (error %q)\n%s", r.code, exitUsage, r.err, r.stdout)
	}
	rows := resultRows(t, r.stdout)
	for _, want := range []string{
		// The generated Applications, judged against their project (which
		// does not exist here).
		"appsets/apps.yaml Application/api-prod-eu app= project-not-found",
		"appsets/apps.yaml Application/web-prod-eu app= project-not-found",
		// What they render, in their context.
		"apps/api/deployment.yaml Deployment/web app=api-prod-eu no-latest-tag",
		"apps/web/deployment.yaml Deployment/web app=web-prod-eu",
		// The cluster Secrets in Git.
		"clusters.yaml Secret/prod-eu app= no-plaintext-secret",
	} {
		if !containsRow(rows, want) {
			t.Errorf("no result %q among:\n%s", want, strings.Join(rows, "\n"))
		}
	}
	if !strings.Contains(r.stdout, `"error": "spec.generators[0].scmProvider.awsCodeCommit is not supported: tollgate's SCM provider generator serves GitHub, GitLab and Gitea"`) {
		t.Errorf("the ApplicationSet with an unserved provider is not an error result:\n%s", r.stdout)
	}
	// A generator only the controller runs is noted, as a source of
	// another repository is, not an error.
	if strings.Contains(r.stdout, "spec.generators[0].plugin") {
		t.Errorf("the ApplicationSet with a plugin generator is an error result:\n%s", r.stdout)
	}
	text := runCLI(t, nil, "test", "--repo-root", repo, "--repo-url", fixtureURL, repo)
	if want := `plugin.yaml:1: ApplicationSet "plugged": spec.generators[0].plugin: not generated here: the plugin generator asks the plugin's HTTP service, which only the controller's repo-server calls`; !strings.Contains(text.stderr, want) {
		t.Errorf("want the note %q on stderr:\n%s", want, text.stderr)
	}
}

func containsRow(rows []string, row string) bool {
	for _, r := range rows {
		if r == row {
			return true
		}
	}
	return false
}
