package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary stand in for bin/tollgate as the render
// sandbox's child: `<test binary> render-worker` runs the command, not the
// tests.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == renderWorkerCmd {
		cmd := newRootCmd()
		cmd.SetArgs(os.Args[1:])
		if err := cmd.Execute(); err != nil {
			fmt.Fprintln(os.Stderr, "tollgate:", err)
			os.Exit(exitCode(err))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRenderLimits: a hostile chart or ApplicationSet template in a pull
// request is reported as an error naming the limit it passed, and
// tollgate test exits 2.
func TestRenderLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("loop/Chart.yaml", "apiVersion: v2\nname: loop\nversion: 0.1.0\n")
	write("loop/templates/cm.yaml", "{{- range $i := until 100000 }}{{ range $j := until 100000 }}{{ end }}{{ end }}\n")
	write("hog/Chart.yaml", "apiVersion: v2\nname: hog\nversion: 0.1.0\n")
	write("hog/templates/cm.yaml", `{{- $s := "x" }}{{ range until 40 }}{{ $s = printf "%s%s" $s $s }}{{ end }}`+"\n")
	appSet := func(name string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: hostile, namespace: argocd}
spec:
  goTemplate: true
  generators: [{list: {elements: [{env: a}]}}]
  template:
    metadata: {name: '` + name + `'}
    spec:
      project: default
      source: {repoURL: https://example.com/r.git, path: loop}
      destination: {server: https://kubernetes.default.svc, namespace: web}
`
	}
	write("sets/loop.yaml", appSet(`{{ range until 2000 }}{{ range until 2000 }}{{ range until 2000 }}{{ end }}{{ end }}{{ end }}x`))
	write("sets/hog.yaml", appSet(`{{ $s := repeat 1000000 "x" }}{{ range until 64 }}{{ $s = print $s $s }}{{ end }}x`))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a chart that loops forever", []string{"--render-timeout", "2s", "loop"}, "render stopped: it passed its time limit (2s)"},
		{"a chart that allocates without bound", []string{"--render-memory", "256Mi", "hog"}, "render stopped: it passed its memory limit (256 MiB)"},
		{"an ApplicationSet template that loops", []string{"--render-timeout", "2s", "sets/loop.yaml"}, "ApplicationSet generation stopped: it passed its time limit (2s)"},
		{"an ApplicationSet template that allocates", []string{"--render-memory", "256Mi", "sets/hog.yaml"}, "ApplicationSet generation stopped: it passed its memory limit (256 MiB)"},
		{"an invalid memory limit", []string{"--render-memory", "lots", "loop"}, `invalid --render-memory "lots"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"test", "--repo-root", dir, "--repo-url", "https://example.com/r.git"}, tt.args...)
			args[len(args)-1] = filepath.Join(dir, args[len(args)-1])
			r := runCLI(t, nil, args...)
			if r.code != exitUsage || !strings.Contains(r.err+r.stdout, tt.want) {
				t.Errorf("exit %d, error %q, report %q; want exit %d and an error containing %q", r.code, r.err, r.stdout, exitUsage, tt.want)
			}
		})
	}
}
