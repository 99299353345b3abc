package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWebhookBadInput covers what `tollgate webhook` rejects before it
// talks to a cluster: each is a usage error (exit 2) naming the input.
func TestWebhookBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badMode := write("mode.yaml", "mode: strict\n")
	unknownField := write("field.yaml", "exemptNamespace: [a]\n")
	unknownRule := write("rule.yaml", "rules:\n  no-such-rule: warn\n")
	missing := filepath.Join(dir, "missing.yaml")

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing config", []string{"--config", missing}, "load webhook config: open " + missing},
		{"invalid mode", []string{"--config", badMode}, "load webhook config " + badMode + `: mode: invalid mode "strict"`},
		{"unknown field", []string{"--config", unknownField}, "load webhook config " + unknownField + `: unknown field "exemptNamespace"`},
		{"unknown rule", []string{"--config", unknownRule}, `load policies: config: rules: unknown rule id "no-such-rule"`},
		{"bad port", []string{"--port", "70000"}, "--port 70000: want 1-65535"},
		{"missing kubeconfig", []string{"--kubeconfig", filepath.Join(dir, "kubeconfig")}, "load kubeconfig " + filepath.Join(dir, "kubeconfig")},
		{"missing cert dir", []string{"--kubeconfig", write("kc.yaml", kubeconfigYAML), "--cert-dir", filepath.Join(dir, "certs")}, "--cert-dir " + filepath.Join(dir, "certs")},
		{"stray argument", []string{"extra"}, `unknown command "extra"`},
		{"negative audit interval", []string{"--audit-interval", "-1m"}, "--audit-interval -1m0s: want 0 (off) or more"},
		{"empty audit pages", []string{"--audit-chunk-size", "0"}, "--audit-chunk-size 0: want at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, nil, append([]string{"webhook"}, tt.args...)...)
			if r.code != exitUsage || !strings.Contains(r.err, tt.want) {
				t.Errorf("tollgate webhook %v: exit %d, error %q; want exit %d and an error containing %q",
					tt.args, r.code, r.err, exitUsage, tt.want)
			}
		})
	}
}

// kubeconfigYAML points at a server that is never contacted.
const kubeconfigYAML = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`

// TestAuditBadInput: `tollgate audit` refuses bad flags and an unreachable
// or missing cluster with exit 2 and a message naming the cause.
func TestAuditBadInput(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kc.yaml")
	if err := os.WriteFile(kc, []byte(kubeconfigYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad output", []string{"-o", "xml"}, `invalid --output "xml": valid formats are text, json, junit, sarif, github`},
		{"empty pages", []string{"--audit-chunk-size", "0"}, "--audit-chunk-size 0: want at least 1"},
		{"missing config", []string{"--config", filepath.Join(dir, "missing.yaml")}, "load webhook config: open " + filepath.Join(dir, "missing.yaml")},
		{"missing kubeconfig", []string{"--kubeconfig", filepath.Join(dir, "none")}, "load kubeconfig " + filepath.Join(dir, "none")},
		{"stray argument", []string{"extra"}, `unknown command "extra"`},
		{"unreachable API server", []string{"--kubeconfig", kc}, "reach the API server https://127.0.0.1:1: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, nil, append([]string{"audit"}, tt.args...)...)
			if r.code != exitUsage || !strings.Contains(r.err, tt.want) {
				t.Errorf("tollgate audit %v: exit %d, error %q; want exit %d and an error containing %q",
					tt.args, r.code, r.err, exitUsage, tt.want)
			}
		})
	}
}
