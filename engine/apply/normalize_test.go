package apply

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalizedChanges(t *testing.T) {
	tests := []struct {
		name   string
		live   string
		want   string
		ignore []IgnoreDifference
		// summary is the expected summarize output; "" means no change.
		summary string
	}{{
		name: "server noise is not drift",
		live: `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: n, resourceVersion: "5", uid: a, generation: 1, creationTimestamp: "2024-01-01T00:00:00Z",
  managedFields: [{manager: tollgate, operation: Apply}]}
data: {k: v}
status: {phase: old}
`,
		want: `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: n, resourceVersion: "6", uid: a, generation: 2, creationTimestamp: "2024-01-01T00:00:00Z",
  managedFields: [{manager: tollgate, operation: Apply, time: "2024-02-01T00:00:00Z"}]}
data: {k: v}
`,
	}, {
		name: "changed, added and removed",
		live: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, labels: {old: x}}
spec: {replicas: 3, template: {spec: {containers: [{name: a, image: "a:1"}]}}}
`,
		want: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, labels: {new: y}}
spec: {replicas: 5, template: {spec: {containers: [{name: a, image: "a:2"}, {name: b, image: "b:1"}]}}}
`,
		summary: `metadata.labels.new: added; metadata.labels.old: removed; spec.replicas: 3 → 5; spec.template.spec.containers[0].image: "a:1" → "a:2"; spec.template.spec.containers[1]: added`,
	}, {
		name: "ignored path",
		live: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {replicas: 3}
`,
		want: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {replicas: 5}
`,
		ignore: []IgnoreDifference{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}},
	}, {
		name: "secret values are never shown",
		live: `
apiVersion: v1
kind: Secret
metadata: {name: s}
data: {password: c2VjcmV0, token: YQ==}
`,
		want: `
apiVersion: v1
kind: Secret
metadata: {name: s}
data: {password: bmV3c2VjcmV0, user: YWRtaW4=}
`,
		summary: `data.password: changed; data.token: removed; data.user: added`,
	}, {
		name: "long summaries are cut",
		live: `
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {a: "1", b: "1", c: "1", d: "1", e: "1", f: "1", g: "1", h: "1", i: "1", j: "1"}
`,
		want: `
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {a: "2", b: "2", c: "2", d: "2", e: "2", f: "2", g: "2", h: "2", i: "2", j: "0123456789012345678901234567890123456789-long"}
`,
		summary: `data.a: "1" → "2"; data.b: "1" → "2"; data.c: "1" → "2"; data.d: "1" → "2"; data.e: "1" → "2"; data.f: "1" → "2"; data.g: "1" → "2"; data.h: "1" → "2"; and 2 more`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live, want := fromYAML(t, tt.live), fromYAML(t, tt.want)
			rules, err := compileIgnore(tt.ignore)
			if err != nil {
				t.Fatal(err)
			}
			changes, err := normalizedChanges(t.Context(), live, want, rules)
			if err != nil {
				t.Fatalf("normalizedChanges: %v", err)
			}
			got := summarize(changes, isSecret(live))
			if diff := cmp.Diff(tt.summary, got); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if strings.Contains(got, "c2VjcmV0") || strings.Contains(got, "bmV3c2VjcmV0") {
				t.Errorf("summary shows a secret value: %s", got)
			}
		})
	}
}

func TestShortTruncates(t *testing.T) {
	got := short(strings.Repeat("é", 60))
	if n := len([]rune(got)); n != maxSummaryValue {
		t.Errorf("short() has %d runes, want %d: %s", n, maxSummaryValue, got)
	}
}

func TestSetPath(t *testing.T) {
	tests := []struct {
		name string
		path fieldPath
		ok   bool
		want map[string]any
	}{
		{"creates maps", fieldPath{"spec", "x", "y"}, true, map[string]any{"spec": map[string]any{"l": []any{"a"}, "x": map[string]any{"y": int64(1)}}}},
		{"sets list item", fieldPath{"spec", "l", 0}, true, map[string]any{"spec": map[string]any{"l": []any{int64(1)}}}},
		{"no list item", fieldPath{"spec", "l", 3}, false, map[string]any{"spec": map[string]any{"l": []any{"a"}}}},
		{"no new list", fieldPath{"spec", "m", 0}, false, map[string]any{"spec": map[string]any{"l": []any{"a"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := map[string]any{"spec": map[string]any{"l": []any{"a"}}}
			if ok := setPath(obj, tt.path, int64(1)); ok != tt.ok {
				t.Errorf("setPath = %v, want %v", ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, obj); diff != "" {
				t.Errorf("object (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMissingPaths(t *testing.T) {
	want := fromYAML(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, colour: red}
spec:
  foo: 1
  replicas: 2
  template:
    spec:
      containers: [{name: a, image: x, bar: 2}]
`)
	got := fromYAML(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, uid: u}
spec:
  replicas: 2
  strategy: {type: RollingUpdate}
  template:
    spec:
      containers: [{name: a, image: x, imagePullPolicy: Always}]
`)
	var paths []fieldPath
	missingPaths(want.Object, got.Object, nil, &paths)
	var s []string
	for _, p := range paths {
		s = append(s, p.String())
	}
	slices.Sort(s)
	if diff := cmp.Diff([]string{"metadata.colour", "spec.foo", "spec.template.spec.containers[0].bar"}, s); diff != "" {
		t.Errorf("missing paths (-want +got):\n%s", diff)
	}
}
