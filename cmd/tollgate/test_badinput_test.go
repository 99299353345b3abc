package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/test/testutil"
)

// aliasBomb returns a manifest whose anchors expand to 10^9 nodes.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 8; i++ {
		p := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.Repeat(p+", ", 9)+p)
	}
	return b.String()
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          image: nginx:1.27.3
`

func TestTestBadInput(t *testing.T) {
	tests := []struct {
		name string
		// files are written into the repository root before the run.
		files map[string]string
		// setup prepares what files cannot: large, binary or linked files.
		setup func(t *testing.T, repo, outside string)
		// args follow "test --repo-root REPO"; REPO is replaced.
		args []string
		// wantErr are substrings of the error message, or with reported
		// of the report.
		wantErr []string
		// reported: the input error concerns one file, directory or
		// Application, which the report lists as an ERROR while the rest
		// (other.yaml, added to files) is judged; the run still exits 2.
		reported bool
	}{
		{
			name:     "malformed YAML",
			reported: true,
			files:    map[string]string{"bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n"},
			args:     []string{"REPO"},
			wantErr:  []string{"ERROR  bad.yaml:4  document 1 (line 4): "},
		},
		{
			name:     "malformed second document",
			reported: true,
			files:    map[string]string{"bad.yaml": deployment + "---\napiVersion: v1\nkind: ConfigMap\n\tdata: x\n"},
			args:     []string{"REPO"},
			wantErr:  []string{"ERROR  bad.yaml:1", "document 2 (line 1"},
		},
		{
			name:     "alias bomb",
			reported: true,
			files:    map[string]string{"bomb.yaml": aliasBomb()},
			args:     []string{"REPO"},
			wantErr:  []string{"ERROR  bomb.yaml:1  document 1 (line 1): ", "too many YAML nodes"},
		},
		{
			name:     "50 MB file",
			reported: true,
			setup: func(t *testing.T, repo, _ string) {
				f, err := os.Create(filepath.Join(repo, "huge.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := f.Truncate(50 << 20); err != nil {
					t.Fatal(err)
				}
			},
			args:    []string{"REPO"},
			wantErr: []string{"ERROR  huge.yaml  file too large: 52428800 bytes"},
		},
		{
			name:     "document without kind",
			reported: true,
			files:    map[string]string{"nokind.yaml": "apiVersion: v1\nmetadata: {name: x}\n"},
			args:     []string{"REPO"},
			wantErr:  []string{"ERROR  nokind.yaml:1  document 1 (line 1): object has apiVersion \"v1\" but no kind"},
		},
		{
			name:     "binary file",
			reported: true,
			setup: func(t *testing.T, repo, _ string) {
				if err := os.WriteFile(filepath.Join(repo, "blob.yaml"), []byte("\x7fELF\x02\x01\x01\x00\x00\x00"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			args:    []string{"REPO"},
			wantErr: []string{"ERROR  blob.yaml  binary file: not UTF-8 text"},
		},
		{
			name:     "symlink out of the repository",
			reported: true,
			setup: func(t *testing.T, repo, outside string) {
				target := filepath.Join(outside, "secret.yaml")
				if err := os.WriteFile(target, []byte(deployment), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, filepath.Join(repo, "link.yaml")); err != nil {
					t.Fatal(err)
				}
			},
			args:    []string{"REPO"},
			wantErr: []string{"link.yaml", "outside the repository root"},
		},
		{
			name:     "kustomization reaching out of the repository",
			reported: true,
			files: map[string]string{
				"apps/web/kustomization.yaml": "resources:\n  - ../../../outside\n",
			},
			setup: func(t *testing.T, _, outside string) {
				testutil.WriteFiles(t, outside, map[string]string{"kustomization.yaml": "resources: [d.yaml]\n", "d.yaml": deployment})
			},
			args:    []string{"REPO"},
			wantErr: []string{"render kustomize apps/web"},
		},
		{
			name:     "helm template error",
			reported: true,
			files: map[string]string{
				"chart/Chart.yaml":          "apiVersion: v2\nname: c\nversion: 0.1.0\n",
				"chart/templates/pod.yaml":  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ required \"name is required\" .Values.name }}\n",
				"chart/templates/_util.tpl": "{{- define \"x\" -}}x{{- end -}}\n",
			},
			args:    []string{"REPO"},
			wantErr: []string{"render helm chart", "name is required"},
		},
		{
			name:    "Rego that does not compile",
			files:   map[string]string{"policy/bad.rego": "package main\n\ndeny contains msg if {\n\tmsg := undefined_function(input)\n}\n", "d.yaml": deployment},
			args:    []string{"--policy", "REPO/policy", "REPO/d.yaml"},
			wantErr: []string{"bad.rego:4", "undefined_function"},
		},
		{
			name: "Rego that runs away",
			files: map[string]string{
				"policy/slow.rego": "package main\n\ndeny contains msg if {\n\tsome x in numbers.range(1, 100000)\n\tsome y in numbers.range(1, 100000)\n\tx * y == -1\n\tmsg := \"never\"\n}\n",
				"d.yaml":           deployment,
			},
			args:    []string{"--policy", "REPO/policy", "REPO/d.yaml"},
			wantErr: []string{"d.yaml:1: document 1: evaluate policies for Deployment/web", "exceeded"},
		},
		{
			name:     "Application path out of the repository",
			reported: true,
			files: map[string]string{"app.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: escape, namespace: argocd}
spec:
  source: {repoURL: https://example.com/r.git, path: ../../..}
  destination: {server: https://kubernetes.default.svc, namespace: x}
`},
			args:    []string{"--repo-url", "https://example.com/r", "REPO"},
			wantErr: []string{`ERROR  app.yaml:1  Application/escape  spec.source: render ../../..: outside the repository root`},
		},
		{
			name:     "Application field of the wrong type",
			reported: true,
			files: map[string]string{"app.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: typo, namespace: argocd}
spec:
  source: {repoURL: https://example.com/r.git, path: x, helm: {valueFiles: values.yaml}}
`},
			args:    []string{"--repo-url", "https://example.com/r", "REPO"},
			wantErr: []string{`ERROR  app.yaml:1  Application/typo  spec.source.helm.valueFiles: want a list of strings, got a string`},
		},
		{
			// The engine refuses a source with a field tollgate does not
			// honour; tollgate test refuses it the same way, with the
			// engine's message, as it reports a render that failed.
			name:     "Application field tollgate does not honour",
			reported: true,
			files: map[string]string{"app.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: patched, namespace: argocd}
spec:
  source:
    repoURL: https://example.com/r.git
    path: x
    kustomize: {version: v5.4.0}
`},
			args:    []string{"--repo-url", "https://example.com/r", "REPO"},
			wantErr: []string{`ERROR  app.yaml:1  Application/patched  spec.source.kustomize.version is not supported`},
		},
		{
			name:    "repository URL that is not one",
			files:   map[string]string{"d.yaml": deployment},
			args:    []string{"--repo-url", "not a url", "REPO/d.yaml"},
			wantErr: []string{`invalid --repo-url "not a url": not a repository URL`},
		},
		{
			name:    "missing path",
			args:    []string{"REPO/nope"},
			wantErr: []string{"nope", "no such file or directory"},
		},
		{
			name:    "config with an unknown rule",
			files:   map[string]string{"cfg.yaml": "rules:\n  no-such-rule: warn\n", "d.yaml": deployment},
			args:    []string{"--config", "REPO/cfg.yaml", "REPO/d.yaml"},
			wantErr: []string{"cfg.yaml", `unknown rule id "no-such-rule"`},
		},
		{
			name:    "project file without a project",
			files:   map[string]string{"d.yaml": deployment},
			args:    []string{"--project", "REPO/d.yaml", "REPO/d.yaml"},
			wantErr: []string{"read project REPO/d.yaml: no AppProject"},
		},
		{
			name:    "malformed helm values",
			files:   map[string]string{"v.yaml": "a: [\n", "d.yaml": deployment},
			args:    []string{"--helm-values", "REPO/v.yaml", "REPO/d.yaml"},
			wantErr: []string{"read helm values REPO/v.yaml"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			repo := filepath.Join(parent, "repo")
			outside := filepath.Join(parent, "outside")
			for _, d := range []string{repo, outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			testutil.WriteFiles(t, repo, tt.files)
			if tt.reported {
				testutil.WriteFiles(t, repo, map[string]string{"other.yaml": strings.Replace(deployment, "nginx:1.27.3", "nginx:latest", 1)})
			}
			if tt.setup != nil {
				tt.setup(t, repo, outside)
			}
			args := []string{"test", "--repo-root", repo}
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "REPO", repo))
			}
			r := runCLI(t, nil, args...)
			if r.code != exitUsage {
				t.Fatalf("exit code = %d, want %d (error %q)\nstdout:\n%s", r.code, exitUsage, r.err, r.stdout)
			}
			msg := strings.ReplaceAll(r.err, repo, "REPO")
			if tt.reported {
				msg = strings.ReplaceAll(r.stdout, repo, "REPO")
				if !strings.Contains(r.stdout, "DENY  other.yaml:") || !strings.Contains(r.err, "could not be decoded or rendered") {
					t.Errorf("the rest was not judged, or no error was printed\nstdout:\n%s\nstderr: %s", r.stdout, r.err)
				}
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(msg, want) {
					t.Errorf("report or error = %q, want it to contain %q", msg, want)
				}
			}
			if !tt.reported && r.stdout != "" {
				t.Errorf("stdout = %q, want no report on an input error", r.stdout)
			}
		})
	}
}
