package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// The tests of this file hold the compatibility ledger's source rows
// (internal/compat): each case sets fields of an Application's source as
// Argo CD spells them and renders it the way every door does
// (ApplicationOptions, then Build), checking the objects that come out.

// compatRevision is the revision the sources are rendered at.
const compatRevision = "0123456789abcdef0123456789abcdef01234567"

// renderSource renders src, found at dir of the checkout root, for the
// Application "shop" whose destination namespace is "web".
func renderSource(t *testing.T, root, dir string, src v1alpha1.ApplicationSource) (Result, error) {
	t.Helper()
	app := AppInfo{Name: "shop", Namespace: "web", Project: "team"}
	opts, err := ApplicationOptions(app, AppSource{Field: "spec.source", Source: src}, compatRevision, nil)
	if err != nil {
		return Result{}, err
	}
	return Build(t.Context(), root, dir, opts, Limits{})
}

// objectsByID indexes rendered objects by "Kind/name".
func objectsByID(docs []Document) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, d := range docs {
		kind, _ := d.Object["kind"].(string)
		name, _ := fieldAt(d.Object, "metadata.name").(string)
		out[kind+"/"+name] = d.Object
	}
	return out
}

// checkFields compares want, keyed "Kind/name:dotted.path" (a path of ""
// only asks whether the object exists: true or false), with objs.
func checkFields(t *testing.T, objs map[string]map[string]any, want map[string]any) {
	t.Helper()
	got := map[string]any{}
	for key := range want {
		id, path, _ := strings.Cut(key, ":")
		obj, ok := objs[id]
		if path == "" {
			got[key] = ok
			continue
		}
		got[key] = fieldAt(obj, path)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		ids := make([]string, 0, len(objs))
		for id := range objs {
			ids = append(ids, id)
		}
		t.Errorf("rendered fields (-want +got):\n%s\nobjects: %v", diff, ids)
	}
}

// TestCompatHelmFields renders a chart through each field of an
// Application's helm block (and of its parameters and file parameters),
// as Argo CD passes them to helm template.
func TestCompatHelmFields(t *testing.T) {
	root := writeTree(t, map[string]string{
		"chart/Chart.yaml":         "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"chart/values.yaml":        "replicas: 1\nconfig: default\n",
		"chart/values.schema.json": `{"type": "object", "properties": {"replicas": {"type": "integer"}}}`,
		"chart/values-prod.yaml":   "replicas: 3\n",
		"chart/crds/widgets.yaml":  "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n",
		"chart/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cfg
  namespace: {{ .Release.Namespace }}
data:
  values: {{ toJson .Values | quote }}
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
  monitoring: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" | quote }}
`,
		"chart/templates/test.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: smoke\n  annotations: {helm.sh/hook: test}\nspec: {containers: [{name: t, image: busybox:1.36}]}\n",
		"files/app.conf":            "listen 8080\n",
		"shared/common.yaml":        "team: web\n",
	})
	type summary struct {
		// Objects are Kind/namespace/name.
		Objects []string
		Values  map[string]any
		// Kube and Monitoring are what the chart saw as .Capabilities.
		Kube, Monitoring string
	}
	defaults := func(edit func(*summary)) summary {
		s := summary{
			Objects: []string{"CustomResourceDefinition//widgets.example.com", "ConfigMap/web/shop-cfg", "Pod//smoke"},
			Values:  map[string]any{"replicas": float64(1), "config": "default"},
			Kube:    chartutil.DefaultCapabilities.KubeVersion.Version, Monitoring: "false",
		}
		if edit != nil {
			edit(&s)
		}
		return s
	}
	object := func(raw string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(raw)} }
	tests := []struct {
		name    string
		helm    v1alpha1.ApplicationSourceHelm
		want    summary
		wantErr string
	}{
		{name: "no options", want: defaults(nil)},
		{
			name: "valueFiles, relative to the chart and to the repository root, in order",
			helm: v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-prod.yaml", "/shared/common.yaml"}},
			want: defaults(func(s *summary) { s.Values["replicas"], s.Values["team"] = float64(3), "web" }),
		},
		{name: "a missing value file", helm: v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"missing.yaml"}}, wantErr: "read value file missing.yaml: file does not exist"},
		{
			name: "ignoreMissingValueFiles",
			helm: v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"missing.yaml", "values-prod.yaml"}, IgnoreMissingValueFiles: true},
			want: defaults(func(s *summary) { s.Values["replicas"] = float64(3) }),
		},
		{
			name: "values over valueFiles",
			helm: v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-prod.yaml"}, Values: "replicas: 4\nconfig: from-values\n"},
			want: defaults(func(s *summary) { s.Values["replicas"], s.Values["config"] = float64(4), "from-values" }),
		},
		{
			name: "valuesObject",
			helm: v1alpha1.ApplicationSourceHelm{ValuesObject: object(`{"config": "from-object", "extra": {"on": true}}`)},
			want: defaults(func(s *summary) { s.Values["config"], s.Values["extra"] = "from-object", map[string]any{"on": true} }),
		},
		{
			name: "parameters over values, build variables substituted, commas kept",
			helm: v1alpha1.ApplicationSourceHelm{Values: "config: from-values\n", Parameters: []v1alpha1.HelmParameter{
				{Name: "config", Value: "$ARGOCD_APP_NAME,a,b"}, {Name: "replicas", Value: "5"}, {Name: "tags[0]", Value: "x"},
			}},
			want: defaults(func(s *summary) {
				s.Values["config"], s.Values["replicas"], s.Values["tags"] = "shop,a,b", float64(5), []any{"x"}
			}),
		},
		{
			name: "forceString",
			helm: v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "config", Value: "5", ForceString: true}, {Name: "other", Value: "5"}}},
			want: defaults(func(s *summary) { s.Values["config"], s.Values["other"] = "5", float64(5) }),
		},
		{
			name: "fileParameters after parameters",
			helm: v1alpha1.ApplicationSourceHelm{
				Parameters:     []v1alpha1.HelmParameter{{Name: "config", Value: "from-parameter"}},
				FileParameters: []v1alpha1.HelmFileParameter{{Name: "config", Path: "/files/app.conf"}},
			},
			want: defaults(func(s *summary) { s.Values["config"] = "listen 8080\n" }),
		},
		{
			name: "releaseName",
			helm: v1alpha1.ApplicationSourceHelm{ReleaseName: "rel"},
			want: defaults(func(s *summary) { s.Objects[1] = "ConfigMap/web/rel-cfg" }),
		},
		{
			name: "namespace",
			helm: v1alpha1.ApplicationSourceHelm{Namespace: "other"},
			want: defaults(func(s *summary) { s.Objects[1] = "ConfigMap/other/shop-cfg" }),
		},
		{
			name: "skipCrds",
			helm: v1alpha1.ApplicationSourceHelm{SkipCrds: true},
			want: defaults(func(s *summary) { s.Objects = s.Objects[1:] }),
		},
		{
			name: "skipTests",
			helm: v1alpha1.ApplicationSourceHelm{SkipTests: true},
			want: defaults(func(s *summary) { s.Objects = s.Objects[:2] }),
		},
		{
			name:    "values that break the chart's schema",
			helm:    v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "replicas", Value: "two"}}},
			wantErr: "values don't meet the specifications of the schema",
		},
		{
			name: "skipSchemaValidation",
			helm: v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "replicas", Value: "two"}}, SkipSchemaValidation: true},
			want: defaults(func(s *summary) { s.Values["replicas"] = "two" }),
		},
		{
			name: "kubeVersion",
			helm: v1alpha1.ApplicationSourceHelm{KubeVersion: "v1.29.3+k3s1"},
			want: defaults(func(s *summary) { s.Kube = "v1.29.3" }),
		},
		{
			name: "apiVersions",
			helm: v1alpha1.ApplicationSourceHelm{APIVersions: []string{"monitoring.coreos.com/v1"}},
			want: defaults(func(s *summary) { s.Monitoring = "true" }),
		},
		{name: "version v3", helm: v1alpha1.ApplicationSourceHelm{Version: "v3"}, want: defaults(nil)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.helm
			res, err := renderSource(t, root, "chart", v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/charts.git", Path: "chart", Helm: &h})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got summary
			for _, d := range res.Documents {
				kind, _ := d.Object["kind"].(string)
				ns, _ := fieldAt(d.Object, "metadata.namespace").(string)
				name, _ := fieldAt(d.Object, "metadata.name").(string)
				got.Objects = append(got.Objects, kind+"/"+ns+"/"+name)
				if kind != "ConfigMap" {
					continue
				}
				raw, _ := fieldAt(d.Object, "data.values").(string)
				if err := json.Unmarshal([]byte(raw), &got.Values); err != nil {
					t.Fatalf("values %q: %v", raw, err)
				}
				got.Kube, _ = fieldAt(d.Object, "data.kube").(string)
				got.Monitoring, _ = fieldAt(d.Object, "data.monitoring").(string)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("render (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompatKustomizeFields renders an overlay through each field of an
// Application's kustomize block (and of its patches, their targets and its
// replicas), applied as Argo CD applies them with kustomize edit.
func TestCompatKustomizeFields(t *testing.T) {
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": "resources: [deploy.yaml, svc.yaml, cm.yaml, hpa.yaml]\ncommonLabels: {env: base}\ncommonAnnotations: {owner: base}\n",
		"app/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web, team: a}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.0}]}
`,
		"app/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: web, labels: {app: web}, annotations: {tier: gold}}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n",
		"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: cfg, labels: {app: web}}\ndata: {k: v}\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: extra, labels: {app: web}}\ndata: {k: v}\n",
		"app/hpa.yaml": "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, labels: {app: web}}\n" +
			"spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 1, maxReplicas: 2}\n",
		"app/patch-replicas.yaml":             "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 7}\n",
		"components/extra/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [extra.yaml]\n",
		"components/extra/extra.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n",
	})
	// labelPatch labels what its target selects.
	labelPatch := func(target v1alpha1.KustomizeSelector) []v1alpha1.KustomizePatch {
		return []v1alpha1.KustomizePatch{{Patch: `[{"op": "add", "path": "/metadata/labels/patched", "value": "yes"}]`, Target: &target}}
	}
	// patched says which objects a label patch changed.
	patched := func(ids ...string) map[string]any {
		want := map[string]any{}
		for _, id := range []string{"Deployment/web", "Service/web", "ConfigMap/settings", "ConfigMap/other", "HorizontalPodAutoscaler/web"} {
			want[id+":metadata.labels.patched"] = nil
		}
		for _, id := range ids {
			want[id+":metadata.labels.patched"] = "yes"
		}
		return want
	}
	tests := []struct {
		name    string
		k       v1alpha1.ApplicationSourceKustomize
		want    map[string]any
		wantErr string
	}{
		{
			name: "no options",
			want: map[string]any{"Deployment/web:metadata.labels.env": "base", "Deployment/web:metadata.annotations.owner": "base", "Deployment/web:spec.replicas": int64(1)},
		},
		{name: "namePrefix", k: v1alpha1.ApplicationSourceKustomize{NamePrefix: "p-"}, want: map[string]any{"Deployment/p-web:": true, "ConfigMap/p-settings:": true, "Deployment/web:": false}},
		{name: "nameSuffix", k: v1alpha1.ApplicationSourceKustomize{NameSuffix: "-s"}, want: map[string]any{"Deployment/web-s:": true, "Service/web-s:": true, "Deployment/web:": false}},
		{
			name: "images, build variables substituted",
			k:    v1alpha1.ApplicationSourceKustomize{Images: []string{"nginx=registry.example.com/nginx:${ARGOCD_APP_REVISION_SHORT}"}},
			want: map[string]any{"Deployment/web:spec.template.spec.containers": []any{map[string]any{"name": "web", "image": "registry.example.com/nginx:0123456"}}},
		},
		{
			name: "commonLabels, build variables substituted, selectors too",
			k:    v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"app.example.com/name": "$ARGOCD_APP_NAME"}},
			want: map[string]any{
				"Deployment/web:metadata.labels":           map[string]any{"app": "web", "team": "a", "env": "base", "app.example.com/name": "shop"},
				"Deployment/web:spec.selector.matchLabels": map[string]any{"app": "web", "env": "base", "app.example.com/name": "shop"},
			},
		},
		{name: "commonLabels already in the kustomization", k: v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"env": "app"}}, wantErr: "label env already in kustomization file"},
		{
			name: "forceCommonLabels",
			k:    v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"env": "app"}, ForceCommonLabels: true},
			want: map[string]any{"Deployment/web:metadata.labels.env": "app", "ConfigMap/settings:metadata.labels.env": "app"},
		},
		{
			name: "commonAnnotations, build variables not substituted",
			k:    v1alpha1.ApplicationSourceKustomize{CommonAnnotations: map[string]string{"rev": "$ARGOCD_APP_REVISION_SHORT"}},
			want: map[string]any{"Deployment/web:metadata.annotations.rev": "$ARGOCD_APP_REVISION_SHORT", "Service/web:metadata.annotations.tier": "gold"},
		},
		{
			name: "commonAnnotationsEnvsubst",
			k:    v1alpha1.ApplicationSourceKustomize{CommonAnnotations: map[string]string{"rev": "$ARGOCD_APP_REVISION_SHORT"}, CommonAnnotationsEnvsubst: true},
			want: map[string]any{"Deployment/web:metadata.annotations.rev": "0123456"},
		},
		{name: "commonAnnotations already in the kustomization", k: v1alpha1.ApplicationSourceKustomize{CommonAnnotations: map[string]string{"owner": "app"}}, wantErr: "annotation owner already in kustomization file"},
		{
			name: "forceCommonAnnotations",
			k:    v1alpha1.ApplicationSourceKustomize{CommonAnnotations: map[string]string{"owner": "app"}, ForceCommonAnnotations: true},
			want: map[string]any{"Deployment/web:metadata.annotations.owner": "app", "Service/web:metadata.annotations.owner": "app"},
		},
		{
			name: "labelWithoutSelector",
			k:    v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"tier": "web"}, LabelWithoutSelector: true},
			want: map[string]any{
				"Deployment/web:metadata.labels.tier":               "web",
				"Deployment/web:spec.selector.matchLabels.tier":     nil,
				"Deployment/web:spec.template.metadata.labels.tier": nil,
				"Service/web:spec.selector.tier":                    nil,
				"HorizontalPodAutoscaler/web:metadata.labels.tier":  "web",
				"Deployment/web:spec.template.metadata.labels.env":  "base",
				"Deployment/web:spec.selector.matchLabels.env":      "base",
				"ConfigMap/settings:metadata.labels.tier":           "web",
			},
		},
		{
			name: "labelIncludeTemplates",
			k:    v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"tier": "web"}, LabelWithoutSelector: true, LabelIncludeTemplates: true},
			want: map[string]any{
				"Deployment/web:metadata.labels.tier":               "web",
				"Deployment/web:spec.selector.matchLabels.tier":     nil,
				"Deployment/web:spec.template.metadata.labels.tier": "web",
			},
		},
		{
			name: "namespace",
			k:    v1alpha1.ApplicationSourceKustomize{Namespace: "ns1"},
			want: map[string]any{"Deployment/web:metadata.namespace": "ns1", "ConfigMap/settings:metadata.namespace": "ns1"},
		},
		{
			name: "replicas, name and count (a string holding a number)",
			k:    v1alpha1.ApplicationSourceKustomize{Replicas: []v1alpha1.KustomizeReplica{{Name: "web", Count: intstr.FromString("4")}}},
			want: map[string]any{"Deployment/web:spec.replicas": int64(4)},
		},
		{
			name: "replicas, count a number",
			k:    v1alpha1.ApplicationSourceKustomize{Replicas: []v1alpha1.KustomizeReplica{{Name: "web", Count: intstr.FromInt32(6)}}},
			want: map[string]any{"Deployment/web:spec.replicas": int64(6)},
		},
		{
			name: "patches, path: a file of the kustomization's directory",
			k:    v1alpha1.ApplicationSourceKustomize{Patches: []v1alpha1.KustomizePatch{{Path: "patch-replicas.yaml"}}},
			want: map[string]any{"Deployment/web:spec.replicas": int64(7)},
		},
		{name: "patches, patch and target kind", k: v1alpha1.ApplicationSourceKustomize{Patches: labelPatch(v1alpha1.KustomizeSelector{Kind: "ConfigMap"})}, want: patched("ConfigMap/settings", "ConfigMap/other")},
		{name: "target group", k: v1alpha1.ApplicationSourceKustomize{Patches: labelPatch(v1alpha1.KustomizeSelector{Group: "apps"})}, want: patched("Deployment/web")},
		{name: "target version", k: v1alpha1.ApplicationSourceKustomize{Patches: labelPatch(v1alpha1.KustomizeSelector{Version: "v2"})}, want: patched("HorizontalPodAutoscaler/web")},
		{name: "target name", k: v1alpha1.ApplicationSourceKustomize{Patches: labelPatch(v1alpha1.KustomizeSelector{Name: "settings"})}, want: patched("ConfigMap/settings")},
		{name: "target namespace", k: v1alpha1.ApplicationSourceKustomize{Patches: labelPatch(v1alpha1.KustomizeSelector{Namespace: "extra"})}, want: patched("ConfigMap/other")},
		{name: "target labelSelector", k: v1alpha1.ApplicationSourceKustomize{Patches: labelPatch(v1alpha1.KustomizeSelector{LabelSelector: "team=a"})}, want: patched("Deployment/web")},
		{name: "target annotationSelector", k: v1alpha1.ApplicationSourceKustomize{Patches: labelPatch(v1alpha1.KustomizeSelector{AnnotationSelector: "tier=gold"})}, want: patched("Service/web")},
		{
			name: "patch options: allowNameChange",
			k: v1alpha1.ApplicationSourceKustomize{Patches: []v1alpha1.KustomizePatch{{
				Patch:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: renamed}\n",
				Target:  &v1alpha1.KustomizeSelector{Kind: "ConfigMap", Name: "settings"},
				Options: map[string]bool{"allowNameChange": true},
			}}},
			want: map[string]any{"ConfigMap/renamed:": true, "ConfigMap/settings:": false},
		},
		{
			name: "patch options: no name change without allowNameChange",
			k: v1alpha1.ApplicationSourceKustomize{Patches: []v1alpha1.KustomizePatch{{
				Patch:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: renamed}\n",
				Target: &v1alpha1.KustomizeSelector{Kind: "ConfigMap", Name: "settings"},
			}}},
			want: map[string]any{"ConfigMap/renamed:": false, "ConfigMap/settings:": true},
		},
		{
			name: "patch options: allowKindChange",
			k: v1alpha1.ApplicationSourceKustomize{Patches: []v1alpha1.KustomizePatch{{
				Patch:   "apiVersion: v1\nkind: Secret\nmetadata: {name: settings}\n",
				Target:  &v1alpha1.KustomizeSelector{Kind: "ConfigMap", Name: "settings"},
				Options: map[string]bool{"allowKindChange": true},
			}}},
			want: map[string]any{"Secret/settings:": true, "ConfigMap/settings:": false},
		},
		{name: "components", k: v1alpha1.ApplicationSourceKustomize{Components: []string{"../components/extra"}}, want: map[string]any{"ConfigMap/extra:": true}},
		{name: "a missing component", k: v1alpha1.ApplicationSourceKustomize{Components: []string{"../components/extra", "../components/none"}}, wantErr: "component ../components/none has no match in the repository"},
		{
			name: "ignoreMissingComponents",
			k:    v1alpha1.ApplicationSourceKustomize{Components: []string{"../components/extra", "../components/none"}, IgnoreMissingComponents: true},
			want: map[string]any{"ConfigMap/extra:": true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := tc.k
			res, err := renderSource(t, root, "app", v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "app", Kustomize: &k})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkFields(t, objectsByID(res.Documents), tc.want)
		})
	}
}

// TestCompatDirectoryFields renders a directory of manifests through each
// field of an Application's directory block.
func TestCompatDirectoryFields(t *testing.T) {
	cm := func(name string) string { return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n" }
	root := writeTree(t, map[string]string{
		"app/a.yaml":        cm("a"),
		"app/b.json":        `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}`,
		"app/sub/c.yaml":    cm("c"),
		"app/skip/d.yml":    cm("d"),
		"app/s.yaml.sealed": cm("s"),
	})
	tests := []struct {
		name string
		dir  v1alpha1.ApplicationSourceDirectory
		want []string
	}{
		{name: "no options: the top level", want: []string{"a", "b"}},
		{name: "recurse", dir: v1alpha1.ApplicationSourceDirectory{Recurse: true}, want: []string{"a", "b", "d", "c"}},
		{name: "include", dir: v1alpha1.ApplicationSourceDirectory{Recurse: true, Include: "{*.json,sub/*}"}, want: []string{"b", "c"}},
		{name: "exclude", dir: v1alpha1.ApplicationSourceDirectory{Recurse: true, Exclude: "skip/*"}, want: []string{"a", "b", "c"}},
		{name: "exclude over include", dir: v1alpha1.ApplicationSourceDirectory{Recurse: true, Include: "*.yaml", Exclude: "sub/*"}, want: []string{"a"}},
		{name: "another extension, filtered", dir: v1alpha1.ApplicationSourceDirectory{Include: "*.sealed"}},
		{name: "disableExtensionFilter", dir: v1alpha1.ApplicationSourceDirectory{Include: "*.sealed", DisableExtensionFilter: true}, want: []string{"s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.dir
			res, err := renderSource(t, root, "app", v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "app", Directory: &d})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, doc := range res.Documents {
				got = append(got, doc.Object["metadata"].(map[string]any)["name"].(string))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}
