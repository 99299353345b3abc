package webhook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tollgate-dev/tollgate/policies"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want func() Config
	}{
		{
			name: "empty document is the default",
			yaml: "\n",
			want: DefaultConfig,
		},
		{
			name: "fields replace defaults",
			yaml: `
argocdNamespace: gitops
mode: audit
rules:
  no-latest-tag: warn
  default-project: off
exemptNamespaces: [legacy]
exemptUsers: []
trackingMethod: annotation
`,
			want: func() Config {
				c := DefaultConfig()
				c.ArgoCDNamespace = "gitops"
				c.Mode = ModeAudit
				c.Rules = policies.RuleSeverities{"no-latest-tag": policies.SeverityWarn, "default-project": policies.SeverityOff}
				c.ExemptNamespaces = []string{"legacy"}
				c.ExemptUsers = []string{}
				c.TrackingMethod = TrackingAnnotation
				return c
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(tt.yaml))
			if err != nil {
				t.Fatalf("ParseConfig() error: %v", err)
			}
			if diff := cmp.Diff(tt.want(), got, cmpopts.IgnoreUnexported(policies.Config{})); diff != "" {
				t.Errorf("ParseConfig() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"unknown field", "exemptNamespace: [a]\n", `unknown field "exemptNamespace"`},
		{"duplicate key", "mode: audit\nmode: enforce\n", `"mode" already set in map`},
		{"bad mode", "mode: strict\n", `mode: invalid mode "strict" (want enforce or audit)`},
		{"bad tracking method", "trackingMethod: owner\n", `trackingMethod: invalid tracking method "owner" (want annotation, label or annotation+label)`},
		{"bad namespace", "exemptNamespaces: [ok, Not_OK]\n", `exemptNamespaces[1]: invalid namespace name "Not_OK"`},
		{"empty user", "exemptUsers: ['']\n", `exemptUsers[0]: invalid name "" (empty or surrounded by spaces)`},
		{"padded group", "exemptGroups: [' system:masters']\n", `exemptGroups[0]: invalid name " system:masters" (empty or surrounded by spaces)`},
		{"bad severity", "rules:\n  no-latest-tag: block\n", `invalid severity`},
		{"bad argocd namespace", "argocdNamespace: Argo\n", `argocdNamespace: invalid namespace name "Argo"`},
		{"not a map", "- a\n", `cannot unmarshal array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseConfig() error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("mode: audit\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("mood: audit\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("# "+strings.Repeat("x", maxConfigBytes)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	cfg, err := LoadConfig(good)
	if err != nil {
		t.Fatalf("LoadConfig(good) error: %v", err)
	}
	if cfg.Mode != ModeAudit || len(cfg.ExemptUsers) == 0 {
		t.Errorf("LoadConfig(good) = mode %q, %d exempt users; want audit over the defaults", cfg.Mode, len(cfg.ExemptUsers))
	}
	for _, tt := range []struct{ path, want string }{
		{bad, "load webhook config " + bad + `: unknown field "mood"`},
		{big, "load webhook config: " + big + ": larger than 1048576 bytes"},
		{filepath.Join(dir, "missing.yaml"), "load webhook config: open " + filepath.Join(dir, "missing.yaml") + ": no such file or directory"},
	} {
		if _, err := LoadConfig(tt.path); err == nil || err.Error() != tt.want {
			t.Errorf("LoadConfig(%s) error = %v, want %q", filepath.Base(tt.path), err, tt.want)
		}
	}
}

func TestLoadConfigWith(t *testing.T) {
	dir := t.TempDir()
	named := filepath.Join(dir, "named.yaml")
	if err := os.WriteFile(named, []byte("mode: audit\ntollgateNamespace: guard\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := policies.ConfigOverrides{FallbackTollgateNamespace: "tollgate-system"}
	tests := []struct {
		name string
		path string
		want func() Config
	}{
		{
			name: "no file: the defaults with the fallback",
			want: func() Config {
				c := DefaultConfig()
				c.TollgateNamespace = "tollgate-system"
				return c
			},
		},
		{
			name: "the file's namespace wins over the fallback",
			path: named,
			want: func() Config {
				c := DefaultConfig()
				c.Mode = ModeAudit
				c.TollgateNamespace = "guard"
				return c
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadConfigWith(tt.path, o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want(), got, cmpopts.IgnoreUnexported(policies.Config{})); diff != "" {
				t.Errorf("LoadConfigWith() (-want +got):\n%s", diff)
			}
		})
	}
	missing := filepath.Join(dir, "missing.yaml")
	if _, err := LoadConfigWith(missing, o); err == nil || !strings.HasPrefix(err.Error(), "load webhook config: open ") {
		t.Errorf("LoadConfigWith(missing) error = %v, want LoadConfig's", err)
	}
}

func TestDefaultConfig(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	// The kube-system controllers only: a tenant cannot create service
	// accounts in kube-system, but may well be able to create the
	// namespaces of tools the cluster does not run.
	wantUsers := []string{
		"system:kube-controller-manager",
		"system:serviceaccount:kube-system:cronjob-controller",
		"system:serviceaccount:kube-system:daemon-set-controller",
		"system:serviceaccount:kube-system:deployment-controller",
		"system:serviceaccount:kube-system:generic-garbage-collector",
		"system:serviceaccount:kube-system:job-controller",
		"system:serviceaccount:kube-system:namespace-controller",
		"system:serviceaccount:kube-system:replicaset-controller",
		"system:serviceaccount:kube-system:replication-controller",
		"system:serviceaccount:kube-system:statefulset-controller",
	}
	if diff := cmp.Diff(wantUsers, cfg.ExemptUsers); diff != "" {
		t.Errorf("DefaultConfig().ExemptUsers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"kube-system", "kube-public", "kube-node-lease"}, cfg.ExemptNamespaces); diff != "" {
		t.Errorf("DefaultConfig().ExemptNamespaces (-want +got):\n%s", diff)
	}
}
