package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// helmChartFiles is a chart "web" whose templates show what helm template
// was given: release name and namespace, values, capabilities; with a CRD
// and a hook.
func helmChartFiles(dir string) map[string]string {
	return map[string]string{
		dir + "/Chart.yaml":  "apiVersion: v2\nname: web\nversion: 1.2.3\n",
		dir + "/values.yaml": "replicas: 1\nimage: {tag: chart}\nlabels: {from: chart}\n",
		dir + "/crds/crd.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n" +
			"metadata: {name: widgets.example.com}\n",
		dir + "/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-web\n" +
			"data:\n  namespace: {{ .Release.Namespace | quote }}\n  values: {{ toJson .Values | quote }}\n" +
			"  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n" +
			"  widgets: {{ .Capabilities.APIVersions.Has \"example.com/v1\" | quote }}\n",
		dir + "/templates/hook.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}-migrate\n" +
			"  annotations: {\"helm.sh/hook\": pre-install}\nspec: {template: {spec: {restartPolicy: Never, containers: [{name: m, image: \"busybox:1\"}]}}}\n",
	}
}

// mergedFiles returns the union of file maps.
func mergedFiles(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// kindNames lists "Kind/namespace/name" of docs.
func kindNames(docs []Document) []string {
	var out []string
	for _, d := range docs {
		ns, _ := fieldAt(d.Object, "metadata.namespace").(string)
		out = append(out, fieldAt(d.Object, "kind").(string)+"/"+ns+"/"+fieldAt(d.Object, "metadata.name").(string))
	}
	return out
}

// configMap returns the data of the ConfigMap of docs.
func configMap(t *testing.T, docs []Document) map[string]any {
	t.Helper()
	for _, d := range docs {
		if fieldAt(d.Object, "kind") == "ConfigMap" {
			return fieldAt(d.Object, "data").(map[string]any)
		}
	}
	t.Fatalf("no ConfigMap in %v", kindNames(docs))
	return nil
}

const enableHelm = "--enable-helm"

// TestBuildKustomizeHelmCharts: with --enable-helm a chart in the chart
// home is inflated like kustomize's generator does it: values file and
// inline values, release in the kustomization's namespace (which the
// namespace transformer does not force on the chart's objects), hooks
// kept, CRDs only with includeCRDs, the kustomization's other
// transformers applied, and the origin is the kustomization's line.
func TestBuildKustomizeHelmCharts(t *testing.T) {
	root := writeTree(t, mergedFiles(helmChartFiles("app/charts/web"), map[string]string{
		"app/kustomization.yaml": "namespace: shop\nnamePrefix: p-\nresources: [extra.yaml]\nbuildMetadata: [originAnnotations]\n" +
			"helmCharts:\n- name: web\n  releaseName: rel\n  valuesInline: {replicas: 3, labels: {inline: x}}\n",
		"app/extra.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: extra}\n",
	}))
	res, err := Build(t.Context(), root, "app", Options{KustomizeBuildOptions: enableHelm}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// kustomize's legacy order, by kind.
	want := []string{"ConfigMap//p-rel-web", "Service/shop/p-extra", "Job//p-rel-migrate"}
	if d := cmp.Diff(want, kindNames(res.Documents)); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}
	data := configMap(t, res.Documents)
	if data["namespace"] != "shop" {
		t.Errorf("release namespace %v, want the kustomization's", data["namespace"])
	}
	wantValues := `{"image":{"tag":"chart"},"labels":{"from":"chart","inline":"x"},"replicas":3}`
	if data["values"] != wantValues {
		t.Errorf("values %v, want %s", data["values"], wantValues)
	}
	for _, d := range res.Documents {
		if a := fieldAt(d.Object, "metadata.annotations"); a != nil {
			if _, ok := a.(map[string]any)["internal.config.kubernetes.io/helm-generated"]; ok {
				t.Errorf("%v keeps kustomize's internal annotation", kindNames([]Document{d}))
			}
		}
		if d.Origin != KindKustomize {
			t.Errorf("origin %q", d.Origin)
		}
	}
	if cm := res.Documents[0]; cm.File != "app/kustomization.yaml" || cm.Line != 6 {
		t.Errorf("the chart's ConfigMap is placed at %s:%d, want its entry, app/kustomization.yaml:6", cm.File, cm.Line)
	}
	// The origin kustomize writes for its generator's output.
	wantOrigin := "configuredIn: kustomization.yaml\nconfiguredBy:\n  apiVersion: builtin\n  kind: HelmChartInflationGenerator\n"
	if got := fieldAt(res.Documents[0].Object, "metadata.annotations").(map[string]any)["config.kubernetes.io/origin"]; got != wantOrigin {
		t.Errorf("origin annotation %q, want %q", got, wantOrigin)
	}

	// includeCRDs, skipHooks, values merge, capabilities.
	root = writeTree(t, mergedFiles(helmChartFiles("app/charts/web"), map[string]string{
		"app/kustomization.yaml": "helmCharts:\n- name: web\n  releaseName: rel\n  namespace: ns1\n  includeCRDs: true\n  skipHooks: true\n" +
			"  valuesMerge: merge\n  valuesInline: {replicas: 3, extra: 1}\n  kubeVersion: \"1.29.0\"\n  apiVersions: [example.com/v1]\n",
	}))
	res, err = Build(t.Context(), root, "app", Options{KustomizeBuildOptions: enableHelm}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"CustomResourceDefinition//widgets.example.com", "ConfigMap//rel-web"}
	if d := cmp.Diff(want, kindNames(res.Documents)); d != "" {
		t.Errorf("includeCRDs, skipHooks (-want +got):\n%s", d)
	}
	data = configMap(t, res.Documents)
	if want := `{"extra":1,"image":{"tag":"chart"},"labels":{"from":"chart"},"replicas":1}`; data["values"] != want {
		t.Errorf("valuesMerge merge: values %v, want %s", data["values"], want)
	}
	if data["namespace"] != "ns1" || data["kube"] != "v1.29.0" || data["widgets"] != "true" {
		t.Errorf("entry's namespace and capabilities: %v", data)
	}
	// The source's capabilities (the cluster's), which Argo CD passes as
	// --helm-kube-version, win over the entry's.
	res, err = Build(t.Context(), root, "app", Options{KustomizeBuildOptions: enableHelm, Capabilities: &Capabilities{KubeVersion: "1.31.2"}}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if data = configMap(t, res.Documents); data["kube"] != "v1.31.2" || data["widgets"] != "true" {
		t.Errorf("with the cluster's version: %v", data)
	}
}

// TestBuildKustomizeHelmChartsPulled: a chart not in the chart home is the
// one the repo-server pulled, by repository, name and version; values
// files and additional values files are the kustomization's; a base's
// charts inherit the namespace of the overlay that names it.
func TestBuildKustomizeHelmChartsPulled(t *testing.T) {
	pulled := writeTree(t, helmChartFiles("web"))
	root := writeTree(t, map[string]string{
		"overlay/kustomization.yaml": "namespace: prod\nresources: [../base]\n",
		"base/kustomization.yaml": "helmCharts:\n- name: web\n  repo: https://charts.example.com\n  version: 1.2.3\n  releaseName: rel\n" +
			"  valuesFile: values-base.yaml\n  additionalValuesFiles: [more.yaml]\n",
		"base/values-base.yaml": "replicas: 5\n",
		"base/more.yaml":        "image: {tag: more}\n",
	})
	opts := Options{KustomizeBuildOptions: enableHelm, KustomizeCharts: []KustomizeChart{{Repo: "https://charts.example.com", Name: "web", Version: "1.2.3", Dir: pulled + "/web"}}}
	res, err := Build(t.Context(), root, "overlay", opts, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	data := configMap(t, res.Documents)
	if want := `{"image":{"tag":"more"},"labels":{"from":"chart"},"replicas":5}`; data["values"] != want || data["namespace"] != "prod" {
		t.Errorf("values %v namespace %v, want %s in prod", data["values"], data["namespace"], want)
	}
	if cm := res.Documents[0]; cm.File != "base/kustomization.yaml" || cm.Line != 2 {
		t.Errorf("placed at %s:%d", cm.File, cm.Line)
	}

	// Without a values file, valuesInline is merged over the pulled
	// chart's values.yaml.
	inline := writeTree(t, map[string]string{"app/kustomization.yaml": "helmCharts:\n- name: web\n  repo: https://charts.example.com\n  version: 1.2.3\n" +
		"  releaseName: rel\n  valuesInline: {image: {tag: inline}}\n"})
	if res, err = Build(t.Context(), inline, "app", opts, Limits{}); err != nil {
		t.Fatal(err)
	}
	if data, want := configMap(t, res.Documents), `{"image":{"tag":"inline"},"labels":{"from":"chart"},"replicas":1}`; data["values"] != want {
		t.Errorf("inline over the pulled chart's values: %v, want %s", data["values"], want)
	}

	opts.KustomizeCharts = nil
	if _, err := Build(t.Context(), root, "overlay", opts, Limits{}); !errors.Is(err, ErrRemoteReference) ||
		!strings.Contains(err.Error(), `base/kustomization.yaml line 1: helmCharts entry "web": remote references are not allowed: chart web of https://charts.example.com was not pulled`) {
		t.Errorf("a chart not pulled: error %v", err)
	}
}

// TestBuildKustomizeHelmChartsRefused: what kustomize or helm refuse, and
// what tollgate refuses, each named.
func TestBuildKustomizeHelmChartsRefused(t *testing.T) {
	tests := []struct {
		name, kustomization, options, want string
	}{
		{"no --enable-helm", "helmCharts: [{name: web, releaseName: r}]\n", "", "app/kustomization.yaml line 1: helmCharts need --enable-helm in argocd-cm kustomize.buildOptions"},
		{"no release name", "helmCharts: [{name: web}]\n", enableHelm, "releaseName is empty: kustomize would run helm template --generate-name"},
		{"both names", "helmCharts: [{name: web, releaseName: r, nameTemplate: x}]\n", enableHelm, "cannot set --name-template and also specify a name"},
		{"flag as name", "helmCharts: [{name: web, releaseName: --post-renderer}]\n", enableHelm, "releaseName must not start with '-'"},
		{"no chart", "helmCharts: [{name: other, releaseName: r}]\n", enableHelm, "no repo specified for pull, no chart found at 'app/charts/other'"},
		{"values outside", "helmCharts: [{name: web, releaseName: r, valuesFile: ../secret.yaml}]\n", enableHelm, "security; file '../secret.yaml' is not in or below 'app'"},
		{"values outside the repository", "helmCharts: [{name: web, releaseName: r, valuesFile: ../../etc.yaml}]\n", enableHelm + " --load-restrictor LoadRestrictionsNone", "outside the repository root"},
		{"environment in the name", "helmCharts: [{name: web, nameTemplate: '{{ env \"HOME\" }}'}]\n", enableHelm, `function "env" not defined`},
		{"bad merge", "helmCharts: [{name: web, releaseName: r, valuesMerge: sideways, valuesInline: {a: 1}}]\n", enableHelm, "valuesMerge must be one of [merge override replace]"},
		{"absolute home", "helmGlobals: {chartHome: /tmp}\nhelmCharts: [{name: web, releaseName: r}]\n", enableHelm, `helmGlobals.chartHome "/tmp": an absolute chart home is outside the repository`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeTree(t, mergedFiles(helmChartFiles("app/charts/web"), map[string]string{
				"app/kustomization.yaml": tt.kustomization,
				"secret.yaml":            "a: 1\n",
			}))
			_, err := Build(t.Context(), root, "app", Options{KustomizeBuildOptions: tt.options}, Limits{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
	// An empty resources field takes the charts' output.
	root0 := writeTree(t, mergedFiles(helmChartFiles("app/charts/web"), map[string]string{
		"app/kustomization.yaml": "resources:\nhelmCharts: [{name: web, releaseName: r}]\n",
	}))
	if res, err := Build(t.Context(), root0, "app", Options{KustomizeBuildOptions: enableHelm}, Limits{}); err != nil || len(res.Documents) != 2 {
		t.Errorf("with an empty resources field: %v, %v", kindNames(res.Documents), err)
	}
	// A name template names the release.
	root := writeTree(t, mergedFiles(helmChartFiles("app/charts/web"), map[string]string{
		"app/kustomization.yaml": "helmCharts: [{name: web, nameTemplate: '{{ \"TMPL\" | lower }}'}]\n",
	}))
	res, err := Build(t.Context(), root, "app", Options{KustomizeBuildOptions: enableHelm}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := kindNames(res.Documents); len(got) == 0 || got[0] != "ConfigMap//tmpl-web" {
		t.Errorf("nameTemplate: %v", got)
	}
}

// TestKustomizeHelmChartsCapabilities: an Application's kustomize
// kubeVersion and apiVersions, else the destination cluster's, are what
// its kustomization's charts see, as Argo CD passes them to kustomize
// build with --helm-kube-version and --helm-api-versions.
func TestKustomizeHelmChartsCapabilities(t *testing.T) {
	root := writeTree(t, mergedFiles(helmChartFiles("app/charts/web"), map[string]string{
		"app/kustomization.yaml": "helmCharts: [{name: web, releaseName: rel, kubeVersion: \"1.20.0\"}]\n",
	}))
	info := AppInfo{Name: "shop", KubeVersion: "v1.30.1+k3s1", APIVersions: []string{"apps/v1"}}
	for _, tt := range []struct {
		name          string
		k             *v1alpha1.ApplicationSourceKustomize
		kube, widgets string
	}{
		{name: "the cluster's", kube: "v1.30.1", widgets: "false"},
		{name: "the source's", k: &v1alpha1.ApplicationSourceKustomize{KubeVersion: "1.28.3", APIVersions: []string{"example.com/v1"}}, kube: "v1.28.3", widgets: "true"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := AppSource{Field: "spec.source", Source: v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/r", Path: "app", Kustomize: tt.k}}
			_, opts, err := SourceOptions(info, src, root, "app", "0123456789", nil)
			if err != nil {
				t.Fatal(err)
			}
			opts.KustomizeBuildOptions = enableHelm
			res, err := Build(t.Context(), root, "app", opts, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if data := configMap(t, res.Documents); data["kube"] != tt.kube || data["widgets"] != tt.widgets {
				t.Errorf("capabilities %v, want kube %s, example.com/v1 %s", data, tt.kube, tt.widgets)
			}
		})
	}
}
