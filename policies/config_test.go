package policies

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    Config
		wantErr string
	}{
		{
			name: "full",
			yaml: `argocdNamespace: gitops
rules:
  no-latest-tag: warn
  default-project: off
  hpa-replicas-conflict: deny
exemptAnnotation: example.com/skip-policies
`,
			want: Config{
				ArgoCDNamespace: "gitops",
				Rules: RuleSeverities{
					"no-latest-tag":         SeverityWarn,
					"default-project":       SeverityOff,
					"hpa-replicas-conflict": SeverityDeny,
				},
				ExemptAnnotation: "example.com/skip-policies",
			},
		},
		{
			name: "quoted off",
			yaml: "rules:\n  default-project: \"off\"\n",
			want: Config{Rules: RuleSeverities{"default-project": SeverityOff}},
		},
		{
			name: "user rule ids are accepted here and checked by New",
			yaml: "rules:\n  main: warn\n  kubernetes.security: off\n",
			want: Config{Rules: RuleSeverities{"main": SeverityWarn, "kubernetes.security": SeverityOff}},
		},
		{
			name: "empty file",
			yaml: "",
			want: Config{},
		},
		{
			name: "comments only",
			yaml: "# nothing configured\n",
			want: Config{},
		},
		{
			name:    "unknown top-level field",
			yaml:    "argocdNamespace: argocd\nrulez:\n  no-latest-tag: warn\n",
			wantErr: `unknown field "rulez"`,
		},
		{
			name:    "invalid severity",
			yaml:    "rules:\n  no-latest-tag: error\n",
			wantErr: `rules: rule "no-latest-tag": invalid severity "error" (want deny, warn or off)`,
		},
		{
			name:    "yaml true is not a severity",
			yaml:    "rules:\n  no-latest-tag: on\n",
			wantErr: `rules: rule "no-latest-tag": invalid severity true`,
		},
		{
			name:    "numeric severity",
			yaml:    "rules:\n  no-latest-tag: 1\n",
			wantErr: `rules: rule "no-latest-tag": invalid severity 1`,
		},
		{
			name:    "rules is not a map",
			yaml:    "rules: [no-latest-tag]\n",
			wantErr: `rules: `,
		},
		{
			name:    "rule id with spaces",
			yaml:    "rules:\n  \"no latest\": warn\n",
			wantErr: `rules: rule "no latest": invalid rule id`,
		},
		{
			name:    "invalid namespace",
			yaml:    "argocdNamespace: Argo_CD\n",
			wantErr: `argocdNamespace: invalid namespace name "Argo_CD"`,
		},
		{
			name: "tracking method, shared by the webhook and the engine",
			yaml: "trackingMethod: annotation+label\n",
			want: Config{TrackingMethod: TrackingAnnotationAndLabel},
		},
		{
			name:    "invalid tracking method",
			yaml:    "trackingMethod: owner\n",
			wantErr: `trackingMethod: invalid tracking method "owner" (want annotation, label or annotation+label)`,
		},
		{
			name:    "invalid annotation",
			yaml:    "exemptAnnotation: \"not valid/\"\n",
			wantErr: `exemptAnnotation: invalid annotation name`,
		},
		{
			name:    "duplicate key",
			yaml:    "rules:\n  no-latest-tag: warn\n  no-latest-tag: off\n",
			wantErr: `already set in map`,
		},
		{
			name:    "not yaml",
			yaml:    "rules: {\n",
			wantErr: `yaml: line`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tollgate.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadConfig(path)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("LoadConfig() = %+v, want error containing %q", got, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("LoadConfig() error = %q, want it to name %s and contain %q", err, path, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadConfig() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(Config{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("LoadConfig() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.yaml")
	_, err := LoadConfig(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("LoadConfig() error = %v, want one naming %s", err, path)
	}
}

func TestLoadConfigTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.yaml")
	data := "# " + strings.Repeat("x", maxConfigBytes) + "\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(path)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("LoadConfig() error = %v, want a size error", err)
	}
}

func TestNewRejectsUnknownRuleIDs(t *testing.T) {
	dir := writePolicies(t, map[string]string{
		"main.rego": `package main

deny contains {"msg": "too few replicas", "rule": "min-replicas"} if input.spec.replicas < 2
`,
	})
	path := filepath.Join(t.TempDir(), "tollgate.yaml")
	if err := os.WriteFile(path, []byte("rules:\n  no-lastest-tag: warn\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		cfg     Config
		dirs    []string
		checks  []RuleInfo
		wantErr string
	}{
		{name: "built-in id", cfg: Config{Rules: RuleSeverities{"no-latest-tag": SeverityWarn}}},
		{name: "user package id", cfg: Config{Rules: RuleSeverities{"main": SeverityWarn}}, dirs: []string{dir}},
		{name: "user literal rule id", cfg: Config{Rules: RuleSeverities{"min-replicas": SeverityOff}}, dirs: []string{dir}},
		{
			name:   "declared check rule id",
			cfg:    Config{Rules: RuleSeverities{"sealed-secret": SeverityWarn}},
			checks: []RuleInfo{{ID: "sealed-secret", Severity: SeverityDeny}},
		},
		{
			name:    "undeclared check rule id",
			cfg:     Config{Rules: RuleSeverities{"sealed-secret": SeverityWarn}},
			wantErr: `config: rules: unknown rule id "sealed-secret"`,
		},
		{
			name:    "invalid check rule severity",
			checks:  []RuleInfo{{ID: "sealed-secret", Severity: "block"}},
			wantErr: `declare check rule "sealed-secret": invalid severity "block"`,
		},
		{
			name:    "user id without user policies",
			cfg:     Config{Rules: RuleSeverities{"min-replicas": SeverityOff}},
			wantErr: `config: rules: unknown rule id "min-replicas"`,
		},
		{
			name:    "typo names the file",
			cfg:     fromFile,
			dirs:    []string{dir},
			wantErr: `config ` + path + `: rules: unknown rule id "no-lastest-tag"`,
		},
		{
			name:    "invalid severity set in code",
			cfg:     Config{Rules: RuleSeverities{"no-latest-tag": "block"}},
			wantErr: `validate config: rules: rule "no-latest-tag": invalid severity "block"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newEvaluator(t.Context(), Options{PolicyDirs: tt.dirs, Config: tt.cfg, CheckRules: tt.checks}, nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New() error = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New() error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// FuzzParseConfig checks that no configuration document panics the parser
// and that whatever it accepts is valid.
func FuzzParseConfig(f *testing.F) {
	for _, seed := range []string{
		"argocdNamespace: argocd\nrules:\n  no-latest-tag: warn\n  default-project: off\n",
		"rules:\n  main: deny\n",
		"rules: {}\n",
		"rules: null\n",
		"exemptAnnotation: example.com/skip\n",
		"rules:\n  x: [1]\n",
		"- a\n- b\n",
		"{",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		cfg, err := parseConfig([]byte(doc))
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("parseConfig(%q) accepted an invalid config: %v", doc, err)
		}
	})
}
