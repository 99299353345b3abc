package appset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// dirRepo serves one directory as every repository.
type dirRepo string

func (d dirRepo) Checkout(_ context.Context, repoURL, revision string) (string, error) {
	if repoURL != "https://git.example.com/config.git" {
		return "", fmt.Errorf("unknown repository %s", repoURL)
	}
	return string(d), nil
}

// repo writes files into a temporary checkout.
func repo(t *testing.T, files map[string]string) dirRepo {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dirRepo(dir)
}

func clusterSecret(name, server string, labels map[string]string) corev1.Secret {
	l := map[string]string{reposerver.SecretTypeLabel: reposerver.SecretTypeCluster}
	for k, v := range labels {
		l[k] = v
	}
	return corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-" + name, Namespace: "argocd", Labels: l},
		Data:       map[string][]byte{"name": []byte(name), "server": []byte(server)},
	}
}

// decodeSet decodes an ApplicationSet manifest.
func decodeSet(t *testing.T, manifest string) *v1alpha1.ApplicationSet {
	t.Helper()
	var set v1alpha1.ApplicationSet
	if err := yaml.UnmarshalStrict([]byte(manifest), &set); err != nil {
		t.Fatalf("decode ApplicationSet: %v", err)
	}
	return &set
}

// summary is "name project server/namespace source-path" per Application,
// with its finalizers when they are not the default.
func summary(gen []reposerver.Generated) []string {
	var out []string
	for _, g := range gen {
		a := g.Application
		md := a["metadata"].(map[string]any)
		spec := a["spec"].(map[string]any)
		dest, _ := spec["destination"].(map[string]any)
		src, _ := spec["source"].(map[string]any)
		line := fmt.Sprintf("%v/%v %v %v/%v %v", md["namespace"], md["name"], spec["project"], dest["server"], dest["namespace"], src["path"])
		if f := fmt.Sprint(md["finalizers"]); f != "[resources-finalizer.argocd.argoproj.io]" {
			line += " finalizers=" + f
		}
		out = append(out, line)
	}
	return out
}

const header = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: guestbook
  namespace: argocd
spec:
`

// flatTemplate is the template of Argo CD's list generator example.
const flatTemplate = `  template:
    metadata:
      name: '{{cluster}}-guestbook'
      namespace: elsewhere
    spec:
      project: "{{project}}"
      source:
        repoURL: https://git.example.com/config.git
        targetRevision: HEAD
        path: guestbook/{{cluster}}
      destination:
        server: '{{url}}'
        namespace: guestbook
`

func TestGenerate(t *testing.T) {
	checkout := repo(t, map[string]string{
		"apps/web/kustomization.yaml":  "resources: []\n",
		"apps/api/kustomization.yaml":  "resources: []\n",
		"apps/.hidden/x.yaml":          "a: b\n",
		"apps/api/nested/README":       "",
		"clusters/dev/config.json":     `{"cluster": {"name": "dev", "address": "https://1.2.3.4"}, "replicas": 2}`,
		"clusters/prod/config.yaml":    "- cluster: {name: prod-a, address: https://5.6.7.8}\n- cluster: {name: prod-b, address: https://9.9.9.9}\n",
		"clusters/staging/config.json": `{"cluster": {"name": "staging", "address": "https://2.2.2.2"}}`,
	})
	secrets := []corev1.Secret{
		clusterSecret("prod", "https://prod.example.com", map[string]string{"env": "prod"}),
		clusterSecret("dev", "https://dev.example.com", map[string]string{"env": "dev"}),
		{ObjectMeta: metav1.ObjectMeta{Name: "repo", Labels: map[string]string{reposerver.SecretTypeLabel: "repository"}}},
	}
	src := Sources{Git: checkout, Clusters: func(context.Context) ([]corev1.Secret, error) { return secrets, nil }}
	tests := []struct {
		name     string
		manifest string
		want     []string
	}{
		{
			name: "list, {{param}} substitution; the namespace is the ApplicationSet's",
			manifest: header + `  generators:
  - list:
      elements:
      - {cluster: engineering-dev, url: https://1.2.3.4, project: team}
      - {cluster: engineering-prod, url: https://2.4.6.8, project: team}
` + flatTemplate,
			want: []string{
				"argocd/engineering-dev-guestbook team https://1.2.3.4/guestbook guestbook/engineering-dev",
				"argocd/engineering-prod-guestbook team https://2.4.6.8/guestbook guestbook/engineering-prod",
			},
		},
		{
			name: "a missing parameter is left as written",
			manifest: header + `  generators:
  - list:
      elements:
      - {cluster: dev, url: https://1.2.3.4}
` + flatTemplate,
			want: []string{"argocd/dev-guestbook {{project}} https://1.2.3.4/guestbook guestbook/dev"},
		},
		{
			name: "list with goTemplate, nested values and Sprig",
			manifest: header + `  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - list:
      elements:
      - {cluster: Dev_One, url: https://1.2.3.4, meta: {team: web}}
  template:
    metadata:
      name: '{{ .cluster | normalize }}-{{ .meta.team | upper }}'
    spec:
      project: '{{ .meta.team }}'
      source: {repoURL: https://git.example.com/config.git, path: 'apps/{{ .meta.team }}'}
      destination: {server: '{{ .url }}', namespace: '{{ printf "%s-%s" .meta.team "ns" }}'}
`,
			want: []string{"argocd/dev-one-WEB web https://1.2.3.4/web-ns apps/web"},
		},
		{
			name: "git directories: hidden directories skipped, exclusions applied",
			manifest: header + `  generators:
  - git:
      repoURL: https://git.example.com/config.git
      revision: HEAD
      directories:
      - path: apps/*
      - path: apps/api
        exclude: true
  template:
    metadata: {name: '{{path.basename}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: '{{path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{path[1]}}'}
`,
			want: []string{"argocd/web default https://kubernetes.default.svc/web apps/web"},
		},
		{
			name: "git files: nested keys flattened, a file of a list gives several",
			manifest: header + `  generators:
  - git:
      repoURL: https://git.example.com/config.git
      revision: HEAD
      files:
      - path: clusters/**/config.*
      - path: clusters/staging/*
        exclude: true
  template:
    metadata: {name: '{{cluster.name}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: '{{path}}'}
      destination: {server: '{{cluster.address}}', namespace: '{{path.basename}}'}
`,
			want: []string{
				"argocd/dev default https://1.2.3.4/dev clusters/dev",
				"argocd/prod-a default https://5.6.7.8/prod clusters/prod",
				"argocd/prod-b default https://9.9.9.9/prod clusters/prod",
			},
		},
		{
			name: "clusters: in-cluster first, then the Secrets; values rendered per cluster",
			manifest: header + `  generators:
  - clusters:
      values: {ns: '{{name}}-apps'}
  template:
    metadata: {name: 'guestbook-{{nameNormalized}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: guestbook}
      destination: {server: '{{server}}', namespace: '{{values.ns}}'}
`,
			want: []string{
				"argocd/guestbook-in-cluster default https://kubernetes.default.svc/in-cluster-apps guestbook",
				"argocd/guestbook-dev default https://dev.example.com/dev-apps guestbook",
				"argocd/guestbook-prod default https://prod.example.com/prod-apps guestbook",
			},
		},
		{
			name: "clusters with a selector: no in-cluster",
			manifest: header + `  generators:
  - clusters:
      selector: {matchLabels: {env: prod}}
  template:
    metadata: {name: 'guestbook-{{name}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: guestbook}
      destination: {server: '{{server}}', namespace: '{{metadata.labels.env}}'}
`,
			want: []string{"argocd/guestbook-prod default https://prod.example.com/prod guestbook"},
		},
		{
			name: "matrix of git directories and a list, the list using the directory",
			manifest: header + `  generators:
  - matrix:
      generators:
      - git:
          repoURL: https://git.example.com/config.git
          revision: HEAD
          directories: [{path: apps/*}]
      - list:
          elements:
          - {env: dev, dir: '{{path.basename}}'}
          - {env: prod, dir: '{{path.basename}}'}
  template:
    metadata: {name: '{{dir}}-{{env}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: '{{path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{env}}'}
`,
			want: []string{
				"argocd/api-dev default https://kubernetes.default.svc/dev apps/api",
				"argocd/api-prod default https://kubernetes.default.svc/prod apps/api",
				"argocd/web-dev default https://kubernetes.default.svc/dev apps/web",
				"argocd/web-prod default https://kubernetes.default.svc/prod apps/web",
			},
		},
		{
			name: "merge by key: later generators override, unmatched sets dropped",
			manifest: header + `  generators:
  - merge:
      mergeKeys: [cluster]
      generators:
      - list:
          elements:
          - {cluster: a, url: https://a, ns: default}
          - {cluster: b, url: https://b, ns: default}
      - list:
          elements:
          - {cluster: b, ns: special}
          - {cluster: c, ns: ignored}
  template:
    metadata: {name: '{{cluster}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: x}
      destination: {server: '{{url}}', namespace: '{{ns}}'}
`,
			want: []string{
				"argocd/a default https://a/default x",
				"argocd/b default https://b/special x",
			},
		},
		{
			name: "a selector filters a generator's parameter sets",
			manifest: header + `  generators:
  - list:
      elements:
      - {cluster: a, url: https://a, tier: gold}
      - {cluster: b, url: https://b, tier: bronze}
    selector:
      matchExpressions: [{key: tier, operator: In, values: [gold]}]
  template:
    metadata: {name: '{{cluster}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/config.git, path: x}
      destination: {server: '{{url}}', namespace: x}
`,
			want: []string{"argocd/a default https://a/x x"},
		},
		{
			name: "a generator's template overrides what it sets",
			manifest: header + `  generators:
  - list:
      elements: [{cluster: a, url: https://a}]
      template:
        metadata: {}
        spec:
          project: special
          source: {path: 'override/{{cluster}}'}
          destination: {}
` + flatTemplate,
			want: []string{"argocd/a-guestbook special https://a/guestbook override/a"},
		},
		{
			name: "preserveResourcesOnDeletion leaves the finalizer off; a template's finalizers are kept",
			manifest: header + `  syncPolicy: {preserveResourcesOnDeletion: true}
  generators:
  - list:
      elements: [{cluster: a, url: https://a, project: p}]
` + flatTemplate + `  templatePatch: |
    metadata:
      finalizers: [example.com/keep]
    spec:
      project: hijacked
      syncPolicy: {automated: {prune: true}}
`,
			want: []string{"argocd/a-guestbook p https://a/guestbook guestbook/a finalizers=[example.com/keep]"},
		},
		{
			// As Argo CD: the finalizer default comes before the patch,
			// which drops it with the rest of the metadata.
			name: "a templatePatch that drops the metadata keeps the namespace, not the finalizer default",
			manifest: header + `  generators:
  - list:
      elements: [{cluster: a, url: https://a, project: p}]
` + flatTemplate + `  templatePatch: |
    metadata: null
`,
			want: []string{"argocd/<nil> p https://a/guestbook guestbook/a finalizers=<nil>"},
		},
		{
			name: "a templatePatch's finalizers merge with the default",
			manifest: header + `  generators:
  - list:
      elements: [{cluster: a, url: https://a, project: p}]
` + flatTemplate + `  templatePatch: |
    metadata: {finalizers: [example.com/patched]}
`,
			want: []string{"argocd/a-guestbook p https://a/guestbook guestbook/a finalizers=[example.com/patched resources-finalizer.argocd.argoproj.io]"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gen, err := Generate(t.Context(), decodeSet(t, tt.manifest), src)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, summary(gen)); diff != "" {
				t.Errorf("Applications (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGenerateErrors(t *testing.T) {
	list := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "          - {i%d: '%d'}\n", i%2, i)
		}
		return b.String()
	}
	tests := []struct {
		name        string
		manifest    string
		want        string
		unsupported bool
		reason      string
	}{
		{
			name: "missingkey=error",
			manifest: header + `  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - list: {elements: [{cluster: a}]}
  template:
    metadata: {name: '{{ .nope }}'}
    spec: {project: default, destination: {}}
`,
			want:   `map has no entry for key "nope"`,
			reason: v1alpha1.ApplicationSetReasonRenderTemplateParamsError,
		},
		{
			name: "a template that repeats a string past an Application's size",
			manifest: header + `  goTemplate: true
  generators:
  - list: {elements: [{cluster: a}]}
  template:
    metadata: {name: '{{ .cluster }}', annotations: {x: '{{ repeat 2000000 "a" }}'}}
    spec: {project: default, destination: {}}
`,
			want:   `spec.generators[0]: the generated Application "a" is 2000`,
			reason: v1alpha1.ApplicationSetReasonRenderTemplateParamsError,
		},
		{
			name: "an unknown Go template option",
			manifest: header + `  goTemplate: true
  goTemplateOptions: ["missingkey=explode"]
  generators:
  - list: {elements: [{cluster: a}]}
  template: {metadata: {name: x}, spec: {project: default, destination: {}}}
`,
			want: `spec.goTemplateOptions[0]: unknown option "missingkey=explode"`,
		},
		{
			name: "an SCM provider tollgate does not serve is refused by name",
			manifest: header + `  generators:
  - scmProvider: {bitbucket: {owner: o, user: u}}
  template: {metadata: {name: x}, spec: {project: default, destination: {}}}
`,
			want:        "spec.generators[0].scmProvider.bitbucket is not supported",
			unsupported: true,
		},
		{
			name: "a pull request provider inside a matrix is refused by name",
			manifest: header + `  generators:
  - matrix:
      generators:
      - list: {elements: [{a: b}]}
      - pullRequest: {azuredevops: {organization: o, project: p, repo: r}}
  template: {metadata: {name: x}, spec: {project: default, destination: {}}}
`,
			want:        "spec.generators[0].matrix.generators[1].pullRequest.azuredevops is not supported",
			unsupported: true,
		},
		{
			name: "a matrix of three generators",
			manifest: header + `  generators:
  - matrix:
      generators:
      - list: {elements: [{a: b}]}
      - list: {elements: [{c: d}]}
      - list: {elements: [{e: f}]}
  template: {metadata: {name: x}, spec: {project: default, destination: {}}}
`,
			want: "spec.generators[0].matrix.generators: a matrix combines exactly two generators, got 3",
		},
		{
			name: "matrix nested too deep",
			manifest: header + `  generators:
  - matrix:
      generators:
      - list: {elements: [{a: b}]}
      - matrix:
          generators:
          - list: {elements: [{c: d}]}
          - matrix:
              generators:
              - list: {elements: [{e: f}]}
              - list: {elements: [{g: h}]}
  template: {metadata: {name: x}, spec: {project: default, destination: {}}}
`,
			want: "may not be nested this deep",
		},
		{
			name: "conflicting parameters in a matrix",
			manifest: header + `  generators:
  - matrix:
      generators:
      - list: {elements: [{env: a}]}
      - list: {elements: [{env: b}]}
  template: {metadata: {name: x}, spec: {project: default, destination: {}}}
`,
			want: "found duplicate key env with different value",
		},
		{
			name: "a matrix producing too many parameter sets",
			manifest: header + `  generators:
  - matrix:
      generators:
      - list:
          elements:
` + list(150) + `      - list:
          elements:
` + strings.ReplaceAll(list(150), "{i", "{j") + `  template: {metadata: {name: x}, spec: {project: default, destination: {}}}
`,
			want: "produces more than 10000 parameter sets",
		},
		{
			name: "an object in a list element without goTemplate",
			manifest: header + `  generators:
  - list: {elements: [{cluster: {name: a}}]}
  template: {metadata: {name: x}, spec: {project: default, destination: {}}}
`,
			want: "spec.generators[0].list.elements[0]: cluster: nested objects and arrays are not supported without goTemplate",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(t.Context(), decodeSet(t, tt.manifest), Sources{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
			var ue *UnsupportedError
			if errors.As(err, &ue) != tt.unsupported {
				t.Errorf("UnsupportedError: %v, want %v", !tt.unsupported, tt.unsupported)
			}
			var ge *Error
			if tt.reason != "" && (!errors.As(err, &ge) || ge.Reason != tt.reason) {
				t.Errorf("error %v: want reason %s", err, tt.reason)
			}
		})
	}
}

func TestWithoutDuplicates(t *testing.T) {
	set := decodeSet(t, header+`  generators:
  - list:
      elements: [{cluster: a, url: https://a}, {cluster: a, url: https://b}, {cluster: c, url: https://c}]
`+flatTemplate)
	gen, err := Generate(t.Context(), set, Sources{})
	if err != nil {
		t.Fatal(err)
	}
	valid, errs := reposerver.WithoutDuplicates(set.Name, gen)
	if diff := cmp.Diff([]string{
		"argocd/a-guestbook {{project}} https://a/guestbook guestbook/a",
		"argocd/c-guestbook {{project}} https://c/guestbook guestbook/c",
	}, summary(valid)); diff != "" {
		t.Errorf("valid Applications (-want +got):\n%s", diff)
	}
	if len(errs) != 1 || errs[0].Error() != "ApplicationSet guestbook contains applications with duplicate name: a-guestbook" {
		t.Errorf("errors = %v", errs)
	}
}

// TestSlugify: Argo CD's slugify, with its defaults (50 characters, smart
// truncation at a word) and its arguments.
func TestSlugify(t *testing.T) {
	long := "Hello World From The ApplicationSet Controller Of Tollgate Which Is Long"
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"Hello, World!"}, "hello-world"},
		{[]any{"Team_A/Payments.Service"}, "team-a-payments-service"},
		{[]any{long}, "hello-world-from-the-applicationset-controller-of"},
		{[]any{20, long}, "hello-world-from-the"},
		{[]any{20, false, long}, "hello-world-from-the"},
		{[]any{12, false, long}, "hello-world"},
		{[]any{12, true, long}, "hello-world"},
	} {
		got, err := slugify(tc.args...)
		if err != nil || got != tc.want {
			t.Errorf("slugify(%v) = %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
	for _, bad := range [][]any{nil, {1}, {"20", "x"}, {20, "yes", "x"}} {
		if _, err := slugify(bad...); err == nil {
			t.Errorf("slugify(%v): no error", bad)
		}
	}
}
