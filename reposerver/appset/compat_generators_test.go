package appset

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The tests of this file prove the generator fields the compatibility
// ledger (internal/compat) lists as honoured and no other test exercises.

// generateSummary generates manifest with src and returns summary's lines.
func generateSummary(t *testing.T, manifest string, src Sources) []string {
	t.Helper()
	gen, err := Generate(t.Context(), decodeSet(t, manifest), src)
	if err != nil {
		t.Fatal(err)
	}
	return summary(gen)
}

// TestGenerateListElementsYaml: elementsYaml's objects are parameter sets
// after those of elements; with goTemplate, a list of a matrix parameter
// rendered with toJson (Argo CD's list-elementsYaml example) gives one set
// per item.
func TestGenerateListElementsYaml(t *testing.T) {
	checkout := repo(t, map[string]string{
		"components/config.yaml": `key:
  components:
  - {name: component1, namespace: ns1}
  - {name: component2, namespace: ns2}
`,
	})
	for _, tc := range []struct {
		name, manifest string
		want           []string
	}{
		{
			name: "elements, then elementsYaml",
			manifest: header + `  generators:
  - list:
      elements: [{cluster: a, url: https://a}]
      elementsYaml: |
        - {cluster: b, url: https://b}
        - {cluster: c, url: https://c}
  template:
    metadata: {name: '{{cluster}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: 'apps/{{cluster}}'}
      destination: {server: '{{url}}', namespace: x}
`,
			want: []string{"argocd/a default https://a/x apps/a", "argocd/b default https://b/x apps/b", "argocd/c default https://c/x apps/c"},
		},
		{
			// As Argo CD's fasttemplate: an empty parameter is
			// substituted; an unknown one stays as written.
			name: "empty and unknown parameters",
			manifest: header + `  generators:
  - list:
      elements: [{cluster: a, suffix: ""}]
  template:
    metadata: {name: '{{cluster}}{{suffix}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: 'apps/{{cluster}}{{suffix}}/{{unknown}}'}
      destination: {server: https://kubernetes.default.svc, namespace: x}
`,
			want: []string{"argocd/a default https://kubernetes.default.svc/x apps/a/{{unknown}}"},
		},
		{
			name: "a matrix parameter rendered with toJson",
			manifest: header + `  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - matrix:
      generators:
      - git:
          repoURL: https://git.example.com/config.git
          revision: HEAD
          files: [{path: components/config.yaml}]
      - list:
          elementsYaml: '{{ .key.components | toJson }}'
  template:
    metadata: {name: '{{ .name }}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: '{{ .path.path }}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{ .namespace }}'}
`,
			want: []string{
				"argocd/component1 default https://kubernetes.default.svc/ns1 components",
				"argocd/component2 default https://kubernetes.default.svc/ns2 components",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := generateSummary(t, tc.manifest, Sources{Git: checkout})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Applications (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGenerateClustersFlatList: flatList gives one parameter set holding
// every cluster, each with its parameters and values, as "clusters".
func TestGenerateClustersFlatList(t *testing.T) {
	secrets := []corev1.Secret{
		clusterSecret("prod", "https://prod.example.com", map[string]string{"env": "prod"}),
		clusterSecret("dev", "https://dev.example.com", map[string]string{"env": "dev"}),
	}
	src := Sources{Clusters: func(context.Context) ([]corev1.Secret, error) { return secrets, nil }}
	gen, err := Generate(t.Context(), decodeSet(t, header+`  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - clusters:
      flatList: true
      values: {ns: '{{ .name }}-apps'}
  template:
    metadata:
      name: all-clusters
      annotations:
        clusters: '{{ range .clusters }}{{ .name }}={{ .server }} {{ .values.ns }};{{ end }}'
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: guestbook}
      destination: {server: https://kubernetes.default.svc, namespace: guestbook}
`), src)
	if err != nil {
		t.Fatal(err)
	}
	if len(gen) != 1 {
		t.Fatalf("generated %d Applications, want one for every cluster", len(gen))
	}
	got, _, _ := unstructured.NestedString(gen[0].Application, "metadata", "annotations", "clusters")
	want := "in-cluster=https://kubernetes.default.svc in-cluster-apps;dev=https://dev.example.com dev-apps;prod=https://prod.example.com prod-apps;"
	if got != want {
		t.Errorf("clusters annotation = %q, want %q", got, want)
	}
}

// TestGenerateGitPathParamPrefix: pathParamPrefix puts a git generator's
// path parameters under <prefix>.path, in {{param}} and goTemplate mode,
// for directories and files; path itself is then not set.
func TestGenerateGitPathParamPrefix(t *testing.T) {
	checkout := repo(t, map[string]string{
		"apps/web/kustomization.yaml": "resources: []\n",
		"envs/prod/config.json":       `{"env": "prod"}`,
	})
	for _, tc := range []struct {
		name, manifest string
		want           []string
	}{
		{
			name: "directories, {{param}}",
			manifest: header + `  generators:
  - git:
      repoURL: https://git.example.com/config.git
      revision: HEAD
      pathParamPrefix: app
      directories: [{path: apps/*}]
  template:
    metadata: {name: '{{app.path.basename}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: '{{app.path}}{{path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{app.path[0]}}-{{app.path.basenameNormalized}}'}
`,
			want: []string{"argocd/web default https://kubernetes.default.svc/apps-web apps/web{{path}}"},
		},
		{
			name: "directories, goTemplate",
			manifest: header + `  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - git:
      repoURL: https://git.example.com/config.git
      revision: HEAD
      pathParamPrefix: app
      directories: [{path: apps/*}]
  template:
    metadata: {name: '{{ .app.path.basename }}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: '{{ .app.path.path }}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{ index .app.path.segments 1 }}'}
`,
			want: []string{"argocd/web default https://kubernetes.default.svc/web apps/web"},
		},
		{
			name: "files, {{param}}",
			manifest: header + `  generators:
  - git:
      repoURL: https://git.example.com/config.git
      revision: HEAD
      pathParamPrefix: cfg
      files: [{path: envs/*/config.json}]
  template:
    metadata: {name: '{{env}}-{{cfg.path.filename}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: '{{cfg.path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{cfg.path.basename}}'}
`,
			want: []string{"argocd/prod-config.json default https://kubernetes.default.svc/prod envs/prod"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := generateSummary(t, tc.manifest, Sources{Git: checkout})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Applications (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGenerateGitValues: a git generator's values are rendered with the
// parameters of each directory or file and added as values.<key> (with
// goTemplate, .values.<key>).
func TestGenerateGitValues(t *testing.T) {
	checkout := repo(t, map[string]string{
		"apps/web/kustomization.yaml": "resources: []\n",
		"apps/api/kustomization.yaml": "resources: []\n",
		"envs/prod/config.json":       `{"env": "prod", "team": "red"}`,
	})
	for _, tc := range []struct {
		name, manifest string
		want           []string
	}{
		{
			name: "directories, {{param}}",
			manifest: header + `  generators:
  - git:
      repoURL: https://git.example.com/config.git
      revision: HEAD
      directories: [{path: apps/*}]
      values: {ns: '{{path.basename}}-ns', fixed: apps}
  template:
    metadata: {name: '{{path.basename}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: '{{values.fixed}}/{{path.basename}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{values.ns}}'}
`,
			want: []string{
				"argocd/api default https://kubernetes.default.svc/api-ns apps/api",
				"argocd/web default https://kubernetes.default.svc/web-ns apps/web",
			},
		},
		{
			name: "files, goTemplate",
			manifest: header + `  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - git:
      repoURL: https://git.example.com/config.git
      revision: HEAD
      files: [{path: envs/*/config.json}]
      values: {ns: '{{ .team }}-{{ .env }}'}
  template:
    metadata: {name: '{{ .env }}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: '{{ .path.path }}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{ .values.ns }}'}
`,
			want: []string{"argocd/prod default https://kubernetes.default.svc/red-prod envs/prod"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := generateSummary(t, tc.manifest, Sources{Git: checkout})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Applications (-want +got):\n%s", diff)
			}
		})
	}
}

// revisionRepo serves one directory per revision of one repository.
type revisionRepo map[string]string

func (r revisionRepo) Checkout(_ context.Context, repoURL, revision string) (string, error) {
	dir, ok := r[revision]
	if repoURL != "https://git.example.com/config.git" || !ok {
		return "", fmt.Errorf("unknown revision %q of %s", revision, repoURL)
	}
	return dir, nil
}

// TestGenerateGitRevision: a git generator reads its repository at its
// revision ("" being the default branch).
func TestGenerateGitRevision(t *testing.T) {
	src := Sources{Git: revisionRepo{
		"":          string(repo(t, map[string]string{"apps/main-only/a.yaml": "a: b\n"})),
		"release-1": string(repo(t, map[string]string{"apps/release-only/a.yaml": "a: b\n"})),
	}}
	for revision, want := range map[string]string{
		"":          "argocd/main-only default https://kubernetes.default.svc/x apps/main-only",
		"release-1": "argocd/release-only default https://kubernetes.default.svc/x apps/release-only",
	} {
		t.Run(fmt.Sprintf("revision %q", revision), func(t *testing.T) {
			got := generateSummary(t, header+`  generators:
  - git:
      repoURL: https://git.example.com/config.git
      revision: '`+revision+`'
      directories: [{path: apps/*}]
  template:
    metadata: {name: '{{path.basename}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: '{{path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: x}
`, src)
			if diff := cmp.Diff([]string{want}, got); diff != "" {
				t.Errorf("Applications (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGenerateGeneratorTemplate: the template of a clusters, git, matrix
// or merge generator overrides what it sets of spec.template, for that
// generator's Applications only.
func TestGenerateGeneratorTemplate(t *testing.T) {
	checkout := repo(t, map[string]string{"apps/web/kustomization.yaml": "resources: []\n"})
	secrets := []corev1.Secret{clusterSecret("prod", "https://prod.example.com", map[string]string{"env": "prod"})}
	src := Sources{Git: checkout, Clusters: func(context.Context) ([]corev1.Secret, error) { return secrets, nil }}
	// override is a generator's template naming its Applications by
	// param.
	override := func(param string) string {
		return `
      template:
        metadata: {name: '{{` + param + `}}'}
        spec:
          project: special
          source: {path: 'override/{{` + param + `}}'}
          destination: {}
`
	}
	base := `  template:
    metadata: {name: '{{name}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: 'base/{{name}}'}
      destination: {server: https://kubernetes.default.svc, namespace: x}
`
	plain := "  - list: {elements: [{name: plain}]}\n"
	for _, tc := range []struct {
		name, generator string
		want            string
	}{
		{
			name: "clusters",
			generator: `  - clusters:
      selector: {matchLabels: {env: prod}}` + override("name"),
			want: "argocd/prod special https://kubernetes.default.svc/x override/prod",
		},
		{
			name: "git",
			generator: `  - git:
      repoURL: https://git.example.com/config.git
      revision: HEAD
      directories: [{path: apps/*}]` + override("path.basename"),
			want: "argocd/web special https://kubernetes.default.svc/x override/web",
		},
		{
			name: "matrix",
			generator: `  - matrix:
      generators:
      - list: {elements: [{team: a}]}
      - list: {elements: [{env: dev}]}` + override("team"),
			want: "argocd/a special https://kubernetes.default.svc/x override/a",
		},
		{
			name: "merge",
			generator: `  - merge:
      mergeKeys: [team]
      generators:
      - list: {elements: [{team: a, ns: one}]}
      - list: {elements: [{team: a, ns: two}]}` + override("team"),
			want: "argocd/a special https://kubernetes.default.svc/x override/a",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := generateSummary(t, header+"  generators:\n"+tc.generator+plain+base, src)
			want := []string{tc.want, "argocd/plain default https://kubernetes.default.svc/x base/plain"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Applications (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGenerateNestedGenerators: a matrix or merge holds list, clusters,
// git and one more matrix or merge; the selector of a nested generator
// filters its sets whatever applyNestedSelectors says (Argo CD 3 ignores
// the field and always applies them).
func TestGenerateNestedGenerators(t *testing.T) {
	checkout := repo(t, map[string]string{"apps/web/kustomization.yaml": "resources: []\n", "apps/api/kustomization.yaml": "resources: []\n"})
	secrets := []corev1.Secret{
		clusterSecret("prod", "https://prod.example.com", map[string]string{"env": "prod"}),
		clusterSecret("dev", "https://dev.example.com", map[string]string{"env": "dev"}),
	}
	src := Sources{Git: checkout, Clusters: func(context.Context) ([]corev1.Secret, error) { return secrets, nil }}
	// A merge of a matrix (the clusters of env prod with the git
	// directories but api, by a nested selector) and a list overriding
	// the namespace of prod-web.
	matrixInMerge := `  generators:
  - merge:
      mergeKeys: [name, path]
      generators:
      - matrix:
          generators:
          - clusters:
              selector: {matchLabels: {env: prod}}
          - git:
              repoURL: https://git.example.com/config.git
              revision: HEAD
              directories: [{path: apps/*}]
            selector: {matchExpressions: [{key: path.basename, operator: NotIn, values: [api]}]}
      - list:
          elements: [{name: prod, path: apps/web, ns: web-override}]
  template:
    metadata: {name: '{{name}}-{{path.basename}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: '{{path}}'}
      destination: {server: '{{server}}', namespace: '{{ns}}'}
`
	// A matrix of a list and a merge whose second list overrides prod.
	mergeInMatrix := `  generators:
  - matrix:
      generators:
      - list: {elements: [{team: a}]}
      - merge:
          mergeKeys: [env]
          generators:
          - list: {elements: [{env: dev, ns: d}, {env: prod, ns: p}]}
          - list: {elements: [{env: prod, ns: p2}]}
  template:
    metadata: {name: '{{team}}-{{env}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: '{{team}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{ns}}'}
`
	for _, tc := range []struct {
		name, manifest string
		want           []string
	}{
		{"a matrix in a merge", header + matrixInMerge, []string{"argocd/prod-web default https://prod.example.com/web-override apps/web"}},
		{"applyNestedSelectors false", header + "  applyNestedSelectors: false\n" + matrixInMerge, []string{"argocd/prod-web default https://prod.example.com/web-override apps/web"}},
		{"applyNestedSelectors true", header + "  applyNestedSelectors: true\n" + matrixInMerge, []string{"argocd/prod-web default https://prod.example.com/web-override apps/web"}},
		{"a merge in a matrix", header + mergeInMatrix, []string{
			"argocd/a-dev default https://kubernetes.default.svc/d a",
			"argocd/a-prod default https://kubernetes.default.svc/p2 a",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := generateSummary(t, tc.manifest, src)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Applications (-want +got):\n%s", diff)
			}
		})
	}
}
