package check

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/policies/report"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// appOfAppsRepo is a repository whose origin remote is the URL its
// Applications use: a root Application renders the argocd/apps directory of
// Applications (as Argo CD does, its project must permit the Argo CD
// namespace they land in, so that platform project carries an explicit
// no-argocd-destination exemption), and the web Application renders a local chart with value
// files from a second source of the same repository. The chart's own
// values pin nothing; the production values do.
var appOfAppsRepo = map[string]string{
	".git/config": "[remote \"origin\"]\n\turl = git@github.com:acme/config.git\n\turl = ignored\n[remote \"origin2\"]\n\turl = x\n",
	"argocd/project.yaml": `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: p, namespace: argocd}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: web}]
`,
	"argocd/platform.yaml": `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: platform
  namespace: argocd
  annotations: {tollgate.dev/exempt: no-argocd-destination}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: web}, {server: "*", namespace: argocd}]
`,
	"argocd/root.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: root, namespace: argocd, finalizers: [resources-finalizer.argocd.argoproj.io]}
spec:
  project: platform
  source: {repoURL: git@github.com:acme/config.git, path: argocd/apps}
  destination: {server: https://kubernetes.default.svc, namespace: web}
`,
	"argocd/apps/web.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd, finalizers: [resources-finalizer.argocd.argoproj.io]}
spec:
  project: p
  sources:
    - repoURL: git@github.com:acme/config.git
      path: charts/web
      helm: {valueFiles: [$values/envs/prod.yaml]}
    - {repoURL: git@github.com:acme/config.git, ref: values}
    - {repoURL: https://charts.bitnami.com/bitnami, chart: redis, targetRevision: 19.0.0}
  destination: {server: https://kubernetes.default.svc, namespace: web}
`,
	"charts/web/Chart.yaml":  "apiVersion: v2\nname: web\nversion: 0.1.0\n",
	"charts/web/values.yaml": "tag: latest\n",
	"charts/web/templates/pod.yaml": `apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}
spec:
  containers:
    - name: web
      image: "nginx:{{ .Values.tag }}"
`,
	"envs/prod.yaml": "tag: \"1.27.3\"\n",
}

// resultRows returns "file kind/name app=application rules" for each
// result of a report.
func resultRows(rep report.Report) []string {
	var rows []string
	for _, res := range rep.Results {
		row := res.File + " " + res.Kind + "/" + res.Name + " app=" + res.Application
		for _, v := range res.Violations {
			row += " " + v.Rule
		}
		if res.Error != "" {
			row += " ERROR " + res.Error
		}
		rows = append(rows, row)
	}
	return rows
}

// noteLines returns the notes as the text report prints them, without
// "note: ".
func noteLines(notes []Note) []string {
	var out []string
	for _, n := range notes {
		out = append(out, n.String())
	}
	return out
}

func TestRunAppOfApps(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, appOfAppsRepo)

	rep, notes, err := Run(t.Context(), Options{Paths: []string{repo}, RepoRoot: repo})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Denied != 0 {
		t.Errorf("%d denied, want none", rep.Summary.Denied)
	}
	want := []string{
		"argocd/apps/web.yaml Application/web app=root",
		"argocd/platform.yaml AppProject/platform app=",
		"argocd/project.yaml AppProject/p app=",
		"argocd/root.yaml Application/root app=",
		"charts/web/templates/pod.yaml Pod/web app=web",
	}
	if diff := cmp.Diff(want, resultRows(rep)); diff != "" {
		t.Errorf("results mismatch (-want +got):\n%s", diff)
	}
	wantNotes := []string{
		"envs/prod.yaml:1: skipped: not a Kubernetes object (no apiVersion or kind)",
		`argocd/apps/web.yaml:1: Application "web" spec.sources[1]: ref "values" only provides value files; not rendered on its own`,
		`argocd/apps/web.yaml:1: Application "web" spec.sources[2]: Helm chart "redis" from repository https://charts.bitnami.com/bitnami is not rendered (only sources from the repository under test are)`,
	}
	if diff := cmp.Diff(wantNotes, noteLines(notes)); diff != "" {
		t.Errorf("notes mismatch (-want +got):\n%s", diff)
	}
}

func TestRunRepoURL(t *testing.T) {
	unrendered := []string{
		"argocd/apps/web.yaml Application/web app=",
		"argocd/platform.yaml AppProject/platform app=",
		"argocd/project.yaml AppProject/p app=",
		"argocd/root.yaml Application/root app=",
		"charts/web/templates/pod.yaml Pod/release-name app= no-latest-tag",
	}
	rendered := []string{
		"argocd/apps/web.yaml Application/web app=root",
		"argocd/platform.yaml AppProject/platform app=",
		"argocd/project.yaml AppProject/p app=",
		"argocd/root.yaml Application/root app=",
		"charts/web/templates/pod.yaml Pod/web app=web",
	}
	tests := []struct {
		name string
		// gitConfig replaces .git/config; "-" removes .git.
		gitConfig string
		repoURL   string
		wantRows  []string
		// wantNote is one of the notes.
		wantNote string
		wantErr  string
	}{
		{
			// The Applications say git@github.com:acme/config.git.
			name:     "explicit ssh URL of the same repository",
			repoURL:  "ssh://git@GitHub.com/acme/config/",
			wantRows: rendered,
			wantNote: `argocd/apps/web.yaml:1: Application "web" spec.sources[2]: Helm chart "redis" from repository https://charts.bitnami.com/bitnami is not rendered (only sources from the repository under test are)`,
		},
		{
			name:      "origin remote as an ssh URL",
			gitConfig: "[remote \"origin\"]\n\turl = ssh://git@github.com:22/acme/config.git\n",
			wantRows:  rendered,
			wantNote:  `argocd/apps/web.yaml:1: Application "web" spec.sources[2]: Helm chart "redis" from repository https://charts.bitnami.com/bitnami is not rendered (only sources from the repository under test are)`,
		},
		{
			name:     "explicit URL of another repository",
			repoURL:  "https://github.com/acme/other",
			wantRows: unrendered,
			wantNote: `argocd/root.yaml:1: Application "root" spec.source: repository git@github.com:acme/config.git is not the repository under test; not rendered`,
		},
		{
			// The same path over https is another remote to the engine too.
			name:     "https URL of the repository the Applications reach over ssh",
			repoURL:  "https://github.com/acme/config",
			wantRows: unrendered,
			wantNote: `argocd/root.yaml:1: Application "root" spec.source: repository git@github.com:acme/config.git is not the repository under test; not rendered`,
		},
		{
			name:      "no URL and no git repository",
			gitConfig: "-",
			wantRows:  unrendered,
			wantNote:  "Applications are not rendered: no --repo-url given and no origin remote found for REPO",
		},
		{
			name:      "origin remote that is not a repository URL",
			gitConfig: "[remote \"origin\"]\n\turl = ../upstream\n",
			wantRows:  unrendered,
			wantNote:  "Applications are not rendered: the origin remote of REPO (../upstream) is not a repository URL; set --repo-url",
		},
		{
			name:    "explicit URL that is not a repository URL",
			repoURL: "../upstream",
			wantErr: `invalid --repo-url "../upstream": not a repository URL`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			repo := filepath.Join(parent, "repo")
			testutil.WriteFiles(t, repo, appOfAppsRepo)
			switch tt.gitConfig {
			case "":
			case "-":
				if err := os.RemoveAll(filepath.Join(repo, ".git")); err != nil {
					t.Fatal(err)
				}
			default:
				testutil.WriteFiles(t, repo, map[string]string{".git/config": tt.gitConfig})
			}
			rep, notes, err := Run(t.Context(), Options{Paths: []string{repo}, RepoRoot: repo, RepoURL: tt.repoURL})
			if tt.wantErr != "" {
				var ie *InputError
				if err == nil || err.Error() != tt.wantErr || !errors.As(err, &ie) {
					t.Fatalf("error = %v, want an *InputError %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantRows, resultRows(rep)); diff != "" {
				t.Errorf("results mismatch (-want +got):\n%s", diff)
			}
			got := noteLines(notes)
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], repo, "REPO")
			}
			if !slices.Contains(got, tt.wantNote) {
				t.Errorf("notes = %q, want them to contain %q", got, tt.wantNote)
			}
		})
	}
}

// chartRepo is a repository with a local chart whose image tag comes from
// its values; app.yaml is added by each test.
var chartRepo = map[string]string{
	"charts/web/Chart.yaml":  "apiVersion: v2\nname: web\nversion: 0.1.0\n",
	"charts/web/values.yaml": "tag: latest\n",
	"charts/web/templates/pod.yaml": `apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}
spec:
  containers:
    - name: web
      image: "nginx:{{ .Values.tag }}"
`,
	"charts/web/values-prod.yaml": "tag: \"1.27.3\"\n",
}

// chartApp is an Application of chartRepo's chart with the given source
// fields (YAML flow mapping entries).
func chartApp(fields string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  source: {repoURL: "https://example.com/r.git", path: charts/web, ` + fields + `}
  destination: {server: https://kubernetes.default.svc, namespace: web}
`
}

func TestRunApplicationSourceOptions(t *testing.T) {
	tests := []struct {
		name   string
		fields string
		// files are added to chartRepo.
		files    map[string]string
		wantRows []string
	}{
		{
			// Argo CD merges the override files (argocd-image-updater's
			// write-back) into the source before it renders.
			name:   "override files",
			fields: "helm: {valueFiles: [values-prod.yaml]}",
			files: map[string]string{
				"charts/web/.argocd-source.yaml":     "helm:\n  parameters: [{name: tag, value: \"1.0\"}]\n",
				"charts/web/.argocd-source-web.yaml": "helm:\n  parameters: [{name: tag, value: latest}]\n",
			},
			wantRows: []string{
				"app.yaml Application/web app= default-project missing-resources-finalizer",
				"charts/web/templates/pod.yaml Pod/web app=web no-latest-tag",
			},
		},
		{
			name:   "value files",
			fields: "helm: {valueFiles: [values-prod.yaml]}",
			wantRows: []string{
				"app.yaml Application/web app= default-project missing-resources-finalizer",
				"charts/web/templates/pod.yaml Pod/web app=web",
			},
		},
		{
			name:   "a missing value file ignored with ignoreMissingValueFiles",
			fields: "helm: {valueFiles: [values-prod.yaml, values-missing.yaml], ignoreMissingValueFiles: true}",
			wantRows: []string{
				"app.yaml Application/web app= default-project missing-resources-finalizer",
				"charts/web/templates/pod.yaml Pod/web app=web",
			},
		},
		{
			// The Application renders nothing and is an error result;
			// its chart's walked copy is not reported a second time.
			name:   "a missing value file",
			fields: "helm: {valueFiles: [values-prod.yaml, values-missing.yaml]}",
			wantRows: []string{
				"app.yaml Application/web app= default-project missing-resources-finalizer",
				"app.yaml Application/web app= ERROR spec.source: render helm charts/web: read value file values-missing.yaml: file does not exist",
			},
		},
		{
			// The engine refuses the source; so does tollgate test, with the
			// engine's message, as it reports a failed render. Nothing was
			// rendered for the Application, so the chart is judged as
			// walked.
			name:   "a field tollgate does not honour",
			fields: "helm: {valueFiles: [values-prod.yaml]}, tagPrefix: web/",
			wantRows: []string{
				"app.yaml Application/web app= default-project missing-resources-finalizer",
				"app.yaml Application/web app= ERROR spec.source.tagPrefix is not supported: a Git targetRevision is not read as a semver constraint over tags",
				"charts/web/templates/pod.yaml Pod/release-name app= no-latest-tag",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			testutil.WriteFiles(t, repo, chartRepo)
			testutil.WriteFiles(t, repo, map[string]string{"app.yaml": chartApp(tt.fields)})
			testutil.WriteFiles(t, repo, tt.files)
			rep, _, err := Run(t.Context(), Options{Paths: []string{repo}, RepoRoot: repo, RepoURL: "https://example.com/r"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantRows, resultRows(rep)); diff != "" {
				t.Errorf("results mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderApplication(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, chartRepo)
	tests := []struct {
		name    string
		fields  string
		repoURL string
		// want are the rendered objects' "kind/name image".
		want    []string
		wantErr string
	}{
		{
			name:    "a source of the repository, spelled otherwise",
			fields:  "helm: {valueFiles: [values-prod.yaml]}",
			repoURL: "HTTPS://example.com/r/",
			want:    []string{"Pod/web nginx:1.27.3"},
		},
		{
			name:    "a source of another repository",
			repoURL: "https://example.com/other",
		},
		{
			name:    "a field tollgate does not honour",
			fields:  "tagPrefix: web/",
			repoURL: "https://example.com/r",
			wantErr: "spec.source.tagPrefix is not supported: a Git targetRevision is not read as a semver constraint over tags",
		},
		{
			name:    "a failed render",
			fields:  "helm: {valueFiles: [values-missing.yaml]}",
			repoURL: "https://example.com/r",
			wantErr: "spec.source: render helm charts/web: read value file values-missing.yaml: file does not exist",
		},
		{
			name:    "not a repository URL",
			repoURL: "../r",
			wantErr: `render application: "../r" is not a repository URL`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := RenderApplication(t.Context(), decodeApp(t, chartApp(tt.fields)), repo, tt.repoURL, nil)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				kind, _ := nestedString(o, "kind")
				name, _ := nestedString(o, "metadata", "name")
				containers, _ := o["spec"].(map[string]any)["containers"].([]any)
				image, _ := containers[0].(map[string]any)["image"].(string)
				got = append(got, kind+"/"+name+" "+image)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("objects mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
