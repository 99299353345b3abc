package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuildDirectory(t *testing.T) {
	a := docRef{File: "app/a-deployment.yaml", Line: 1, Kind: "Deployment", Name: "a"}
	b := docRef{File: "app/b-service.json", Line: 1, Kind: "Service", Name: "b"}
	c := docRef{File: "app/sub/c-configmap.yaml", Line: 1, Kind: "ConfigMap", Name: "c"}
	d := docRef{File: "app/sub/deep/d-secret.yml", Line: 1, Kind: "Secret", Name: "d"}
	e := docRef{File: "app/excluded/e.yaml", Line: 1, Kind: "ConfigMap", Name: "e"}
	l := docRef{File: "app/legacy.jsonnet", Kind: "ConfigMap", Name: "legacy"}
	sealed := docRef{File: "app/sub/s.yaml.sealed", Line: 1, Kind: "SealedSecret", Name: "s"}
	values := Note{File: "app/values.yaml", Line: 1, Message: "skipped: not a Kubernetes object (no apiVersion or kind)"}
	tests := []struct {
		name      string
		opts      *DirectoryOptions
		want      []docRef
		wantNotes []Note
	}{
		{name: "top level only by default", want: []docRef{a, b, l}, wantNotes: []Note{values}},
		{name: "recurse", opts: &DirectoryOptions{Recurse: true}, want: []docRef{a, b, e, l, c, d}, wantNotes: []Note{values}},
		{name: "exclude", opts: &DirectoryOptions{Recurse: true, Exclude: "excluded/*"}, want: []docRef{a, b, l, c, d}, wantNotes: []Note{values}},
		{name: "include alternation, star crosses slashes", opts: &DirectoryOptions{Recurse: true, Include: "{*.yml,sub/*.yaml}"}, want: []docRef{c, d}},
		{name: "include comma-separated", opts: &DirectoryOptions{Recurse: true, Include: "a-*.yaml,*.json"}, want: []docRef{a, b}},
		{name: "exclude wins over include", opts: &DirectoryOptions{Recurse: true, Include: "*.yaml", Exclude: "{excluded/*,values.yaml}"}, want: []docRef{a, c}},
		// Argo CD's disableExtensionFilter: include picks a custom
		// extension, decoded as YAML; without it the file is never read.
		{name: "custom extension without the filter", opts: &DirectoryOptions{Recurse: true, Include: "*.sealed", DisableExtensionFilter: true}, want: []docRef{sealed}},
		{name: "custom extension with the filter", opts: &DirectoryOptions{Recurse: true, Include: "*.sealed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Build(t.Context(), "testdata/directory", "app", Options{Directory: tt.opts}, Limits{})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if res.Kind != KindDirectory {
				t.Errorf("Kind = %q, want %q", res.Kind, KindDirectory)
			}
			if diff := cmp.Diff(tt.want, refs(res.Documents)); diff != "" {
				t.Errorf("documents (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNotes, res.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildDirectoryErrors(t *testing.T) {
	tests := []struct {
		name    string
		dir     string
		opts    Options
		wantMsg string
	}{
		{name: "bad include", dir: "app", opts: Options{Directory: &DirectoryOptions{Include: "{a"}}, wantMsg: `render directory app: include: glob "{a": unclosed {`},
		{name: "dir escapes root", dir: "app/../../..", wantMsg: "render app/../../..: outside the repository root"},
		{name: "absolute dir outside root", dir: "/etc", wantMsg: "render /etc: outside the repository root"},
		{name: "missing dir", dir: "nope", wantMsg: "render nope: file does not exist"},
		{name: "file, not dir", dir: "app/values.yaml", wantMsg: "render app/values.yaml: not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(t.Context(), "testdata/directory", tt.dir, tt.opts, Limits{})
			if err == nil || err.Error() != tt.wantMsg {
				t.Errorf("error:\n got %v\nwant %s", err, tt.wantMsg)
			}
		})
	}
}

func TestCompileGlob(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{"*.yaml", []string{"a.yaml", "sub/a.yaml"}, []string{"a.yml", "a.yaml.bak"}},
		{"sub/?.yaml", []string{"sub/a.yaml"}, []string{"sub/ab.yaml"}},
		{"{a,b}/*.json", []string{"a/x.json", "b/y/z.json"}, []string{"c/x.json"}},
		{"a.yaml,b.yaml", []string{"a.yaml", "b.yaml"}, []string{"c.yaml"}},
		{"[ab].yaml", []string{"a.yaml", "b.yaml"}, []string{"c.yaml"}},
		{"[!ab].yaml", []string{"c.yaml"}, []string{"a.yaml"}},
		{`config\*.yaml`, []string{"config*.yaml"}, []string{"configx.yaml"}},
		{"{x,{y,z}}.yaml", []string{"x.yaml", "z.yaml"}, []string{"w.yaml"}},
		{"a+b(c).yaml", []string{"a+b(c).yaml"}, []string{"aab(c).yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			re, err := compileGlob(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tt.match {
				if !re.MatchString(m) {
					t.Errorf("%q does not match %q", tt.pattern, m)
				}
			}
			for _, m := range tt.noMatch {
				if re.MatchString(m) {
					t.Errorf("%q matches %q", tt.pattern, m)
				}
			}
		})
	}
	for _, bad := range []string{"{a", "[ab", `a\`} {
		if _, err := compileGlob(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("compileGlob(%q) error = %v, want an error naming the pattern", bad, err)
		}
	}
}
