package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/policies/report"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// fixtureURL is the repository URL the Applications in testdata/repo use.
const fixtureURL = "https://git.example.com/acme/shop-config.git"

func TestTestGolden(t *testing.T) {
	for _, format := range report.Formats() {
		t.Run(format, func(t *testing.T) {
			r := runCLI(t, nil, "test", "-o", format,
				"--repo-url", fixtureURL, "--repo-root", "testdata/repo", "testdata/repo")
			if r.code != exitDenied {
				t.Fatalf("exit code = %d, want %d (error %q, stderr %q)", r.code, exitDenied, r.err, r.stderr)
			}
			checkGolden(t, "test-"+format+".golden", r.stdout)
			wantStderr := ""
			if format == report.FormatText {
				wantStderr = "note: raw/ci.yaml:1: skipped: not a Kubernetes object (no apiVersion or kind)\n"
			}
			if diff := cmp.Diff(wantStderr, r.stderr); diff != "" {
				t.Errorf("stderr mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// resultRows returns "file kind/name app=application rules" for each
// result of a json report.
func resultRows(t *testing.T, stdout string) []string {
	t.Helper()
	var r struct {
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

// violationLines returns the DENY and WARN lines of a text report.
func violationLines(stdout string) []string {
	var out []string
	for _, l := range lines(stdout) {
		if strings.HasPrefix(l, "DENY ") || strings.HasPrefix(l, "WARN ") {
			out = append(out, l)
		}
	}
	return out
}

// ruleTags returns "DENY [rule] file:line" for every violation line, enough
// to tell which rule fired where without the messages.
func ruleTags(stdout string) []string {
	var out []string
	for _, l := range violationLines(stdout) {
		fields := strings.Fields(l)
		rule := ""
		for _, f := range fields {
			if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
				rule = f
				break
			}
		}
		out = append(out, fields[0]+" "+rule+" "+fields[1])
	}
	return out
}

func TestTestCommand(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, map[string]string{
		"config/off.yaml":    "rules:\n  no-latest-tag: off\n",
		"config/warn.yaml":   "rules:\n  no-latest-tag: warn\n",
		"config/gitops.yaml": "argocdNamespace: gitops\n",
		"projects/team.yaml": `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: team
  namespace: argocd
spec:
  sourceRepos: ["*"]
  destinations:
    - server: https://kubernetes.default.svc
      namespace: team-*
`,
		"apps/app.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: app
  namespace: argocd
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: team
  source:
    repoURL: https://example.com/other.git
    path: x
  destination:
    server: https://kubernetes.default.svc
    namespace: other
`,
		"chart/Chart.yaml":  "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"chart/values.yaml": "tag: \"1.0\"\n",
		"chart/templates/pod.yaml": `apiVersion: v1
kind: Pod
metadata:
  name: c
spec:
  containers:
    - name: c
      image: "nginx:{{ .Values.tag }}"
`,
		"values-latest.yaml":  "tag: latest\n",
		"capchart/Chart.yaml": "apiVersion: v2\nname: caps\nversion: 0.1.0\n",
		"capchart/templates/pod.yaml": `apiVersion: v1
kind: Pod
metadata:
  name: caps
spec:
  containers:
    - name: c
      image: "nginx:{{ if or (semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version) (.Capabilities.APIVersions.Has "example.com/v1/Widget") }}latest{{ else }}1.0{{ end }}"
`,
		"overlay/kustomization.yaml": "resources: [deploy.yaml]\n",
		"overlay/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.27
`,
		"jsonnet/deploy.jsonnet": `function(tag='1.0') {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'j' },
  spec: { selector: { matchLabels: { app: 'j' } }, template: { metadata: { labels: { app: 'j' } },
    spec: { containers: [{ name: 'j', image: 'nginx:' + tag }] } } },
}
`,
		"jsonnet-plain/pods.jsonnet": `[{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'p', image: 'busybox:latest' }] } }]
`,
		"jsonnet-app/app.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: jsonnet
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://example.com/tenant.git
    path: jsonnet
    directory:
      jsonnet:
        tlas: [{name: tag, value: latest}]
  destination:
    server: https://kubernetes.default.svc
    namespace: web
`,
		"patched/app.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: patched
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://example.com/tenant.git
    path: overlay
    kustomize:
      patches:
        - target: {kind: Deployment, name: web}
          patch: |-
            - op: replace
              path: /spec/template/spec/containers/0/image
              value: nginx:latest
  destination:
    server: https://kubernetes.default.svc
    namespace: web
`,
		"exempt-other.yaml": `apiVersion: v1
kind: Pod
metadata:
  name: debug
  annotations:
    tollgate.dev/exempt: hpa-replicas-conflict
spec:
  containers:
    - name: shell
      image: busybox:latest
`,
	})
	pod := "testdata/repo/raw/pod.json"
	workloads := "testdata/repo/raw/workloads.yaml"
	tests := []struct {
		name     string
		args     []string
		wantCode int
		// wantTags are the ruleTags of the text output.
		wantTags []string
		// wantErr is a substring of the error message.
		wantErr string
	}{
		{
			name:     "warnings alone pass",
			args:     []string{workloads},
			wantCode: exitOK,
			wantTags: []string{"WARN [hpa-replicas-conflict] testdata/repo/raw/workloads.yaml:13"},
		},
		{
			name:     "fail-on-warn fails on warnings",
			args:     []string{"--fail-on-warn", workloads},
			wantCode: exitDenied,
			wantTags: []string{"WARN [hpa-replicas-conflict] testdata/repo/raw/workloads.yaml:13"},
		},
		{
			name:     "config turns a rule off",
			args:     []string{"--config", filepath.Join(repo, "config/off.yaml"), pod},
			wantCode: exitOK,
		},
		{
			name:     "config downgrades a rule to warn",
			args:     []string{"--config", filepath.Join(repo, "config/warn.yaml"), pod},
			wantCode: exitOK,
			wantTags: []string{"WARN [no-latest-tag] testdata/repo/raw/pod.json:7"},
		},
		{
			name:     "config warn with fail-on-warn",
			args:     []string{"--fail-on-warn", "--config", filepath.Join(repo, "config/warn.yaml"), pod},
			wantCode: exitDenied,
			wantTags: []string{"WARN [no-latest-tag] testdata/repo/raw/pod.json:7"},
		},
		{
			name:     "user policy without built-in rules",
			args:     []string{"--no-builtin", "--policy", "testdata/policy", workloads},
			wantCode: exitDenied,
			wantTags: []string{"DENY [main] testdata/repo/raw/workloads.yaml:1"},
		},
		{
			name:     "namespace selects user packages",
			args:     []string{"--no-builtin", "--policy", "testdata/policy", "--policy", "testdata/policy-extra", "--namespace", "extra", pod, workloads},
			wantCode: exitOK,
			wantTags: []string{"WARN [extra] testdata/repo/raw/pod.json:1"},
		},
		{
			name:     "user policies join the built-in rules",
			args:     []string{"--policy", "testdata/policy", workloads},
			wantCode: exitDenied,
			wantTags: []string{
				"DENY [main] testdata/repo/raw/workloads.yaml:1",
				"WARN [hpa-replicas-conflict] testdata/repo/raw/workloads.yaml:13",
			},
		},
		{
			name:     "exemption annotation",
			args:     []string{"testdata/repo/raw/exempt.yaml"},
			wantCode: exitOK,
		},
		{
			name:     "exemption of another rule",
			args:     []string{"--repo-root", repo, filepath.Join(repo, "exempt-other.yaml")},
			wantCode: exitDenied,
			wantTags: []string{"DENY [no-latest-tag] exempt-other.yaml:10"},
		},
		{
			name:     "application without its project",
			args:     []string{"--repo-root", repo, filepath.Join(repo, "apps")},
			wantCode: exitDenied,
			wantTags: []string{"DENY [project-not-found] apps/app.yaml:8"},
		},
		{
			name:     "project from --project",
			args:     []string{"--repo-root", repo, "--project", filepath.Join(repo, "projects/team.yaml"), filepath.Join(repo, "apps")},
			wantCode: exitDenied,
			wantTags: []string{"DENY [project-destination-denied] apps/app.yaml:12"},
		},
		{
			name:     "argocd namespace from config",
			args:     []string{"--repo-root", repo, "--config", filepath.Join(repo, "config/gitops.yaml"), filepath.Join(repo, "projects")},
			wantCode: exitDenied,
			wantTags: []string{"DENY [app-namespace] projects/team.yaml:5"},
		},
		{
			name:     "argocd-namespace flag overrides config",
			args:     []string{"--repo-root", repo, "--config", filepath.Join(repo, "config/gitops.yaml"), "--argocd-namespace", "argocd", filepath.Join(repo, "projects")},
			wantCode: exitOK,
		},
		{
			name:     "chart rendered with its values",
			args:     []string{"--repo-root", repo, filepath.Join(repo, "chart")},
			wantCode: exitOK,
		},
		{
			name:     "chart rendered with --helm-values",
			args:     []string{"--repo-root", repo, "--helm-values", filepath.Join(repo, "values-latest.yaml"), filepath.Join(repo, "chart")},
			wantCode: exitDenied,
			wantTags: []string{"DENY [no-latest-tag] chart/templates/pod.yaml"},
		},
		{
			name:     "chart templates named directly render the chart",
			args:     []string{"--repo-root", repo, "--helm-values", filepath.Join(repo, "values-latest.yaml"), filepath.Join(repo, "chart/templates/pod.yaml")},
			wantCode: exitDenied,
			wantTags: []string{"DENY [no-latest-tag] chart/templates/pod.yaml"},
		},
		{
			// The image comes from the Application's Kustomize patch.
			name:     "Application kustomize patches are rendered",
			args:     []string{"--repo-root", repo, "--repo-url", "https://example.com/tenant.git", filepath.Join(repo, "patched")},
			wantCode: exitDenied,
			wantTags: []string{
				"DENY [no-latest-tag] overlay/deploy.yaml:1",
				"WARN [default-project] patched/app.yaml:7",
				"WARN [missing-resources-finalizer] patched/app.yaml:3",
			},
		},
		{
			name:     "Jsonnet files of a directory are evaluated",
			args:     []string{"--repo-root", repo, filepath.Join(repo, "jsonnet"), filepath.Join(repo, "jsonnet-plain")},
			wantCode: exitDenied,
			wantTags: []string{"DENY [no-latest-tag] jsonnet-plain/pods.jsonnet"},
		},
		{
			name:     "Application Jsonnet top-level arguments",
			args:     []string{"--repo-root", repo, "--repo-url", "https://example.com/tenant.git", filepath.Join(repo, "jsonnet-app")},
			wantCode: exitDenied,
			wantTags: []string{
				"WARN [default-project] jsonnet-app/app.yaml:7",
				"WARN [missing-resources-finalizer] jsonnet-app/app.yaml:3",
				"DENY [no-latest-tag] jsonnet/deploy.jsonnet",
			},
		},
		{
			name:     "chart capabilities default to the Helm SDK's",
			args:     []string{"--repo-root", repo, filepath.Join(repo, "capchart")},
			wantCode: exitOK,
		},
		{
			name:     "chart rendered for --kube-version",
			args:     []string{"--repo-root", repo, "--kube-version", "v1.31.2+k3s1", filepath.Join(repo, "capchart")},
			wantCode: exitDenied,
			wantTags: []string{"DENY [no-latest-tag] capchart/templates/pod.yaml"},
		},
		{
			name:     "chart rendered with --api-versions",
			args:     []string{"--repo-root", repo, "--api-versions", "example.com/v1/Widget", filepath.Join(repo, "capchart")},
			wantCode: exitDenied,
			wantTags: []string{"DENY [no-latest-tag] capchart/templates/pod.yaml"},
		},
		{
			name:     "invalid --kube-version",
			args:     []string{"--kube-version", "latest", pod},
			wantCode: exitUsage,
			wantErr:  `invalid --kube-version "latest"`,
		},
		{
			name:     "unknown output format",
			args:     []string{"-o", "xml", pod},
			wantCode: exitUsage,
			wantErr:  `invalid --output "xml": valid formats are text, json, junit, sarif, github`,
		},
		{
			name:     "no-builtin without policies",
			args:     []string{"--no-builtin", pod},
			wantCode: exitUsage,
			wantErr:  "--no-builtin without --policy",
		},
		{
			name:     "no paths",
			args:     nil,
			wantCode: exitUsage,
			wantErr:  "requires at least 1 arg",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, nil, append([]string{"test"}, tt.args...)...)
			if r.code != tt.wantCode {
				t.Fatalf("exit code = %d, want %d (error %q)\nstdout:\n%s", r.code, tt.wantCode, r.err, r.stdout)
			}
			if tt.wantErr != "" && !strings.Contains(r.err, tt.wantErr) {
				t.Errorf("error = %q, want it to contain %q", r.err, tt.wantErr)
			}
			if tt.wantCode == exitUsage {
				return
			}
			if diff := cmp.Diff(tt.wantTags, ruleTags(r.stdout)); diff != "" {
				t.Errorf("violations mismatch (-want +got):\n%s\nstdout:\n%s", diff, r.stdout)
			}
		})
	}
}

func TestTestNotesOnlyInText(t *testing.T) {
	for _, format := range report.Formats() {
		t.Run(format, func(t *testing.T) {
			r := runCLI(t, nil, "test", "-o", format, "testdata/repo/raw/ci.yaml")
			if r.code != exitOK {
				t.Fatalf("exit code = %d, want 0 (error %q)", r.code, r.err)
			}
			want := ""
			if format == report.FormatText {
				want = "note: testdata/repo/raw/ci.yaml:1: skipped: not a Kubernetes object (no apiVersion or kind)\n"
			}
			if diff := cmp.Diff(want, r.stderr); diff != "" {
				t.Errorf("stderr mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTestSymlinkedDirectoryArgument(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, map[string]string{"real/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - {name: c, image: nginx}\n"})
	if err := os.Symlink("real", filepath.Join(repo, "link")); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, nil, "test", "--repo-root", repo, filepath.Join(repo, "link"))
	if r.code != exitDenied {
		t.Fatalf("exit code = %d, want %d (error %q)\n%s", r.code, exitDenied, r.err, r.stdout)
	}
	want := []string{"DENY [no-latest-tag] real/pod.yaml:6"}
	if diff := cmp.Diff(want, ruleTags(r.stdout)); diff != "" {
		t.Errorf("violations mismatch (-want +got):\n%s", diff)
	}
}

// TestTestRenderErrorHidesNothing is the run issue #17 describes on
// argoproj/argocd-example-apps: one Application's chart has a dependency it
// does not vendor. That Application is an error result in every format,
// the other Applications and files are still judged, and the run exits 2
// after the report.
func TestTestRenderErrorHidesNothing(t *testing.T) {
	repo := t.TempDir()
	app := func(name, path string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: " + name +
			"\n  namespace: argocd\n  finalizers: [resources-finalizer.argocd.argoproj.io]\nspec:\n  project: default\n  source:\n    repoURL: " +
			fixtureURL + "\n    path: " + path + "\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: shop\n"
	}
	testutil.WriteFiles(t, repo, map[string]string{
		"apps/helm-deps.yaml": app("helm-deps", "charts/deps"),
		"apps/web.yaml":       app("web", "web"),
		"charts/deps/Chart.yaml": "apiVersion: v2\nname: deps\nversion: 0.1.0\ndependencies:\n" +
			"- name: redis\n  version: 17.0.0\n  repository: https://charts.example.com\n",
		"charts/deps/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deps\n",
		"web/deployment.yaml":           strings.Replace(deployment, "nginx:1.27.3", "nginx:latest", 1),
	})
	for _, tt := range []struct {
		format    string
		errorMark string
	}{
		{report.FormatText, "ERROR  apps/helm-deps.yaml:1  Application/helm-deps  spec.source: "},
		{report.FormatJSON, `"error": "spec.source: `},
		{report.FormatJUnit, `<error message="spec.source: `},
		{report.FormatSARIF, `"text": "Application/helm-deps: spec.source: `},
		{report.FormatGitHub, "::error file=apps/helm-deps.yaml,line=1,title=error::Application/helm-deps: spec.source: "},
	} {
		t.Run(tt.format, func(t *testing.T) {
			r := runCLI(t, nil, "test", "-o", tt.format, "--repo-url", fixtureURL, "--repo-root", repo, repo)
			if r.code != exitUsage {
				t.Fatalf("exit code = %d, want %d (error %q)\n%s", r.code, exitUsage, r.err, r.stdout)
			}
			for _, want := range []string{tt.errorMark, "redis", "no-latest-tag"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("report lacks %q:\n%s", want, r.stdout)
				}
			}
			if !strings.Contains(r.err, "1 of the files, directories and Applications checked could not be decoded or rendered") {
				t.Errorf("error = %q", r.err)
			}
		})
	}
}
