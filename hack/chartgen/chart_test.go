package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"
)

const (
	configDir = "../../config"
	chartDir  = "../../config/helm/tollgate"
)

// TestChartIsGenerated: the committed chart is what chartgen writes from
// config/.
func TestChartIsGenerated(t *testing.T) {
	want, err := generate(configDir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for _, name := range []string{"Chart.yaml", "values.yaml"} {
		if data, err := os.ReadFile(filepath.Join(chartDir, name)); err == nil {
			got[name] = data
		}
	}
	for _, sub := range []string{"templates", "crds"} {
		_ = filepath.WalkDir(filepath.Join(chartDir, sub), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(chartDir, p)
				got[filepath.ToSlash(rel)], _ = os.ReadFile(p)
			}
			return nil
		})
	}
	for name := range mergeKeys(want, got) {
		if !bytes.Equal(want[name], got[name]) {
			t.Errorf("config/helm/tollgate/%s is not what `make chart` writes from config/; run make chart", name)
		}
	}
}

func mergeKeys(a, b map[string][]byte) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// render renders the chart in namespace with vals over its defaults and
// returns its objects (CRDs included) by kind/namespace/name.
func render(t *testing.T, namespace string, vals map[string]any) map[string]map[string]any {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "tollgate", Namespace: namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(ch, rv)
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]map[string]any{}
	addDocs := func(name, text string) {
		for _, doc := range releaseutil.SplitManifests(text) {
			var o map[string]any
			if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if o != nil {
				objs[key(o)] = o
			}
		}
	}
	for name, text := range out {
		addDocs(name, text)
	}
	for _, crd := range ch.CRDObjects() {
		addDocs(crd.Filename, string(crd.File.Data))
	}
	return objs
}

func key(o map[string]any) string {
	return str(o, "kind") + "/" + str(o, "metadata", "namespace") + "/" + str(o, "metadata", "name")
}

// TestChartRendersConfigDefault: with its default values, in the
// namespace config/default installs into, the chart renders exactly the
// objects kustomize builds from config/default, but the Namespace itself
// (helm install --create-namespace makes it).
func TestChartRendersConfigDefault(t *testing.T) {
	built, err := build(filepath.Join(configDir, "default"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{}
	for _, o := range built {
		if str(o, "kind") != "Namespace" {
			want[key(o)] = normalize(t, o)
		}
	}
	got := render(t, releaseNamespace, nil)
	for k, o := range got {
		got[k] = normalize(t, o)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chart with default values vs kustomize build config/default (-want +got):\n%s", diff)
	}
}

// normalize gives o the JSON types both sides decode to.
func normalize(t *testing.T, o map[string]any) map[string]any {
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestChartValues: each value lands where it says.
func TestChartValues(t *testing.T) {
	objs := render(t, "gate", map[string]any{
		"image":                 map[string]any{"repository": "registry.example.com/tollgate", "tag": "v9.9.9"},
		"argocdNamespace":       "gitops",
		"applicationNamespaces": []any{"team-*", "/^apps-[0-9]+$/"},
		"webhook":               map[string]any{"replicas": 3, "failurePolicy": "Ignore", "excludedNamespaces": []any{"kube-system", "sandbox"}},
		"controller": map[string]any{
			"replicas": 4, "extraArgs": []any{"--resync", "1m"},
			"resources":        map[string]any{"limits": map[string]any{"memory": "4Gi"}},
			"clusterRoleRules": []any{map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*"}, "verbs": []any{"get", "list", "watch"}}},
		},
		"repoServer": map[string]any{"replicas": 5},
		"ui":         map[string]any{"enabled": true},
	})
	dep := func(name string) (map[string]any, map[string]any) {
		t.Helper()
		d, ok := objs["Deployment/gate/"+name]
		if !ok {
			t.Fatalf("no Deployment %s in namespace gate; have %v", name, slices.Sorted(maps.Keys(objs)))
		}
		return d, containers(d)[0]
	}
	ctl, c := dep("tollgate-controller")
	if got := ctl["spec"].(map[string]any)["replicas"]; got != float64(4) {
		t.Errorf("controller replicas %v", got)
	}
	args := strings.Join(toStrings(c["args"]), " ")
	for _, want := range []string{"--namespace gitops", "--application-namespaces team-*,/^apps-[0-9]+$/", "--resync 1m"} {
		if !strings.Contains(args, want) {
			t.Errorf("controller args %q lack %q", args, want)
		}
	}
	if c["image"] != "registry.example.com/tollgate:v9.9.9" {
		t.Errorf("controller image %v", c["image"])
	}
	// Helm merges a map value into the default: the other limits stay.
	if got := c["resources"].(map[string]any)["limits"]; !cmp.Equal(got, map[string]any{"cpu": "2", "memory": "4Gi"}) {
		t.Errorf("controller limits %v", got)
	}
	if rules := objs["ClusterRole//tollgate-controller"]["rules"].([]any); len(rules) != 1 {
		t.Errorf("controller ClusterRole rules %v", rules)
	}
	if _, c := dep("tollgate-webhook"); c["image"] != "registry.example.com/tollgate:v9.9.9" {
		t.Errorf("webhook image %v", c["image"])
	}
	if d, _ := dep("tollgate-repo-server"); d["spec"].(map[string]any)["replicas"] != float64(5) {
		t.Errorf("repo-server replicas %v", d["spec"].(map[string]any)["replicas"])
	}
	_, uc := dep("tollgate-ui")
	if args := strings.Join(toStrings(uc["args"]), " "); !strings.Contains(args, "--namespace gitops") || !strings.Contains(args, "--application-namespaces team-*") {
		t.Errorf("ui args %q", args)
	}
	if _, ok := objs["Role/gitops/tollgate-ui"]; !ok {
		t.Errorf("the UI's Role is not in argocdNamespace gitops: %v", slices.Sorted(maps.Keys(objs)))
	}
	vwc := objs["ValidatingWebhookConfiguration//tollgate"]
	for _, w := range vwc["webhooks"].([]any) {
		w := w.(map[string]any)
		want := "Ignore"
		if w["failurePolicy"] != want {
			t.Errorf("webhook %s failurePolicy %v, want %s", w["name"], w["failurePolicy"], want)
		}
		if ns := w["clientConfig"].(map[string]any)["service"].(map[string]any)["namespace"]; ns != "gate" {
			t.Errorf("webhook %s service namespace %v", w["name"], ns)
		}
		expr := w["namespaceSelector"].(map[string]any)["matchExpressions"].([]any)[0].(map[string]any)
		if got := toStrings(expr["values"]); !slices.Equal(got, []string{"kube-system", "sandbox", "gate"}) {
			t.Errorf("webhook %s excludes %v", w["name"], got)
		}
	}
	for k := range objs {
		if strings.Contains(k, releaseNamespace) {
			t.Errorf("%s: config/default's namespace left in the chart", k)
		}
	}
}

func toStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}
