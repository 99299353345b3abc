package cmp

import (
	"path/filepath"
	"testing"
)

func TestGlobAny(t *testing.T) {
	root := makeRepo(t, map[string]string{
		"app/top.yaml":          "",
		"app/x/y/deep.json":     "",
		"app/x/Chart.yaml":      "",
		"app/link.txt":          "->top.yaml",
		"app/linkdir":           "->x",
		"app/q?.md":             "",
		"app/a[1].cfg":          "",
		"other/outside.jsonnet": "",
	})
	app := filepath.Join(root, "app")
	tests := []struct {
		glob string
		want bool
	}{
		{"*.yaml", true},
		{"**/*.yaml", true},    // ** spans no directory too
		{"**/deep.json", true}, // and several
		{"*/deep.json", false}, // * stays in its component
		{"x/*/deep.json", true},
		{"**/Chart.yaml", true},
		{"*.txt", false},             // symlinks do not match
		{"linkdir/Chart.yaml", true}, // a pattern without * only has to exist
		{"linkdir/*.yaml", false},    // the walk does not follow symlinks
		{"**/*.jsonnet", false},      // only under the source's directory
		{"../other/*.jsonnet", true}, // unless the pattern says otherwise
		{"q?.md", true},              // ? and [ are plain characters
		{"*?.md", true},
		{"qx.md", false},
		{"a[1].cfg", true},
		{"*1].cfg", true},
		{"missing/*", false},
		{"x", true},
		{"x/*", true}, // directories match
	}
	for _, tc := range tests {
		t.Run(tc.glob, func(t *testing.T) {
			got, err := globAny(filepath.Join(app, tc.glob))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("globAny(%s) = %v, want %v", tc.glob, got, tc.want)
			}
		})
	}
}
