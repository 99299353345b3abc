package parity

import (
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// handCase is a hand-written Application of the fields where the CLI and
// the engine used to diverge (issue #11), with what both must make of it.
type handCase struct {
	name string
	// sources is the Application's spec.source (one mapping) or
	// spec.sources (a list), as YAML indented under spec; R stands for
	// the repository under test.
	sources string
	// wantErr is the message both refuse the Application with, as the CLI
	// gives it; "" when it renders.
	wantErr string
	// wantIDs are the identities of the objects it renders
	// (group/kind/namespace/name), sorted.
	wantIDs []string
	// wantData is the data of the chart's ConfigMap (…-cfg), when the
	// case renders the chart: it shows which values won.
	wantData map[string]any
}

// handCases cover kustomize options (applied, every one Argo CD has), Helm value files (relative, repository-absolute, "$ref"
// from a second source of the same repository, missing with and without
// ignoreMissingValueFiles), parameters, values and valuesObject, directory
// recurse/include/exclude, multiple sources, a plugin, URL spellings of
// the same repository, and paths that leave the repository.
var handCases = []handCase{
	{
		name: "kustomize-options",
		sources: `  source:
    repoURL: R
    path: kust/overlay
    kustomize:
      images: [nginx=registry.example.com/nginx:1.27.3]
      namePrefix: p-
      nameSuffix: -s
      namespace: kns
      commonLabels: {team: web}
      commonAnnotations: {owner: web}
`,
		wantIDs: []string{"/Service/kns/p-web-s", "apps/Deployment/kns/p-web-s"},
	},
	{
		name: "kustomize-patches",
		sources: `  source:
    repoURL: R
    path: kust/overlay
    kustomize:
      patches:
        - target: {kind: Deployment}
          patch: '[{"op": "replace", "path": "/spec/replicas", "value": 3}]'
`,
		wantIDs: []string{"/Service//web", "apps/Deployment//web"},
	},
	{
		name: "kustomize-replicas",
		sources: `  source:
    repoURL: R
    path: kust/overlay
    kustomize: {replicas: [{name: web, count: 3}]}
`,
		wantIDs: []string{"/Service//web", "apps/Deployment//web"},
	},
	{
		name: "kustomize-components",
		sources: `  source:
    repoURL: R
    path: kust/overlay
    kustomize: {components: [../component]}
`,
		wantIDs: []string{"/Service//web", "apps/Deployment//web"},
	},
	{
		name: "kustomize-force-common-labels",
		sources: `  source:
    repoURL: R
    path: kust/overlay
    kustomize: {commonLabels: {team: web}, forceCommonLabels: true}
`,
		wantIDs: []string{"/Service//web", "apps/Deployment//web"},
	},
	{
		name: "kustomize-force-common-annotations",
		sources: `  sources:
    - repoURL: R
      path: kust/overlay
      kustomize: {commonAnnotations: {owner: web}, forceCommonAnnotations: true}
`,
		wantIDs: []string{"/Service//web", "apps/Deployment//web"},
	},
	{
		name: "kustomize-missing-resource",
		sources: `  source:
    repoURL: R
    path: kust/broken
`,
		wantErr: "spec.source: render kustomize kust/broken: accumulating resources: accumulation err='accumulating resources from 'missing.yaml': " +
			"kust/broken/missing.yaml: stat kust/broken/missing.yaml: no such file or directory': must build at directory: not a valid directory: " +
			"kust/broken/missing.yaml: stat kust/broken/missing.yaml: no such file or directory",
	},
	{
		name: "helm-value-files",
		sources: `  sources:
    - repoURL: R
      path: charts/web
      helm:
        valueFiles: [values-prod.yaml, /envs/base.yaml, $values/envs/prod.yaml]
    - repoURL: R
      ref: values
`,
		wantIDs: []string{"/ConfigMap/hand/helm-value-files-cfg", "apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com"},
		wantData: map[string]any{
			"region": "eu", "replicas": "4", "image": "nginx:2.0", "extra": "{}", "source": "envs-base", "env": "prod",
		},
	},
	{
		name: "helm-ignore-missing-value-files",
		sources: `  sources:
    - repoURL: R
      path: charts/web
      helm:
        valueFiles: [values-prod.yaml, values-missing.yaml, $values/envs/missing.yaml]
        ignoreMissingValueFiles: true
    - repoURL: R
      ref: values
`,
		wantIDs: []string{"/ConfigMap/hand/helm-ignore-missing-value-files-cfg", "apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com"},
		wantData: map[string]any{
			"region": "eu", "replicas": "1", "image": "nginx:1.0", "extra": "{}", "source": "values-prod", "env": "none",
		},
	},
	{
		name: "helm-missing-value-file",
		sources: `  source:
    repoURL: R
    path: charts/web
    helm: {valueFiles: [values-missing.yaml]}
`,
		wantErr: "spec.source: render helm charts/web: read value file values-missing.yaml: file does not exist",
	},
	{
		name: "helm-parameters-values",
		sources: `  source:
    repoURL: R
    path: charts/web
    helm:
      releaseName: rel
      namespace: hns
      skipCrds: true
      values: |
        region: us
        replicas: 2
      valuesObject:
        extra: {a: 1, b: [x, y]}
        region: ap
      parameters:
        - {name: replicas, value: "3"}
        - {name: image.tag, value: "1.10", forceString: true}
`,
		wantIDs: []string{"/ConfigMap/hns/rel-cfg"},
		wantData: map[string]any{
			"region": "ap", "replicas": "3", "image": "nginx:1.10", "extra": `{"a":1,"b":["x","y"]}`, "source": "chart", "env": "none",
		},
	},
	{
		name: "helm-unknown-ref",
		sources: `  source:
    repoURL: R
    path: charts/web
    helm: {valueFiles: [$nope/envs/prod.yaml]}
`,
		wantErr: `spec.source.helm.valueFiles[0]: no source of the application has ref "nope"`,
	},
	{
		name: "helm-remote-value-file",
		sources: `  source:
    repoURL: R
    path: charts/web
    helm: {valueFiles: ["https://example.com/values.yaml"]}
`,
		wantErr: "spec.source.helm.valueFiles[0] is not supported: remote value files (https://example.com/values.yaml) are not fetched",
	},
	{
		name: "helm-file-parameters",
		sources: `  source:
    repoURL: R
    path: charts/web
    helm: {fileParameters: [{name: source, path: source.txt}], skipTests: true}
`,
		wantIDs:  []string{"/ConfigMap/hand/helm-file-parameters-cfg", "apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com"},
		wantData: map[string]any{"region": "home", "replicas": "1", "image": "nginx:1.0", "extra": "{}", "source": "from-file", "env": "none"},
	},
	{
		name: "directory-recurse",
		sources: `  source:
    repoURL: R
    path: plain
    directory: {recurse: true}
`,
		wantIDs: []string{"/ConfigMap//a", "/ConfigMap//b", "/ConfigMap//c", "/ConfigMap//skip-me"},
	},
	{
		name: "directory-include-exclude",
		sources: `  source:
    repoURL: R
    path: plain
    directory: {recurse: true, include: "*.yaml,*.yml,*.json", exclude: "*skip*"}
`,
		wantIDs: []string{"/ConfigMap//a", "/ConfigMap//b", "/ConfigMap//c"},
	},
	{
		name: "directory-jsonnet",
		sources: `  source:
    repoURL: R
    path: jsonnet
    directory: {jsonnet: {tlas: [{name: env, value: prod}], extVars: [{name: app, value: $ARGOCD_APP_NAME}], libs: [jsonnet-lib]}}
`,
		wantIDs: []string{"/ConfigMap//directory-jsonnet-prod"},
	},
	{
		name: "multiple-sources",
		sources: `  sources:
    - {repoURL: R, path: plain}
    - {repoURL: R, path: kust/overlay, kustomize: {namePrefix: m-}}
    - repoURL: R
      path: charts/web
      helm: {valueFiles: [$env/envs/prod.yaml]}
    - {repoURL: R, ref: env}
`,
		wantIDs: []string{
			"/ConfigMap//a", "/ConfigMap/hand/multiple-sources-cfg", "/Service//m-web",
			"apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com", "apps/Deployment//m-web",
		},
	},
	{
		name: "tag prefix",
		sources: `  source:
    repoURL: R
    path: plain
    tagPrefix: web/
`,
		wantErr: "spec.source.tagPrefix is not supported: a Git targetRevision is not read as a semver constraint over tags",
	},
	{
		name: "app-of-apps",
		sources: `  source:
    repoURL: R
    path: apps
`,
		// wantIDs: every case's Application (see checkHandCase).
	},
	{
		// The same repository spelled three ways (an upper-case scheme,
		// without ".git", with a trailing slash): both doors take each for
		// the repository under test, and the engine fetches from each.
		name: "repo-url-spelling",
		sources: `  sources:
    - repoURL: HTTPS://git.example.com/parity/hand.git
      path: charts/web
      helm: {valueFiles: [$values/envs/prod.yaml, $more/envs/base.yaml]}
    - repoURL: https://git.example.com/parity/hand
      ref: values
    - repoURL: https://git.example.com/parity/hand.git/
      ref: more
`,
		wantIDs: []string{"/ConfigMap/hand/repo-url-spelling-cfg", "apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com"},
		wantData: map[string]any{
			"region": "home", "replicas": "4", "image": "nginx:2.0", "extra": "{}", "source": "envs-base", "env": "prod",
		},
	},
	{
		// Paths from Git are confined to the repository, the same way.
		name:    "path-outside",
		sources: "  source: {repoURL: R, path: ../outside}\n",
		wantErr: "spec.source: render ../outside: outside the repository root",
	},
	{
		name:    "path-missing",
		sources: "  source: {repoURL: R, path: nope}\n",
		wantErr: "spec.source: render nope: file does not exist",
	},
	{
		name:    "value-file-outside",
		sources: "  source: {repoURL: R, path: charts/web, helm: {valueFiles: [../../../etc/passwd]}}\n",
		wantErr: "spec.source: render helm charts/web: read value file ../../../etc/passwd: outside the repository root",
	},
	{
		name:    "ref-value-file-outside",
		sources: "  sources: [{repoURL: R, path: charts/web, helm: {valueFiles: [$v/../x.yaml]}}, {repoURL: R, ref: v}]\n",
		wantErr: "spec.sources[0]: render helm charts/web: read value file $v/../x.yaml: outside the repository root",
	},
}

// handRepo returns the files of the hand-written repository: a chart with
// a CRD, value files, a kustomize base and overlay, a plain directory tree,
// and apps/cases.yaml with one Application per case.
func handRepo() map[string]string {
	var apps strings.Builder
	for _, hc := range handCases {
		apps.WriteString("---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: " + hc.name + ", namespace: argocd}\nspec:\n  project: default\n  destination: {server: https://kubernetes.default.svc, namespace: hand}\n")
		apps.WriteString(strings.ReplaceAll(hc.sources, "repoURL: R", "repoURL: "+handRepoURL))
	}
	return map[string]string{
		"apps/cases.yaml": apps.String(),

		"charts/web/Chart.yaml":  "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"charts/web/values.yaml": "region: home\nreplicas: 1\nimage: {repository: nginx, tag: \"1.0\"}\nextra: {}\nsource: chart\n",
		"charts/web/templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cfg
  namespace: {{ .Release.Namespace }}
  labels: {chart: {{ .Chart.Name }}}
data:
  region: {{ .Values.region | quote }}
  replicas: {{ .Values.replicas | quote }}
  image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
  extra: {{ toJson .Values.extra | quote }}
  source: {{ .Values.source | quote }}
  env: {{ .Values.env | default "none" | quote }}
`,
		"charts/web/crds/widget.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object}}
`,
		"charts/web/source.txt":       "from-file",
		"charts/web/values-prod.yaml": "region: eu\nsource: values-prod\n",
		"envs/base.yaml":              "replicas: 4\nsource: envs-base\n",
		"envs/prod.yaml":              "env: prod\nimage: {tag: \"2.0\"}\n",

		"kust/base/kustomization.yaml": "resources: [deployment.yaml, service.yaml]\n",
		"kust/base/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - {name: web, image: "nginx:1.0", ports: [{containerPort: 8080}]}
`,
		"kust/base/service.yaml": `apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`,
		"kust/overlay/kustomization.yaml":   "resources: [../base]\nlabels: [{pairs: {tier: front}}]\n",
		"kust/component/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations: {component: \"yes\"}\n",
		"kust/broken/kustomization.yaml":    "resources: [missing.yaml]\n",

		"jsonnet/app.jsonnet":          "local l = import 'l.libsonnet';\nfunction(env) l.cm(std.extVar('app') + '-' + env)\n",
		"jsonnet-lib/l.libsonnet":      "{ cm(name):: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: name } } }\n",
		"plain/a.yaml":                 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {n: \"1\"}\n",
		"plain/README.md":              "not a manifest\n",
		"plain/sub/b.yml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
		"plain/sub/skip-me.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: skip-me}\n",
		"plain/sub/deeper/c.json":      `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"n": "3"}}`,
		"plain/sub/deeper/values.yaml": "not: [a, manifest]\n",
	}
}

// checkHandCase checks that the CLI (and so the engine, which gave the
// same) made of the hand-written case name what the case wants.
func checkHandCase(t *testing.T, name string, got outcome) {
	t.Helper()
	for _, hc := range handCases {
		if hc.name != name {
			continue
		}
		if got.Err != hc.wantErr {
			t.Errorf("error = %q, want %q", got.Err, hc.wantErr)
		}
		var ids []string
		for _, o := range got.Objects {
			ids = append(ids, o.ID)
		}
		want := hc.wantIDs
		if name == "app-of-apps" {
			for _, c := range handCases {
				want = append(want, "argoproj.io/Application/argocd/"+c.name)
			}
			slices.Sort(want)
		}
		if diff := gocmp.Diff(want, ids); diff != "" && hc.wantErr == "" {
			t.Errorf("objects mismatch (-want +got):\n%s", diff)
		}
		if hc.wantData != nil {
			var data any
			for _, o := range got.Objects {
				if strings.HasSuffix(o.ID, "-cfg") {
					data = o.Object["data"]
				}
			}
			if diff := gocmp.Diff(hc.wantData, data); diff != "" {
				t.Errorf("chart ConfigMap data mismatch (-want +got):\n%s", diff)
			}
		}
		return
	}
	t.Errorf("no hand-written case %q", name)
}
