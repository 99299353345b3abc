package apply

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// fromYAML decodes a manifest the way the API client does (int64 numbers).
func fromYAML(t *testing.T, src string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(src))
	if err != nil {
		t.Fatalf("yaml: %v", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return u
}

const deploymentYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  annotations:
    example.com/note: hi
  managedFields:
  - manager: hpa-controller
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:replicas: {}
  - manager: kubectl-edit
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:template:
          f:spec:
            f:containers:
              k:{"name":"sidecar"}:
                .: {}
                f:image: {}
            f:tolerations:
              v:"x": {}
  - manager: kubelet
    operation: Update
    subresource: status
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:status:
        f:replicas: {}
spec:
  replicas: 3
  template:
    spec:
      tolerations: ["y", "x"]
      containers:
      - name: app
        image: app:1
      - name: sidecar
        image: proxy:1
      - name: sidecar-2
        image: proxy:2
status:
  replicas: 3
`

func TestIgnoredPaths(t *testing.T) {
	tests := []struct {
		name string
		rule IgnoreDifference
		want []string
	}{{
		name: "json pointer",
		rule: IgnoreDifference{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}},
		want: []string{"spec.replicas"},
	}, {
		name: "json pointer into a list and an escaped key",
		rule: IgnoreDifference{Group: "apps", Kind: "Deployment", JSONPointers: []string{
			"/spec/template/spec/containers/1/image", "/metadata/annotations/example.com~1note",
		}},
		want: []string{"metadata.annotations.example.com/note", "spec.template.spec.containers[1].image"},
	}, {
		name: "json pointer to a missing path",
		rule: IgnoreDifference{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/paused", "/spec/template/spec/containers/7"}},
	}, {
		name: "jq path expression",
		rule: IgnoreDifference{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{
			`.spec.template.spec.containers[] | select(.name | startswith("sidecar")) | .image`,
		}},
		want: []string{"spec.template.spec.containers[1].image", "spec.template.spec.containers[2].image"},
	}, {
		name: "jq expression that does not fit the object",
		rule: IgnoreDifference{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{`.spec.volumes[] | .name`}},
	}, {
		name: "managed fields managers",
		rule: IgnoreDifference{Group: "apps", Kind: "Deployment", ManagedFieldsManagers: []string{"hpa-controller", "kubectl-edit", "kubelet"}},
		want: []string{"spec.replicas", "spec.template.spec.containers[1].image", "spec.template.spec.tolerations[1]"},
	}, {
		name: "wildcard kind with name",
		rule: IgnoreDifference{Group: "*", Kind: "*", Name: "web", Namespace: "shop", JSONPointers: []string{"/spec/replicas"}},
		want: []string{"spec.replicas"},
	}, {
		// Group and kind are globs, as Argo CD matches them.
		name: "glob group and kind",
		rule: IgnoreDifference{Group: "app?", Kind: "{Deployment,StatefulSet}", JSONPointers: []string{"/spec/replicas"}},
		want: []string{"spec.replicas"},
	}, {
		name: "glob kind that does not match",
		rule: IgnoreDifference{Group: "*", Kind: "Stateful*", JSONPointers: []string{"/spec/replicas"}},
	}, {
		name: "other kind",
		rule: IgnoreDifference{Group: "apps", Kind: "StatefulSet", JSONPointers: []string{"/spec/replicas"}},
	}, {
		name: "other name",
		rule: IgnoreDifference{Group: "apps", Kind: "Deployment", Name: "api", JSONPointers: []string{"/spec/replicas"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := fromYAML(t, deploymentYAML)
			rules, err := compileIgnore([]IgnoreDifference{tt.rule})
			if err != nil {
				t.Fatalf("compileIgnore: %v", err)
			}
			var got []string
			for _, p := range ignoredPaths(t.Context(), rules, live.Object, live) {
				got = append(got, p.String())
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRemovePathsKeepsIndexesValid(t *testing.T) {
	live := fromYAML(t, deploymentYAML)
	rules, err := compileIgnore([]IgnoreDifference{{
		Group: "apps", Kind: "Deployment",
		JQPathExpressions: []string{`.spec.template.spec.containers[] | select(.name | startswith("sidecar"))`},
		JSONPointers:      []string{"/spec/template/spec/containers/1", "/status"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	obj := live.DeepCopy().Object
	removePaths(obj, ignoredPaths(t.Context(), rules, obj, live))
	got, _, _ := unstructured.NestedSlice(obj, "spec", "template", "spec", "containers")
	want := []any{map[string]any{"name": "app", "image": "app:1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("containers (-want +got):\n%s", diff)
	}
	if _, ok := obj["status"]; ok {
		t.Error("status not removed")
	}
}

func TestCompileIgnoreErrors(t *testing.T) {
	tests := []struct {
		name string
		rule IgnoreDifference
		want string
	}{
		{"pointer without slash", IgnoreDifference{Kind: "X", JSONPointers: []string{"spec/replicas"}}, `ignoreDifferences[0]: json pointer "spec/replicas": must start with /`},
		{"empty pointer", IgnoreDifference{Kind: "X", JSONPointers: []string{""}}, `ignoreDifferences[0]: json pointer "": empty pointer`},
		{"bad jq", IgnoreDifference{Kind: "X", JQPathExpressions: []string{".spec["}}, `ignoreDifferences[0]: jq path expression ".spec["`},
		{"bad kind glob", IgnoreDifference{Kind: "[X"}, `ignoreDifferences[0]: kind "[X"`},
		// What could fill the controller's memory before the time limit
		// stops it is refused, wherever it hides in the expression.
		{"string repetition", IgnoreDifference{Kind: "X", JQPathExpressions: []string{`.x | select(("a" * 2000000000) | length > 0)`}},
			`ignoreDifferences[0]: jq path expression ".x | select((\"a\" * 2000000000) | length > 0)": the * operator is not allowed in a path expression`},
		{"reduce", IgnoreDifference{Kind: "X", JQPathExpressions: []string{`.spec | select((reduce .[] as $x ("a"; . + .)) != "")`}}, `ignoreDifferences[0]: jq path expression ".spec | select((reduce .[] as $x (\"a\"; . + .)) != \"\")": reduce is not allowed`},
		{"foreach", IgnoreDifference{Kind: "X", JQPathExpressions: []string{`.a | select([foreach .[] as $x (0; .+1)] | length > 1)`}}, `ignoreDifferences[0]: jq path expression ".a | select([foreach .[] as $x (0; .+1)] | length > 1)": foreach is not allowed`},
		{"range in an array", IgnoreDifference{Kind: "X", JQPathExpressions: []string{`.a[[range(100000000)] | length]`}}, `ignoreDifferences[0]: jq path expression ".a[[range(100000000)] | length]": range is not allowed`},
		{"repeat in a function argument", IgnoreDifference{Kind: "X", JQPathExpressions: []string{`.a[first(limit(1; repeat(1)))]`}}, `ignoreDifferences[0]: jq path expression ".a[first(limit(1; repeat(1)))]": repeat is not allowed`},
		{"recurse with a function", IgnoreDifference{Kind: "X", JQPathExpressions: []string{`.a | select([recurse(. + .)] | length > 0)`}}, `ignoreDifferences[0]: jq path expression ".a | select([recurse(. + .)] | length > 0)": recurse is not allowed`},
		{"definition", IgnoreDifference{Kind: "X", JQPathExpressions: []string{`def f: f; .a | select(f)`}}, `ignoreDifferences[0]: jq path expression "def f: f; .a | select(f)"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compileIgnore([]IgnoreDifference{tt.rule})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("compileIgnore error = %v, want prefix %q", err, tt.want)
			}
		})
	}
}

func TestKeepIgnored(t *testing.T) {
	live := fromYAML(t, deploymentYAML)
	desired := fromYAML(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 5
  paused: true
  template:
    spec:
      containers:
      - {name: app, image: app:2}
`)
	rules, err := compileIgnore([]IgnoreDifference{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas", "/spec/paused"}}})
	if err != nil {
		t.Fatal(err)
	}
	keepIgnored(t.Context(), desired, live, rules)
	want := fromYAML(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  template:
    spec:
      containers:
      - {name: app, image: app:2}
`)
	if diff := cmp.Diff(want.Object, desired.Object); diff != "" {
		t.Errorf("desired (-want +got):\n%s", diff)
	}
}

// TestJQPathsBounded: an expression that enumerates more paths than
// maxJQPaths keeps the first maxJQPaths.
func TestJQPathsBounded(t *testing.T) {
	rules, err := compileIgnore([]IgnoreDifference{{Kind: "X", JQPathExpressions: []string{`.items | .. | ..`}}})
	if err != nil {
		t.Fatal(err)
	}
	items := make([]any, 2000)
	for i := range items {
		items[i] = map[string]any{"a": "x", "b": []any{1, 2}}
	}
	got := jqPaths(t.Context(), rules[0].jq[0], map[string]any{"items": items})
	if len(got) != maxJQPaths {
		t.Errorf("%d paths, want the first %d", len(got), maxJQPaths)
	}
}
