package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

type jsonReportForTest struct {
	Results []struct {
		File        string `json:"file"`
		Kind        string `json:"kind"`
		Name        string `json:"name"`
		Application string `json:"application"`
		Violations  []struct {
			Rule string `json:"rule"`
		} `json:"violations"`
	} `json:"results"`
}

// resultRows returns "file kind/name app=application rules" for each
// result of a json report.
func resultRows(t *testing.T, stdout string) []string {
	t.Helper()
	var r jsonReportForTest
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("decode json report: %v\n%s", err, stdout)
	}
	var rows []string
	for _, res := range r.Results {
		row := res.File + " " + res.Kind + "/" + res.Name + " app=" + res.Application
		for _, v := range res.Violations {
			row += " " + v.Rule
		}
		rows = append(rows, row)
	}
	return rows
}

func TestTestAppOfApps(t *testing.T) {
	repo := t.TempDir()
	writeFiles(t, repo, appOfAppsRepo)

	r := runCLI(t, nil, "test", "-o", "json", "--repo-root", repo, repo)
	if r.code != exitOK {
		t.Fatalf("exit code = %d, want 0 (error %q)\n%s", r.code, r.err, r.stdout)
	}
	want := []string{
		"argocd/apps/web.yaml Application/web app=root",
		"argocd/platform.yaml AppProject/platform app=",
		"argocd/project.yaml AppProject/p app=",
		"argocd/root.yaml Application/root app=",
		"charts/web/templates/pod.yaml Pod/web app=web",
	}
	if diff := cmp.Diff(want, resultRows(t, r.stdout)); diff != "" {
		t.Errorf("results mismatch (-want +got):\n%s", diff)
	}
	if r.stderr != "" {
		t.Errorf("stderr = %q, want nothing in json mode", r.stderr)
	}

	r = runCLI(t, nil, "test", "--repo-root", repo, repo)
	wantNotes := []string{
		"note: envs/prod.yaml:1: skipped: not a Kubernetes object (no apiVersion or kind)",
		`note: argocd/apps/web.yaml:1: Application "web" spec.sources[1]: ref "values" only provides value files; not rendered on its own`,
		`note: argocd/apps/web.yaml:1: Application "web" spec.sources[2]: Helm chart "redis" from repository https://charts.bitnami.com/bitnami is not rendered (only sources from the repository under test are)`,
	}
	if diff := cmp.Diff(wantNotes, lines(r.stderr)); diff != "" {
		t.Errorf("notes mismatch (-want +got):\n%s", diff)
	}
}

func TestTestRepoURL(t *testing.T) {
	unrendered := []string{
		"argocd/apps/web.yaml Application/web app=",
		"argocd/platform.yaml AppProject/platform app=",
		"argocd/project.yaml AppProject/p app=",
		"argocd/root.yaml Application/root app=",
		"charts/web/templates/pod.yaml Pod/release-name app= no-latest-tag",
	}
	tests := []struct {
		name     string
		noGit    bool
		args     []string
		wantCode int
		wantRows []string
		// wantNote is one of the lines of stderr in text mode.
		wantNote string
	}{
		{
			name:     "explicit URL of the same repository",
			args:     []string{"--repo-url", "GIT@github.com:acme/config/"},
			wantCode: exitOK,
			wantRows: []string{
				"argocd/apps/web.yaml Application/web app=root",
				"argocd/platform.yaml AppProject/platform app=",
				"argocd/project.yaml AppProject/p app=",
				"argocd/root.yaml Application/root app=",
				"charts/web/templates/pod.yaml Pod/web app=web",
			},
			wantNote: `note: argocd/apps/web.yaml:1: Application "web" spec.sources[2]: Helm chart "redis" from repository https://charts.bitnami.com/bitnami is not rendered (only sources from the repository under test are)`,
		},
		{
			name:     "explicit URL of another repository",
			args:     []string{"--repo-url", "https://github.com/acme/other"},
			wantCode: exitDenied,
			wantRows: unrendered,
			wantNote: `note: argocd/root.yaml:1: Application "root" spec.source: repository git@github.com:acme/config.git is not the repository under test; not rendered`,
		},
		{
			name:     "no URL and no git repository",
			noGit:    true,
			wantCode: exitDenied,
			wantRows: unrendered,
			wantNote: "note: Applications are not rendered: no --repo-url given and no origin remote found for REPO",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			repo := filepath.Join(parent, "repo")
			writeFiles(t, repo, appOfAppsRepo)
			if tt.noGit {
				if err := os.RemoveAll(filepath.Join(repo, ".git")); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"test", "-o", "json", "--repo-root", repo}, tt.args...)
			r := runCLI(t, nil, append(args, repo)...)
			if r.code != tt.wantCode {
				t.Fatalf("exit code = %d, want %d (error %q)", r.code, tt.wantCode, r.err)
			}
			if diff := cmp.Diff(tt.wantRows, resultRows(t, r.stdout)); diff != "" {
				t.Errorf("results mismatch (-want +got):\n%s", diff)
			}
			r = runCLI(t, nil, append(args[:1], append(args[3:], repo)...)...)
			notes := lines(strings.ReplaceAll(r.stderr, repo, "REPO"))
			if !slices.Contains(notes, tt.wantNote) {
				t.Errorf("notes = %q, want them to contain %q", notes, tt.wantNote)
			}
		})
	}
}
