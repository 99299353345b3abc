package policies

import (
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// crb is a ClusterRoleBinding to cluster-admin with annotations, which a
// project without a clusterResourceWhitelist does not permit.
func crb(annotations map[string]any) map[string]any {
	meta := map[string]any{"name": "take-over"}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	return map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "ClusterRoleBinding",
		"metadata":   meta,
		"roleRef":    map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
	}
}

// annotated returns a copy of obj with the exemption annotation set to
// val (the other fields are shared).
func annotated(obj map[string]any, val string) map[string]any {
	out := maps.Clone(obj)
	meta := maps.Clone(obj["metadata"].(map[string]any))
	meta["annotations"] = map[string]any{ExemptAnnotation: val}
	out["metadata"] = meta
	return out
}

// ruleIDs are the rules of a decision, in order.
func ruleIDs(d Decision) []string {
	ids := []string{}
	for _, v := range d.Violations {
		ids = append(ids, v.Rule)
	}
	return ids
}

func TestExemptions(t *testing.T) {
	app := benchApplication()
	project := benchProject()
	rendered := func(obj map[string]any, clusterScoped bool) Input {
		return Input{Object: obj, Application: app, Project: project,
			Context: Context{EnforcementPoint: PointSync, ClusterScoped: clusterScoped}}
	}
	withProject := func(in Input, p map[string]any) Input { in.Project = p; return in }
	off := false
	tests := []struct {
		name string
		cfg  Config
		in   Input
		want []string
	}{
		{
			name: "no exemption: the project denies the ClusterRoleBinding",
			in:   rendered(crb(nil), true),
			want: []string{"project-resource-denied"},
		},
		{
			name: "object annotation naming a boundary rule exempts nothing and is reported",
			in:   rendered(crb(map[string]any{ExemptAnnotation: "project-resource-denied"}), true),
			want: []string{"exemption-not-allowed", "project-resource-denied"},
		},
		{
			name: "object annotation * exempts from hygiene rules only",
			in:   rendered(crb(map[string]any{ExemptAnnotation: "*"}), true),
			want: []string{"project-resource-denied"},
		},
		{
			name: "object annotation exempts from a hygiene rule",
			in:   rendered(deployment("web", "nginx:latest", map[string]any{ExemptAnnotation: "no-latest-tag"}), false),
			want: []string{},
		},
		{
			name: "object annotation * exempts from every hygiene rule",
			in:   rendered(deployment("web", "nginx:latest", map[string]any{ExemptAnnotation: " * "}), false),
			want: []string{},
		},
		{
			name: "mixed annotation: hygiene exempted, boundary refused",
			in: rendered(deployment("web", "nginx:latest", map[string]any{
				ExemptAnnotation: "no-latest-tag, protected-namespace"}), false),
			want: []string{"exemption-not-allowed"},
		},
		{
			name: "object exemptions off: the annotation exempts nothing and is reported",
			cfg:  Config{AllowObjectExemptions: &off},
			in:   rendered(deployment("web", "nginx:latest", map[string]any{ExemptAnnotation: "no-latest-tag"}), false),
			want: []string{"exemption-not-allowed", "no-latest-tag"},
		},
		{
			name: "an empty annotation is no exemption",
			cfg:  Config{AllowObjectExemptions: &off},
			in:   rendered(deployment("web", "nginx:1.27", map[string]any{ExemptAnnotation: " , "}), false),
			want: []string{},
		},
		{
			name: "the AppProject's annotation exempts what its Applications render",
			in:   withProject(rendered(crb(nil), true), annotated(project, "project-resource-denied")),
			want: []string{},
		},
		{
			name: "the AppProject's annotation for another rule does not",
			in:   withProject(rendered(crb(nil), true), annotated(project, "no-latest-tag")),
			want: []string{"project-resource-denied"},
		},
		{
			name: "an operator exemption matching project and kind",
			cfg: Config{Exemptions: []Exemption{{
				Rules: []string{"project-resource-denied"}, Project: "team", Group: "rbac.authorization.k8s.io", Kind: "ClusterRole*",
			}}},
			in:   rendered(crb(nil), true),
			want: []string{},
		},
		{
			name: "an operator exemption for another project",
			cfg: Config{Exemptions: []Exemption{{
				Rules: []string{"*"}, Project: "platform",
			}}},
			in:   rendered(crb(nil), true),
			want: []string{"project-resource-denied"},
		},
		{
			name: "an operator exemption for another name",
			cfg: Config{Exemptions: []Exemption{{
				Rules: []string{"project-resource-denied"}, Name: "monitoring-*",
			}}},
			in:   rendered(crb(nil), true),
			want: []string{"project-resource-denied"},
		},
		{
			name: "an operator exemption by Application and the defaulted namespace",
			cfg: Config{Exemptions: []Exemption{{
				Rules: []string{"no-latest-tag"}, Application: "sh?p", Namespace: "shop",
			}}},
			in: rendered(func() map[string]any {
				d := deployment("web", "nginx:latest", nil)
				delete(d["metadata"].(map[string]any), "namespace")
				return d
			}(), false),
			want: []string{},
		},
		{
			name: "a claimed Application lends no project exemption",
			in: func() Input {
				in := withProject(rendered(crb(nil), true), annotated(project, "project-resource-denied"))
				in.Context.ClaimedApplication = true
				return in
			}(),
			want: []string{"project-resource-denied"},
		},
		{
			name: "a claimed Application lends no operator exemption by project",
			cfg: Config{Exemptions: []Exemption{{
				Rules: []string{"project-resource-denied"}, Project: "team",
			}}},
			in: func() Input {
				in := rendered(crb(nil), true)
				in.Context.ClaimedApplication = true
				return in
			}(),
			want: []string{"project-resource-denied"},
		},
		{
			name: "an operator exemption by kind holds for a claimed Application",
			cfg: Config{Exemptions: []Exemption{{
				Rules: []string{"project-resource-denied"}, Kind: "ClusterRoleBinding",
			}}},
			in: func() Input {
				in := rendered(crb(nil), true)
				in.Context.ClaimedApplication = true
				return in
			}(),
			want: []string{},
		},
		{
			name: "the Application's own annotation is an object annotation",
			in: Input{Object: annotated(benchApplication(), "project-source-denied"), Project: benchProject(),
				Context: Context{EnforcementPoint: PointAdmission}},
			want: []string{"exemption-not-allowed"},
		},
		{
			name: "an AppProject reviewed on its own is its own authority",
			in: Input{Object: annotated(openProject(), "no-argocd-destination, protected-namespace"),
				Context: Context{EnforcementPoint: PointAdmission}},
			want: []string{},
		},
		{
			name: "an AppProject rendered by an Application is not",
			in: Input{Object: annotated(openProject(), "no-argocd-destination"), Application: app, Project: project,
				Context: Context{EnforcementPoint: PointSync}},
			want: []string{"exemption-not-allowed", "no-argocd-destination", "project-destination-denied", "protected-namespace"},
		},
		{
			name: "boundaryRules makes a hygiene rule boundary",
			cfg:  Config{BoundaryRules: []string{"no-latest-tag"}},
			in:   rendered(deployment("web", "nginx:latest", map[string]any{ExemptAnnotation: "no-latest-tag"}), false),
			want: []string{"exemption-not-allowed", "no-latest-tag"},
		},
		{
			name: "severity off for exemption-not-allowed is the operator's choice",
			cfg:  Config{Rules: RuleSeverities{"exemption-not-allowed": SeverityOff}},
			in:   rendered(crb(map[string]any{ExemptAnnotation: "project-resource-denied"}), true),
			want: []string{"project-resource-denied"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Config = tt.cfg
			e, err := New(t.Context(), opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Evaluate(t.Context(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ruleIDs(got)); diff != "" {
				t.Errorf("rules (-want +got):\n%s\n%+v", diff, got.Violations)
			}
		})
	}
}

// openProject is an AppProject that permits every namespace.
func openProject() map[string]any {
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "AppProject",
		"metadata":   map[string]any{"name": "platform", "namespace": "argocd"},
		"spec": map[string]any{
			"sourceRepos":  []any{"*"},
			"destinations": []any{map[string]any{"server": "*", "namespace": "*"}},
		},
	}
}

func TestExemptionNotAllowedMessage(t *testing.T) {
	e, err := New(t.Context(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	in := Input{
		Object:      crb(map[string]any{ExemptAnnotation: "project-resource-denied,no-latest-tag,protected-namespace"}),
		Application: benchApplication(), Project: benchProject(),
		Context: Context{EnforcementPoint: PointCLI, ClusterScoped: true},
	}
	got, err := e.Evaluate(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := Violation{
		Rule:     "exemption-not-allowed",
		Severity: SeverityDeny,
		Message:  `ClusterRoleBinding "take-over" names the boundary rule(s) "project-resource-denied", "protected-namespace" in its tollgate.dev/exempt annotation, which exempts nothing from them; only the operator's configuration (exemptions:) or the AppProject's tollgate.dev/exempt annotation can exempt from a boundary rule`,
		Path:     []any{"metadata", "annotations", "tollgate.dev/exempt"},
		Object:   ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding", Name: "take-over"},
	}
	if len(got.Violations) == 0 {
		t.Fatal("no violations")
	}
	if diff := cmp.Diff(want, got.Violations[0]); diff != "" {
		t.Errorf("violation (-want +got):\n%s", diff)
	}
}

func TestExemptionConfig(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string
	}{
		{name: "valid", yaml: `
allowObjectExemptions: false
boundaryRules: [no-latest-tag]
exemptions:
- rules: [no-argocd-destination, project-resource-denied]
  project: platform
  application: "root-*"
  namespace: argocd
  group: argoproj.io
  kind: "App*"
  name: "*"
  reason: app of apps
`},
		{name: "no rules", yaml: "exemptions:\n- project: platform\n", wantErr: `exemptions[0]: rules: at least one rule id (or "*") is required`},
		{name: "bad glob", yaml: "exemptions:\n- rules: ['*']\n  name: '[a-'\n", wantErr: `exemptions[0]: name: invalid glob "[a-"`},
		{name: "unknown field", yaml: "exemptions:\n- rules: ['*']\n  cluster: x\n", wantErr: `unknown field "cluster"`},
		{name: "unknown rule", yaml: "exemptions:\n- rules: [no-such-rule]\n", wantErr: `config x.yaml: exemptions[0].rules[0]: unknown rule id "no-such-rule"`},
		{name: "unknown boundary rule", yaml: "boundaryRules: [nope]\n", wantErr: `config x.yaml: boundaryRules[0]: unknown rule id "nope"`},
		{name: "bad protected namespace", yaml: "protectedNamespaces: [Kube_System]\n", wantErr: `protectedNamespaces[0]: invalid namespace name "Kube_System"`},
		{name: "bad tollgate namespace", yaml: "tollgateNamespace: -x\n", wantErr: `tollgateNamespace: invalid namespace name "-x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseConfig([]byte(tt.yaml))
			if err == nil {
				cfg.source = "x.yaml"
				opts := DefaultOptions()
				opts.Config = cfg
				_, err = New(t.Context(), opts)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestProtectedNamespacesConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{name: "default", want: []string{"tollgate-system", "kube-system", "kube-public", "kube-node-lease"}},
		{name: "own namespace", cfg: Config{TollgateNamespace: "guard"}, want: []string{"guard", "kube-system", "kube-public", "kube-node-lease"}},
		{name: "replaced", cfg: Config{ProtectedNamespaces: []string{"platform"}}, want: []string{"platform"}},
		{name: "none", cfg: Config{ProtectedNamespaces: []string{}}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.cfg.Protected()); diff != "" {
				t.Errorf("Protected() (-want +got):\n%s", diff)
			}
		})
	}
}
