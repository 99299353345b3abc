package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const jsonnetRoot = "testdata/jsonnet"

func TestBuildJsonnet(t *testing.T) {
	opts := Options{Directory: &DirectoryOptions{Jsonnet: JsonnetOptions{
		TLAs:    []JsonnetVar{{Name: "name", Value: "settings"}, {Name: "replicas", Value: "2 + 1", Code: true}},
		ExtVars: []JsonnetVar{{Name: "env", Value: "prod"}},
		Libs:    []string{"/vendor"},
	}}}
	res, err := Build(t.Context(), jsonnetRoot, "app", opts, Limits{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	type doc struct {
		File, Origin string
		Index        int
		Object       map[string]any
	}
	var got []doc
	for _, d := range res.Documents {
		got = append(got, doc{File: d.File, Origin: d.Origin, Index: d.Index, Object: d.Object})
	}
	sa := func(name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": name}}
	}
	want := []doc{
		{File: "app/list.jsonnet", Origin: KindJsonnet, Index: 0, Object: sa("a")},
		{File: "app/list.jsonnet", Origin: KindJsonnet, Index: 2, Object: sa("b")},
		{File: "app/main.jsonnet", Origin: KindJsonnet, Index: 0, Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "settings", "labels": map[string]any{"team": "payments"}},
			"data":     map[string]any{"env": "prod", "replicas": "3"},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
	if res.Kind != KindDirectory || len(res.Notes) != 0 {
		t.Errorf("Kind = %q, notes %v; want %q and no notes", res.Kind, res.Notes, KindDirectory)
	}
}

// TestBuildJsonnetErrors holds what a tenant's Jsonnet cannot do: read
// files outside the repository (Argo CD's importer can), loop for ever, or
// yield something that is not objects.
func TestBuildJsonnetErrors(t *testing.T) {
	tests := []struct {
		name, dir, include string
		jsonnet            JsonnetOptions
		wantErr            string
	}{
		{name: "missing top-level argument", dir: "app", include: "main.jsonnet",
			wantErr: "evaluate jsonnet app/main.jsonnet: RUNTIME ERROR: Missing argument: name"},
		{name: "import outside the library paths", dir: "app", include: "main.jsonnet",
			jsonnet: JsonnetOptions{TLAs: []JsonnetVar{{Name: "name", Value: "x"}}, ExtVars: []JsonnetVar{{Name: "env", Value: "e"}}},
			wantErr: "evaluate jsonnet app/main.jsonnet: RUNTIME ERROR: couldn't open import \"k.libsonnet\": no match locally or in the Jsonnet library paths"},
		{name: "import climbing out of the repository", dir: "hostile", include: "escape.jsonnet",
			wantErr: "import \"../../../../../../../../etc/hostname\": outside the repository root"},
		{name: "absolute import", dir: "hostile", include: "absolute.jsonnet",
			wantErr: "import \"/etc/hostname\": outside the repository root"},
		{name: "endless recursion", dir: "hostile", include: "loop.jsonnet",
			wantErr: "max stack frames exceeded"},
		{name: "scalar output", dir: "hostile", include: "scalar.jsonnet",
			wantErr: `jsonnet hostile/scalar.jsonnet: output is "just a string", want an object, an array of objects or null`},
		{name: "library outside the repository", dir: "app", include: "main.jsonnet", jsonnet: JsonnetOptions{Libs: []string{"../../.."}},
			wantErr: `jsonnet lib "../../..": outside the repository root`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Directory: &DirectoryOptions{Include: tt.include, Jsonnet: tt.jsonnet}}
			_, err := Build(t.Context(), jsonnetRoot, tt.dir, opts, Limits{})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
