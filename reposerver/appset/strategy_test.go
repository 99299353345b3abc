package appset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGenerateWithStrategy: a RollingSync strategy (Argo CD's progressive
// syncs) changes nothing of what is generated: the controller runs it, and
// `argocd appset generate` ignores it too. Its Applications keep their
// automated sync policy here; the controller turns it off when it writes
// them (with --enable-progressive-syncs).
func TestGenerateWithStrategy(t *testing.T) {
	set := decodeSet(t, header+`  strategy:
    type: RollingSync
    deletionOrder: Reverse
    rollingSync:
      steps:
      - matchExpressions: [{key: env, operator: In, values: [dev]}]
      - matchExpressions: [{key: env, operator: In, values: [prod]}]
        maxUpdate: 50%
  generators:
  - list: {elements: [{env: dev}, {env: prod}]}
  template:
    metadata: {name: 'web-{{env}}', labels: {env: '{{env}}'}}
    spec:
      project: default
      destination: {server: https://kubernetes.default.svc, namespace: web}
      syncPolicy: {automated: {prune: true}}
`)
	gen, err := Generate(t.Context(), set, Sources{})
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	var got []any
	for _, g := range gen {
		got = append(got, g.Application["spec"].(map[string]any)["syncPolicy"])
	}
	auto := map[string]any{"automated": map[string]any{"prune": true}}
	if diff := cmp.Diff([]any{auto, auto}, got); diff != "" {
		t.Errorf("sync policies (-want +got):\n%s", diff)
	}
}
