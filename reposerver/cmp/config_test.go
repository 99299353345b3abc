package cmp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plugin.yaml")
	// Argo CD's documented example, with a field it dropped (lockRepo).
	writeTestFile(t, path, `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: my-plugin
spec:
  version: v1.0
  init:
    command: [sh]
    args: [-c, 'echo "Initializing..."']
  generate:
    command: [sh, -c]
    args:
      - |
        echo "{\"kind\": \"ConfigMap\", \"apiVersion\": \"v1\", \"metadata\": { \"name\": \"$ARGOCD_APP_NAME\"}}"
  discover:
    fileName: "./subdir/s*.yaml"
    find:
      glob: "**/Chart.yaml"
      command: [sh, -c, find . -name env.yaml]
  parameters:
    static:
      - name: string-param
        title: Description of the string param
        tooltip: Tooltip shown when the user hovers the
        required: false
        itemType: ""
        collectionType: ""
        string: default-string-value
      - name: array-param
        array: [default, items]
        collectionType: array
      - name: map-param
        map:
          some: value
        collectionType: map
    dynamic:
      command: [echo, '[{"name": "example-param", "string": "default-string-value"}]']
  preserveFileMode: false
  provideGitCreds: true
  lockRepo: false
`)
	got, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		APIVersion: "argoproj.io/v1alpha1", Kind: "ConfigManagementPlugin", Metadata: ConfigMetadata{Name: "my-plugin"},
		Spec: ConfigSpec{
			Version:  "v1.0",
			Init:     Command{Command: []string{"sh"}, Args: []string{"-c", `echo "Initializing..."`}},
			Generate: Command{Command: []string{"sh", "-c"}, Args: []string{`echo "{\"kind\": \"ConfigMap\", \"apiVersion\": \"v1\", \"metadata\": { \"name\": \"$ARGOCD_APP_NAME\"}}"` + "\n"}},
			Discover: Discover{FileName: "./subdir/s*.yaml", Find: Find{Glob: "**/Chart.yaml", Command: Command{Command: []string{"sh", "-c", "find . -name env.yaml"}}}},
			Parameters: Parameters{
				Static: []ParameterAnnouncement{
					{Name: "string-param", Title: "Description of the string param", Tooltip: "Tooltip shown when the user hovers the", String: "default-string-value"},
					{Name: "array-param", Array: []string{"default", "items"}, CollectionType: "array"},
					{Name: "map-param", Map: map[string]string{"some": "value"}, CollectionType: "map"},
				},
				Dynamic: Command{Command: []string{"echo", `[{"name": "example-param", "string": "default-string-value"}]`}},
			},
			ProvideGitCreds: true,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadConfig (-want +got):\n%s", diff)
	}
	if got, want := got.SocketName(), "my-plugin-v1.0.sock"; got != want {
		t.Errorf("SocketName = %q, want %q", got, want)
	}
	if !got.Spec.Discover.IsDefined() {
		t.Error("Discover.IsDefined = false, want true")
	}
}

func TestLoadConfigErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, yaml, want string
	}{
		{"no name", "kind: ConfigManagementPlugin\nspec: {generate: {command: [x]}}\n",
			"invalid plugin configuration file. metadata.name should be non-empty"},
		{"wrong kind", "kind: ConfigMap\nmetadata: {name: p}\nspec: {generate: {command: [x]}}\n",
			"invalid plugin configuration file. kind should be ConfigManagementPlugin, found ConfigMap"},
		{"no generate", "kind: ConfigManagementPlugin\nmetadata: {name: p}\nspec: {init: {command: [x]}}\n",
			"invalid plugin configuration file. spec.generate command should be non-empty"},
		{"name with slash", "kind: ConfigManagementPlugin\nmetadata: {name: a/b}\nspec: {generate: {command: [x]}}\n",
			`invalid plugin configuration file. metadata.name "a/b" cannot be part of a socket file name`},
		{"version dots", "kind: ConfigManagementPlugin\nmetadata: {name: a}\nspec: {version: '..', generate: {command: [x]}}\n",
			`invalid plugin configuration file. spec.version ".." cannot be part of a socket file name`},
		{"bad type", "kind: ConfigManagementPlugin\nmetadata: {name: p}\nspec: {generate: {command: x}}\n",
			"spec.generate.command of type []string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			writeTestFile(t, path, tc.yaml)
			_, err := LoadConfig(path)
			if err == nil || !strings.HasPrefix(err.Error(), "load plugin config "+path+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadConfig error = %v, want one naming %s and saying %q", err, path, tc.want)
			}
		})
	}
	if _, err := LoadConfig(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("LoadConfig(missing) error = %v, want one naming the file", err)
	}
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
