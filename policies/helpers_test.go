package policies

import (
	"os"
	"path/filepath"
	"testing"
)

// writePolicies writes files (relative path -> content) into a fresh
// directory and returns it.
func writePolicies(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// deployment returns a Deployment with one container running image.
func deployment(name, image string, annotations map[string]any) map[string]any {
	meta := map[string]any{"name": name, "namespace": "shop"}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   meta,
		"spec": map[string]any{
			"replicas": int64(1),
			"template": map[string]any{
				"spec": map[string]any{
					"containers": []any{
						map[string]any{"name": "app", "image": image},
					},
				},
			},
		},
	}
}

// deploymentRef is the ObjectRef of deployment(name, ...).
func deploymentRef(name string) ObjectRef {
	return ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: name}
}

// builtinInputJSON is the JSON form of the built-in rules' input for in, as
// a stock evaluator builds it: Input's JSON with the default protected
// namespaces in its context.
func builtinInputJSON(t *testing.T, in Input) any {
	t.Helper()
	want := jsonRoundTrip(t, in).(map[string]any)
	var protected []any
	for _, ns := range (Config{}).Protected() {
		protected = append(protected, ns)
	}
	want["context"].(map[string]any)["protectedNamespaces"] = protected
	return want
}
