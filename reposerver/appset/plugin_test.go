package appset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// fakePlugin answers every plugin generator with out, and records what it
// was asked.
type fakePlugin struct {
	out   []map[string]any
	asked []string
}

func (f *fakePlugin) Params(_ context.Context, field, set string, gen *v1alpha1.PluginGenerator) ([]map[string]any, error) {
	f.asked = append(f.asked, fmt.Sprintf("%s %s %s %s", field, set, gen.ConfigMapRef.Name, gen.Input.Parameters["env"].Raw))
	return f.out, nil
}

// TestGeneratePlugin: a plugin's parameter sets, flattened to "a.b" keys
// without goTemplate and as they are with it, with
// generator.input.parameters and values, as Argo CD's plugin generator.
func TestGeneratePlugin(t *testing.T) {
	const set = `
metadata: {name: from-plugin, namespace: argocd}
spec:
  %s
  generators:
  - plugin:
      configMapRef: {name: my-plugin}
      input: {parameters: {env: prod, regions: [eu, us]}}
      values: {owner: team-a}
  template:
    metadata: {name: '%s', annotations: {x: '%s'}}
    spec:
      project: default
      source: {repoURL: https://git.example.com/web.git, path: deploy}
      destination: {server: https://kubernetes.default.svc, namespace: web}
`
	src := &fakePlugin{out: []map[string]any{
		{"name": "alpha", "cfg": map[string]any{"replicas": 2.0, "zones": []any{"a", "b"}}},
		{"name": "beta", "cfg": map[string]any{"replicas": 3.0}},
	}}
	for _, tc := range []struct {
		mode, name, x string
		want          []string
	}{
		{"", "web-{{name}}", "{{cfg.replicas}} {{cfg.zones.1}} {{values.owner}}", []string{"web-alpha 2 b team-a", "web-beta 3 {{cfg.zones.1}} team-a"}},
		{"goTemplate: true", "web-{{.name}}", "{{.cfg.replicas}} {{index .generator.input.parameters.regions 1}} {{.values.owner}}", []string{"web-alpha 2 us team-a", "web-beta 3 us team-a"}},
	} {
		gen, err := Generate(t.Context(), decodeSet(t, fmt.Sprintf(set, tc.mode, tc.name, tc.x)), Sources{Plugins: src})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range gen {
			md := g.Application["metadata"].(map[string]any)
			got = append(got, fmt.Sprint(md["name"], " ", md["annotations"].(map[string]any)["x"]))
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q: applications (-want +got):\n%s", tc.mode, diff)
		}
	}
	if want := `spec.generators[0].plugin from-plugin my-plugin "prod"`; src.asked[0] != want {
		t.Errorf("asked %q, want %q", src.asked[0], want)
	}
	_, err := Generate(t.Context(), decodeSet(t, fmt.Sprintf(set, "", "x", "y")), Sources{})
	if err == nil || !strings.Contains(err.Error(), "spec.generators[0].plugin: not generated here") {
		t.Errorf("without plugins: %v", err)
	}
}

// TestGenerateClusterDecisions: one parameter set per decision whose
// matchKey names a cluster Secret (the others are skipped), with every
// key of the decision, the cluster's name and server, and values as
// written, as Argo CD's clusterDecisionResource generator.
func TestGenerateClusterDecisions(t *testing.T) {
	const set = `
metadata: {name: placed, namespace: argocd}
spec:
  generators:
  - clusterDecisionResource:
      configMapRef: ocm-placement
      name: my-placement
      values: {note: '{{name}} as written'}
  template:
    metadata: {name: 'web-{{clusterName}}', annotations: {x: '{{server}} {{reason}} {{values.note}}'}}
    spec:
      project: default
      source: {repoURL: https://git.example.com/web.git, path: deploy}
      destination: {server: '{{server}}', namespace: web}
`
	clusters := []corev1.Secret{clusterSecret("prod", "https://prod.example.com", nil), clusterSecret("staging", "https://staging.example.com", nil)}
	src := Sources{
		Clusters: func(context.Context) ([]corev1.Secret, error) { return clusters, nil },
		Decisions: map[string]reposerver.ClusterDecisions{"spec.generators[0].clusterDecisionResource": {MatchKey: "clusterName", Decisions: []map[string]string{
			{"clusterName": "prod", "reason": "fits"}, {"clusterName": "gone", "reason": "no Secret"}, {"clusterName": "staging", "reason": "cheap"},
		}}},
	}
	gen, err := Generate(t.Context(), decodeSet(t, set), src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range gen {
		md := g.Application["metadata"].(map[string]any)
		got = append(got, fmt.Sprint(md["name"], " ", md["annotations"].(map[string]any)["x"]))
	}
	want := []string{"web-prod https://prod.example.com fits {{name}} as written", "web-staging https://staging.example.com cheap {{name}} as written"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("applications (-want +got):\n%s", diff)
	}
	src.Decisions = nil
	if _, err := Generate(t.Context(), decodeSet(t, set), src); err == nil || !strings.Contains(err.Error(), "spec.generators[0].clusterDecisionResource: not generated here: the controller reads the cluster decision resource") {
		t.Errorf("decisions not read: %v", err)
	}
}
