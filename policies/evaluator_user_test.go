package policies

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// userPolicies is a conftest-style policy set: input is the object itself.
var userPolicies = map[string]string{
	"main.rego": `package main

deny contains msg if {
	input.kind == "Deployment"
	some c in input.spec.template.spec.containers
	not startswith(c.image, "registry.example.com/")
	msg := sprintf("container %s: image %s is not from registry.example.com", [c.name, c.image])
}

deny contains {"msg": "replicas must be at least 2", "rule": "min-replicas", "path": ["spec", "replicas"]} if {
	input.spec.replicas < 2
}

warn contains msg if {
	not input.metadata.labels.team
	msg := "no team label"
}

violation contains {"msg": "object is in the default namespace", "id": "RULE-10"} if {
	input.metadata.namespace == "default"
}

deny_privileged contains {"msg": "privileged container"} if {
	some c in input.spec.template.spec.containers
	c.securityContext.privileged
}

# Helpers and functions are not rules tollgate collects.
allowed_registries := {"registry.example.com"}

deny_helper(x) := x
`,
	"nested/security/security.rego": `package kubernetes.security

warn contains msg if {
	some c in input.spec.template.spec.containers
	not c.resources.limits
	msg := sprintf("container %s has no resource limits", [c.name])
}

# A complete rule producing a set behaves like a partial set.
deny := {"set-valued deny"} if input.metadata.name == "set-valued"

# A boolean deny passes, as in conftest.
default violation := false
`,
	"nested/security/security_test.rego": `package kubernetes.security

this is not valid rego and must never be compiled by New
`,
	"README.md": "not a policy",
}

func TestEvaluateUserPolicies(t *testing.T) {
	dir := writePolicies(t, userPolicies)

	privileged := deployment("web", "nginx:1.27", nil)
	containers := privileged["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	containers[0].(map[string]any)["securityContext"] = map[string]any{"privileged": true}

	compliant := deployment("api", "registry.example.com/api:1.0", nil)
	compliant["metadata"].(map[string]any)["labels"] = map[string]any{"team": "shop"}
	compliant["spec"].(map[string]any)["replicas"] = 3.0
	compliant["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"] = map[string]any{"limits": map[string]any{"cpu": "1"}}

	defaultNS := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "set-valued", "namespace": "default", "labels": map[string]any{"team": "x"}},
	}
	cmRef := ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "set-valued"}

	tests := []struct {
		name       string
		namespaces []string
		obj        map[string]any
		want       []Violation
	}{
		{
			name: "every rule kind",
			obj:  privileged,
			want: []Violation{
				{Rule: "kubernetes.security", Severity: SeverityWarn, Message: "container app has no resource limits", Object: deploymentRef("web")},
				{Rule: "main", Severity: SeverityDeny, Message: "container app: image nginx:1.27 is not from registry.example.com", Object: deploymentRef("web")},
				{Rule: "main", Severity: SeverityWarn, Message: "no team label", Object: deploymentRef("web")},
				{Rule: "main", Severity: SeverityDeny, Message: "privileged container", Object: deploymentRef("web")},
				{Rule: "min-replicas", Severity: SeverityDeny, Message: "replicas must be at least 2", Path: []any{"spec", "replicas"}, Object: deploymentRef("web")},
			},
		},
		{
			name: "compliant object",
			obj:  compliant,
			want: nil,
		},
		{
			name: "id key and complete rules",
			obj:  defaultNS,
			want: []Violation{
				{Rule: "RULE-10", Severity: SeverityDeny, Message: "object is in the default namespace", Object: cmRef},
				{Rule: "kubernetes.security", Severity: SeverityDeny, Message: "set-valued deny", Object: cmRef},
			},
		},
		{
			name:       "namespace filter",
			namespaces: []string{"kubernetes.security"},
			obj:        privileged,
			want: []Violation{
				{Rule: "kubernetes.security", Severity: SeverityWarn, Message: "container app has no resource limits", Object: deploymentRef("web")},
			},
		},
		{
			name:       "namespace filter with data prefix",
			namespaces: []string{"data.main"},
			obj:        defaultNS,
			want: []Violation{
				{Rule: "RULE-10", Severity: SeverityDeny, Message: "object is in the default namespace", Object: cmRef},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(t.Context(), Options{PolicyDirs: []string{dir}, Namespaces: tt.namespaces})
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			got, err := e.Evaluate(t.Context(), Input{Object: tt.obj, Context: Context{EnforcementPoint: PointCLI}})
			if err != nil {
				t.Fatalf("Evaluate() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got.Violations, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Evaluate() violations mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewUserPolicyErrors(t *testing.T) {
	tests := []struct {
		name       string
		files      map[string]string
		namespaces []string
		wantErr    []string
	}{
		{
			name: "compile error names file and line",
			files: map[string]string{
				"ok.rego": "package main\n\nwarn contains \"fine\" if true\n",
				"sub/bad.rego": `package main

deny contains msg if {
	msg := undefined_function(input)
}
`,
			},
			wantErr: []string{"compile policies", "bad.rego:4", "undefined_function"},
		},
		{
			name: "parse error names file and line",
			files: map[string]string{
				"legacy.rego": "package main\n\ndeny[msg] {\n\tmsg := \"v0 syntax\"\n}\n",
			},
			wantErr: []string{"legacy.rego:3", "rego_parse_error"},
		},
		{
			name:    "empty file",
			files:   map[string]string{"empty.rego": "# just a comment\n"},
			wantErr: []string{"empty.rego"},
		},
		{
			name:    "no policies",
			files:   map[string]string{"only_test.rego": "package main\n\ntest_x if true\n"},
			wantErr: []string{"no .rego files found"},
		},
		{
			name:       "unknown namespace",
			files:      map[string]string{"main.rego": "package main\n\ndeny contains \"x\" if false\n"},
			namespaces: []string{"mian"},
			wantErr:    []string{`select namespace "mian"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writePolicies(t, tt.files)
			_, err := newEvaluator(t.Context(), Options{PolicyDirs: []string{dir}, Namespaces: tt.namespaces}, nil)
			if err == nil {
				t.Fatalf("New() succeeded, want error containing %q", tt.wantErr)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("New() error = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestNewMissingPolicyDir(t *testing.T) {
	missing := t.TempDir() + "/nope"
	_, err := newEvaluator(t.Context(), Options{PolicyDirs: []string{missing}}, nil)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("New() error = %v, want one naming %s", err, missing)
	}
}

func TestEvaluateUserResultErrors(t *testing.T) {
	tests := []struct {
		name    string
		policy  string
		wantErr string
	}{
		{
			name:    "object without msg",
			policy:  "package main\n\ndeny contains {\"message\": \"typo\"} if true\n",
			wantErr: "evaluate policies for Deployment/web: policy main.deny: result has no string msg",
		},
		{
			name:    "number result",
			policy:  "package main\n\ndeny contains 42 if true\n",
			wantErr: "policy main.deny: result is a number, want a string or an object with msg",
		},
		{
			name:    "bad path",
			policy:  "package main\n\nwarn contains {\"msg\": \"m\", \"path\": \"spec.replicas\"} if true\n",
			wantErr: "policy main.warn: path is a string, want an array",
		},
		{
			name:    "builtin error",
			policy:  "package main\n\ndeny contains msg if {\n\tmsg := sprintf(\"%d\", input.nope)\n}\n\ndeny contains x if {\n\tx := to_number(\"not a number\")\n}\n",
			wantErr: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writePolicies(t, map[string]string{"p.rego": tt.policy})
			e, err := newEvaluator(t.Context(), Options{PolicyDirs: []string{dir}}, nil)
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			_, err = e.Evaluate(t.Context(), Input{Object: deployment("web", "nginx:1", nil)})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Evaluate() error = %v, want builtin errors to leave the rule undefined", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Evaluate() error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestConftestInput checks that user policies see the object itself as
// input, as in conftest, and not tollgate's Input wrapper.
func TestConftestInput(t *testing.T) {
	dir := writePolicies(t, map[string]string{"echo.rego": `package main

deny contains json.marshal(input) if true

warn contains "wrapped input" if input.object
`})
	e, err := newEvaluator(t.Context(), Options{PolicyDirs: []string{dir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	obj := deployment("web", "nginx:1", map[string]any{"a": "b"})
	got, err := e.Evaluate(t.Context(), Input{
		Object:      obj,
		Application: map[string]any{"kind": "Application"},
		Context:     Context{EnforcementPoint: PointAdmission},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Violations) != 1 {
		t.Fatalf("Evaluate() = %+v, want exactly the echo violation", got.Violations)
	}
	if diff := cmp.Diff(jsonRoundTrip(t, obj), jsonRoundTrip(t, jsonDecode(t, got.Violations[0].Message))); diff != "" {
		t.Errorf("user policy input mismatch (-want +got):\n%s", diff)
	}
}

func TestSeverityOverridesAndExemptions(t *testing.T) {
	dir := writePolicies(t, map[string]string{"main.rego": `package main

deny contains {"msg": "latest tag", "rule": "no-latest-tag"} if {
	some c in input.spec.template.spec.containers
	endswith(c.image, ":latest")
}

deny contains {"msg": "one replica", "rule": "min-replicas"} if input.spec.replicas < 2

warn contains "plain warning" if true
`})
	sealed := func(in Input) []Violation {
		if in.Object["kind"] != "Deployment" {
			return nil
		}
		return []Violation{
			{Rule: "default-project", Message: "from a check, default severity"},
			{Rule: "sealed-secret", Severity: SeverityWarn, Message: "from a check, own severity"},
			{Rule: "sealed-secret-key", Message: "from a check, declared severity"},
		}
	}
	ref := deploymentRef("web")
	all := []Violation{
		{Rule: "default-project", Severity: SeverityWarn, Message: "from a check, default severity", Object: ref},
		{Rule: "main", Severity: SeverityWarn, Message: "plain warning", Object: ref},
		{Rule: "min-replicas", Severity: SeverityDeny, Message: "one replica", Object: ref},
		{Rule: "no-latest-tag", Severity: SeverityDeny, Message: "latest tag", Object: ref},
		{Rule: "sealed-secret", Severity: SeverityWarn, Message: "from a check, own severity", Object: ref},
		{Rule: "sealed-secret-key", Severity: SeverityWarn, Message: "from a check, declared severity", Object: ref},
	}
	tests := []struct {
		name        string
		cfg         Config
		annotations map[string]any
		want        []Violation
	}{
		{name: "defaults", want: all},
		{
			name: "overrides",
			cfg: Config{Rules: RuleSeverities{
				"no-latest-tag":     SeverityWarn,
				"main":              SeverityDeny,
				"min-replicas":      SeverityOff,
				"default-project":   SeverityDeny,
				"sealed-secret":     SeverityDeny,
				"sealed-secret-key": SeverityOff,
			}},
			want: []Violation{
				{Rule: "default-project", Severity: SeverityDeny, Message: "from a check, default severity", Object: ref},
				{Rule: "main", Severity: SeverityDeny, Message: "plain warning", Object: ref},
				{Rule: "no-latest-tag", Severity: SeverityWarn, Message: "latest tag", Object: ref},
				{Rule: "sealed-secret", Severity: SeverityDeny, Message: "from a check, own severity", Object: ref},
			},
		},
		{
			name:        "exempt some rules",
			annotations: map[string]any{ExemptAnnotation: " no-latest-tag ,main,, sealed-secret"},
			want: []Violation{
				{Rule: "default-project", Severity: SeverityWarn, Message: "from a check, default severity", Object: ref},
				{Rule: "min-replicas", Severity: SeverityDeny, Message: "one replica", Object: ref},
				{Rule: "sealed-secret-key", Severity: SeverityWarn, Message: "from a check, declared severity", Object: ref},
			},
		},
		{
			name:        "exempt all",
			annotations: map[string]any{ExemptAnnotation: "*"},
			want:        nil,
		},
		{
			name:        "exemption is exact, not a prefix",
			annotations: map[string]any{ExemptAnnotation: "no-latest, min"},
			want:        all,
		},
		{
			name:        "other annotation key ignored by default",
			annotations: map[string]any{"example.com/skip": "*"},
			want:        all,
		},
		{
			name:        "configured annotation key",
			cfg:         Config{ExemptAnnotation: "example.com/skip"},
			annotations: map[string]any{"example.com/skip": "min-replicas", ExemptAnnotation: "*"},
			want: []Violation{
				{Rule: "default-project", Severity: SeverityWarn, Message: "from a check, default severity", Object: ref},
				{Rule: "main", Severity: SeverityWarn, Message: "plain warning", Object: ref},
				{Rule: "no-latest-tag", Severity: SeverityDeny, Message: "latest tag", Object: ref},
				{Rule: "sealed-secret", Severity: SeverityWarn, Message: "from a check, own severity", Object: ref},
				{Rule: "sealed-secret-key", Severity: SeverityWarn, Message: "from a check, declared severity", Object: ref},
			},
		},
		{
			name:        "non-string annotation ignored",
			annotations: map[string]any{ExemptAnnotation: true},
			want:        all,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := newEvaluator(t.Context(), Options{
				PolicyDirs: []string{dir},
				Config:     tt.cfg,
				Checks:     []Check{sealed},
				CheckRules: []RuleInfo{
					{ID: "sealed-secret", Severity: SeverityDeny},
					{ID: "sealed-secret-key", Severity: SeverityWarn},
				},
			}, nil)
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			got, err := e.Evaluate(t.Context(), Input{Object: deployment("web", "nginx:latest", tt.annotations)})
			if err != nil {
				t.Fatalf("Evaluate() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got.Violations, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Evaluate() violations mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckPanicIsAnError(t *testing.T) {
	e, err := newEvaluator(t.Context(), Options{Checks: []Check{func(Input) []Violation {
		var m map[string]any
		m["boom"] = 1
		return nil
	}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Evaluate(t.Context(), Input{Object: deployment("web", "nginx:1", nil)})
	if err == nil || !strings.Contains(err.Error(), "evaluate policies for Deployment/web: run check 0: check panicked") {
		t.Fatalf("Evaluate() error = %v, want a check panic error", err)
	}
}

func TestCheckKeepsItsObject(t *testing.T) {
	other := ObjectRef{APIVersion: "bitnami.com/v1alpha1", Kind: "SealedSecret", Namespace: "shop", Name: "creds"}
	e, err := newEvaluator(t.Context(), Options{Checks: []Check{func(Input) []Violation {
		return []Violation{{Rule: "sealed-secret", Message: "m", Object: other}}
	}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Evaluate(t.Context(), Input{Object: deployment("web", "nginx:1", nil)})
	if err != nil {
		t.Fatal(err)
	}
	want := []Violation{{Rule: "sealed-secret", Severity: SeverityDeny, Message: "m", Object: other}}
	if diff := cmp.Diff(want, got.Violations); diff != "" {
		t.Errorf("Evaluate() violations mismatch (-want +got):\n%s", diff)
	}
}

func TestEvaluateTimeout(t *testing.T) {
	tests := []struct {
		name   string
		policy string
	}{
		{
			name: "huge range",
			policy: `package main

deny contains "never" if {
	some i in numbers.range(1, 100000000)
	i < 0
}
`,
		},
		{
			name: "nested loops",
			policy: `package main

deny contains "never" if {
	some i in numbers.range(1, 500)
	some j in numbers.range(1, 500)
	some k in numbers.range(1, 500)
	i + j + k < 0
}
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writePolicies(t, map[string]string{"hostile.rego": tt.policy})
			const timeout = 150 * time.Millisecond
			e, err := newEvaluator(t.Context(), Options{PolicyDirs: []string{dir}, Timeout: timeout}, nil)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = e.Evaluate(t.Context(), Input{Object: deployment("web", "nginx:1", nil)})
			elapsed := time.Since(start)
			if err == nil {
				t.Fatal("Evaluate() succeeded, want a timeout error")
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Evaluate() error = %v, want errors.Is DeadlineExceeded", err)
			}
			if !strings.HasPrefix(err.Error(), "evaluate policies for Deployment/web: ") {
				t.Errorf("Evaluate() error = %q, want it to name the object", err)
			}
			// Generous bound: the point is that it returns, not how fast.
			if elapsed > 20*timeout {
				t.Errorf("Evaluate() took %s with a %s timeout", elapsed, timeout)
			}
		})
	}
}

func TestEvaluateParentCancel(t *testing.T) {
	dir := writePolicies(t, map[string]string{"p.rego": "package main\n\ndeny contains \"x\" if true\n"})
	e, err := newEvaluator(t.Context(), Options{PolicyDirs: []string{dir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = e.Evaluate(ctx, Input{Object: deployment("web", "nginx:1", nil)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Evaluate() error = %v, want context.Canceled", err)
	}
}

// TestUserPoliciesOffline: user policies judge what tenants write, in
// processes that hold credentials; the builtins that reach the network or
// read the process compile only with AllowNetwork.
func TestUserPoliciesOffline(t *testing.T) {
	for name, body := range map[string]string{
		"http.send":         `deny contains msg if { r := http.send({"method": "GET", "url": "http://169.254.169.254/"}); msg := r.body }`,
		"net.lookup":        `deny contains msg if { ips := net.lookup_ip_addr("kubernetes.default"); msg := sprintf("%v", [ips]) }`,
		"opa.runtime (env)": `deny contains msg if { msg := sprintf("%v", [opa.runtime().env]) }`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := writePolicies(t, map[string]string{"p.rego": "package main\n\n" + body + "\n"})
			opts := DefaultOptions()
			opts.PolicyDirs = []string{dir}
			_, err := New(t.Context(), opts)
			if err == nil || !strings.Contains(err.Error(), "undefined function") || !strings.Contains(err.Error(), "--allow-network turns them on") {
				t.Fatalf("New() error = %v, want an undefined function naming --allow-network", err)
			}
			opts.AllowNetwork = true
			if _, err := New(t.Context(), opts); err != nil {
				t.Fatalf("New() with AllowNetwork: %v", err)
			}
		})
	}
}
