package applicationset

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// TestGeneratorInputs: what the controller reads for plugin and
// clusterDecisionResource generators, with Argo CD's errors, and the
// generators whose references are rendered from parameters left to the
// repo-server's refusal.
func TestGeneratorInputs(t *testing.T) {
	cm := func(name string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd"}, Data: data}
	}
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "argocd-secret", Namespace: "argocd"}, Data: map[string][]byte{"plugin.a.token": []byte("t0k\n")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "argocd"}, Data: map[string][]byte{"tok": []byte("other-t0k")}},
		cm("a", map[string]string{"baseUrl": "http://a.plugins", "token": "$plugin.a.token", "requestTimeout": "5"}),
		cm("b", map[string]string{"baseUrl": "http://b.plugins", "token": "$other:tok"}),
		cm("no-url", map[string]string{"token": "$x"}),
		cm("no-token", map[string]string{"baseUrl": "http://x"}),
		cm("literal-token", map[string]string{"baseUrl": "http://x", "token": "abc"}),
		cm("bad-timeout", map[string]string{"baseUrl": "http://x", "token": "$plugin.a.token", "requestTimeout": "soon"}),
		cm("missing-key", map[string]string{"baseUrl": "http://x", "token": "$nope"}),
		cm("bad-duck", map[string]string{"apiVersion": "v1", "kind": "configmaps", "matchKey": "k"}),
		cm("duck", map[string]string{"apiVersion": "example.com/v1", "kind": "decisions", "matchKey": "k"}),
	).Build()
	r := &Reconciler{deps: Dependencies{Client: c, APIReader: c}, opts: Options{Namespace: "argocd"}}
	set := func(generators string) *v1alpha1.ApplicationSet {
		var s v1alpha1.ApplicationSet
		if err := yaml.Unmarshal([]byte(`{metadata: {name: s, namespace: argocd}, spec: {generators: `+generators+`}}`), &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	req := &reposerver.AppSetRequest{}
	err := r.generatorInputs(t.Context(), set(`[{plugin: {configMapRef: {name: a}}}, {matrix: {generators: [{list: {elements: []}}, {plugin: {configMapRef: {name: b}}}]}}, {matrix: {generators: [{list: {elements: []}}, {plugin: {configMapRef: {name: '{{.p}}'}}}]}}]`), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []reposerver.PluginAccess{{ConfigMapName: "a", BaseURL: "http://a.plugins", Token: "t0k", RequestTimeout: 5 * time.Second}, {ConfigMapName: "b", BaseURL: "http://b.plugins", Token: "other-t0k"}}
	if diff := cmp.Diff(want, req.Plugins); diff != "" {
		t.Errorf("plugins (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ gen, want string }{
		{`{plugin: {configMapRef: {name: nope}}}`, `spec.generators[0].plugin: error getting plugin from generator: error fetching ConfigMap: configmaps "nope" not found`},
		{`{plugin: {configMapRef: {name: no-url}}}`, "baseUrl not found in ConfigMap"},
		{`{plugin: {configMapRef: {name: no-token}}}`, "token not found in ConfigMap"},
		{`{plugin: {configMapRef: {name: literal-token}}}`, "token is empty, or does not reference a secret key starting with '$': abc"},
		{`{plugin: {configMapRef: {name: bad-timeout}}}`, "error set requestTimeout"},
		{`{plugin: {configMapRef: {name: missing-key}}}`, `key "nope" not found in secret argocd/argocd-secret`},
		{`{clusterDecisionResource: {configMapRef: nope, name: x}}`, `spec.generators[0].clusterDecisionResource: error reading configMapRef: configmaps "nope" not found`},
		{`{clusterDecisionResource: {configMapRef: bad-duck, name: x}}`, "there is a problem with the apiVersion, kind or resourceName provided"},
		{`{clusterDecisionResource: {configMapRef: duck}}`, "there is a problem with the definition of the ClusterDecisionResource generator"},
		{`{clusterDecisionResource: {configMapRef: duck, name: x, labelSelector: {matchLabels: {a: b}}}}`, "there is a problem with the definition of the ClusterDecisionResource generator"},
		{`{clusterDecisionResource: {configMapRef: duck, name: x}}`, "failed to get dynamic resources"},
	} {
		err := r.generatorInputs(t.Context(), set("["+tc.gen+"]"), &reposerver.AppSetRequest{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.gen, err, tc.want)
		}
	}
}
