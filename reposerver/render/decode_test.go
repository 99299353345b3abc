package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// docRef summarizes a Document for comparison.
type docRef struct {
	File        string
	Index, Line int
	Kind, Name  string
}

func refs(docs []Document) []docRef {
	var out []docRef
	for _, d := range docs {
		md, _ := d.Object["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		kind, _ := d.Object["kind"].(string)
		out = append(out, docRef{File: d.File, Index: d.Index, Line: d.Line, Kind: kind, Name: name})
	}
	return out
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "decode", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDecode(t *testing.T) {
	tests := []struct {
		file      string
		want      []docRef
		wantNotes []Note
	}{{
		file: "two-objects-and-empty-docs.yaml",
		want: []docRef{
			{File: "two-objects-and-empty-docs.yaml", Index: 0, Line: 3, Kind: "ConfigMap", Name: "settings"},
			{File: "two-objects-and-empty-docs.yaml", Index: 2, Line: 12, Kind: "Service", Name: "web"},
		},
	}, {
		file: "deployment.json",
		want: []docRef{{File: "deployment.json", Index: 0, Line: 1, Kind: "Deployment", Name: "api"}},
	}, {
		file: "list-flattened.yaml",
		want: []docRef{
			{File: "list-flattened.yaml", Index: 0, Line: 4, Kind: "ServiceAccount", Name: "builder"},
			{File: "list-flattened.yaml", Index: 0, Line: 8, Kind: "ServiceAccount", Name: "deployer"},
			{File: "list-flattened.yaml", Index: 1, Line: 16, Kind: "ConfigMap", Name: "from-configmaplist"},
		},
	}, {
		file: "values-and-ci-skipped.yaml",
		want: []docRef{{File: "values-and-ci-skipped.yaml", Index: 2, Line: 9, Kind: "Namespace", Name: "team-a"}},
		wantNotes: []Note{
			{File: "values-and-ci-skipped.yaml", Index: 0, Line: 2, Message: "skipped: not a Kubernetes object (no apiVersion or kind)"},
			{File: "values-and-ci-skipped.yaml", Index: 1, Line: 6, Message: "skipped: not a Kubernetes object (the document is a list)"},
		},
	}, {
		file: "merge-keys-and-scalars.yaml",
		want: []docRef{{File: "merge-keys-and-scalars.yaml", Index: 0, Line: 1, Kind: "ConfigMap", Name: "merged"}},
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			docs, notes, err := Decode(tt.file, readTestdata(t, tt.file), DefaultLimits())
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(tt.want, refs(docs)); diff != "" {
				t.Errorf("documents (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNotes, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeValues(t *testing.T) {
	tests := []struct {
		file string
		path []string
		want any
	}{{
		file: "deployment.json",
		path: []string{"spec"},
		want: map[string]any{
			"replicas": int64(2),
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "api", "image": "registry.example.com/api:1.4.2",
				"ports": []any{map[string]any{"containerPort": int64(8080)}},
			}}}},
		},
	}, {
		file: "deployment.json",
		path: []string{"metadata", "annotations"},
		want: map[string]any{"docs": "https://example.com/api"},
	}, {
		file: "merge-keys-and-scalars.yaml",
		path: []string{"metadata", "annotations"},
		want: map[string]any{"team": "payments", "tier": "overridden"},
	}, {
		file: "merge-keys-and-scalars.yaml",
		path: []string{"data"},
		want: map[string]any{
			"count": int64(16), "octal": int64(15), "ratio": 1.5, "big": 12345678901234567890.0,
			"when": "2024-01-02", "nothing": nil, "flag": true, "word": "yes", "quoted": "123",
		},
	}, {
		file: "two-objects-and-empty-docs.yaml",
		path: []string{"data"},
		want: map[string]any{"replicas": "3", "enabled": "yes"},
	}}
	for _, tt := range tests {
		t.Run(tt.file+"/"+strings.Join(tt.path, "."), func(t *testing.T) {
			docs, _, err := Decode(tt.file, readTestdata(t, tt.file), DefaultLimits())
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			var got any = docs[0].Object
			for _, p := range tt.path {
				got = got.(map[string]any)[p]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		data    []byte
		lim     Limits
		wantIs  error
		want    DecodeError
		wantMsg string
	}{{
		name:    "kind without apiVersion",
		file:    "kind-without-apiversion-error.yaml",
		want:    DecodeError{File: "kind-without-apiversion-error.yaml", Index: 1, Line: 6},
		wantMsg: `kind-without-apiversion-error.yaml: document 2 (line 6): object has kind "Deployment" but no apiVersion`,
	}, {
		name:    "malformed yaml",
		file:    "malformed-line-6-error.yaml",
		want:    DecodeError{File: "malformed-line-6-error.yaml", Index: 0, Line: 6},
		wantMsg: "malformed-line-6-error.yaml: document 1 (line 6): did not find expected ',' or ']'",
	}, {
		name:    "duplicate key",
		file:    "duplicate-key-error.yaml",
		want:    DecodeError{File: "duplicate-key-error.yaml", Index: 0, Line: 9},
		wantMsg: `duplicate-key-error.yaml: document 1 (line 9): mapping key "image" already defined at line 8`,
	}, {
		name:    "integer key",
		file:    "integer-key-error.yaml",
		want:    DecodeError{File: "integer-key-error.yaml", Index: 0, Line: 6},
		wantMsg: `integer-key-error.yaml: document 1 (line 6): mapping key "8080" is an integer, not a string; quote it`,
	}, {
		name:   "alias bomb",
		file:   "alias-bomb-rejected.yaml",
		wantIs: ErrTooManyNodes,
		want:   DecodeError{File: "alias-bomb-rejected.yaml", Index: 0, Line: 1},
	}, {
		name:    "alias bomb under a small limit",
		file:    "deployment-image-line.yaml",
		lim:     Limits{MaxNodes: 10},
		wantIs:  ErrTooManyNodes,
		want:    DecodeError{File: "deployment-image-line.yaml", Index: 0, Line: 1},
		wantMsg: "deployment-image-line.yaml: document 1 (line 1): too many YAML nodes: the file expands to more than 10 nodes (YAML alias bomb?)",
	}, {
		name:    "budget spans the documents of a file",
		file:    "two.yaml",
		data:    []byte("apiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: B\n"),
		lim:     Limits{MaxNodes: 8},
		wantIs:  ErrTooManyNodes,
		want:    DecodeError{File: "two.yaml", Index: 1, Line: 4},
		wantMsg: "two.yaml: document 2 (line 4): too many YAML nodes: the file expands to more than 8 nodes (YAML alias bomb?)",
	}, {
		name:    "aliases are measured before conversion",
		file:    "anchored.yaml",
		data:    []byte("apiVersion: v1\nkind: ConfigMap\ndata: &d {a: x, b: y}\nmore: [*d, *d, *d]\n"),
		lim:     Limits{MaxNodes: 16},
		wantIs:  ErrTooManyNodes,
		want:    DecodeError{File: "anchored.yaml", Index: 0, Line: 1},
		wantMsg: "anchored.yaml: document 1 (line 1): too many YAML nodes: the file expands to more than 16 nodes (YAML alias bomb?)",
	}, {
		name:    "duplicate key beside an inline merge",
		file:    "merge-dup.yaml",
		data:    []byte("apiVersion: v1\nkind: ConfigMap\ndata:\n  <<: {a: x}\n  b: y\n  b: z\n"),
		want:    DecodeError{File: "merge-dup.yaml", Index: 0, Line: 6},
		wantMsg: `merge-dup.yaml: document 1 (line 6): mapping key "b" already defined at line 5`,
	}, {
		name:    "oversize",
		file:    "big.yaml",
		data:    bytes.Repeat([]byte("a"), 101),
		lim:     Limits{MaxFileBytes: 100},
		wantIs:  ErrFileTooLarge,
		want:    DecodeError{File: "big.yaml", Index: -1},
		wantMsg: "big.yaml: file too large: 101 bytes, limit is 100",
	}, {
		name:    "NUL bytes",
		file:    "image.yaml",
		data:    []byte("apiVersion: v1\x00\x01\x02"),
		wantIs:  ErrBinaryFile,
		want:    DecodeError{File: "image.yaml", Index: -1},
		wantMsg: "image.yaml: binary file: not UTF-8 text",
	}, {
		name:   "invalid UTF-8",
		file:   "latin1.yaml",
		data:   []byte("kind: caf\xe9\n"),
		wantIs: ErrBinaryFile,
		want:   DecodeError{File: "latin1.yaml", Index: -1},
	}, {
		name:    "alias cycle",
		file:    "cycle.yaml",
		data:    []byte("apiVersion: v1\nkind: ConfigMap\ndata: &d\n  self: [*d]\n"),
		want:    DecodeError{File: "cycle.yaml", Index: 0, Line: 1},
		wantMsg: "cycle.yaml: document 1 (line 1): alias cycle at line 3",
	}, {
		name:    "apiVersion not a string",
		file:    "number.yaml",
		data:    []byte("apiVersion: 1\nkind: Thing\n"),
		want:    DecodeError{File: "number.yaml", Index: 0, Line: 1},
		wantMsg: "number.yaml: document 1 (line 1): apiVersion must be a non-empty string, got int64 1",
	}, {
		name:    "infinite number",
		file:    "inf.yaml",
		data:    []byte("apiVersion: v1\nkind: ConfigMap\nx: .inf\n"),
		want:    DecodeError{File: "inf.yaml", Index: 0, Line: 3},
		wantMsg: "inf.yaml: document 1 (line 3): number .inf has no JSON representation",
	}, {
		name:    "list item without kind",
		file:    "list.yaml",
		data:    []byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: A\n- apiVersion: v1\n"),
		want:    DecodeError{File: "list.yaml", Index: 0, Line: 6},
		wantMsg: `list.yaml: document 1 (line 6): items[1]: object has apiVersion "v1" but no kind`,
	}, {
		name:    "invalid json",
		file:    "broken.json",
		data:    []byte("{\n  \"apiVersion\": \"v1\",\n  \"kind\": }\n"),
		want:    DecodeError{File: "broken.json", Index: 0, Line: 3},
		wantMsg: "broken.json: document 1 (line 3): invalid JSON: invalid character '}' looking for beginning of value",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.data
			if data == nil {
				data = readTestdata(t, tt.file)
			}
			docs, _, err := Decode(tt.file, data, tt.lim)
			if err == nil {
				t.Fatalf("Decode returned %d documents and no error", len(docs))
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v (%T) is not a *DecodeError", err, err)
			}
			got := DecodeError{File: de.File, Index: de.Index, Line: de.Line}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("error position (-want +got):\n%s", diff)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v is not %v", err, tt.wantIs)
			}
			if tt.wantMsg != "" && err.Error() != tt.wantMsg {
				t.Errorf("message:\n got %s\nwant %s", err, tt.wantMsg)
			}
		})
	}
}

func TestLineOf(t *testing.T) {
	yamlDocs, _, err := decodeData("deployment-image-line.yaml", readTestdata(t, "deployment-image-line.yaml"), DefaultLimits(), false, true)
	if err != nil {
		t.Fatal(err)
	}
	jsonDocs, _, err := decodeData("deployment.json", readTestdata(t, "deployment.json"), DefaultLimits(), true, true)
	if err != nil {
		t.Fatal(err)
	}
	listDocs, _, err := decodeData("list-flattened.yaml", readTestdata(t, "list-flattened.yaml"), DefaultLimits(), false, true)
	if err != nil {
		t.Fatal(err)
	}
	rendered := yamlDocs[0]
	rendered.Rendered, rendered.node, rendered.Line = true, nil, 7

	containers := []any{"spec", "template", "spec", "containers"}
	path := func(extra ...any) []any { return append(append([]any{}, containers...), extra...) }
	tests := []struct {
		name string
		doc  Document
		path []any
		want int
	}{
		{"image of second container", yamlDocs[0], path(1, "image"), 18},
		{"image of first container", yamlDocs[0], path(0, "image"), 16},
		{"index as float64 from JSON", yamlDocs[0], path(float64(1), "image"), 18},
		{"index as json.Number", yamlDocs[0], path(json.Number("1"), "image"), 18},
		{"missing field points at its parent", yamlDocs[0], path(1, "securityContext", "runAsNonRoot"), 17},
		{"index out of range points at the list", yamlDocs[0], path(5, "image"), 14},
		{"through an alias", yamlDocs[0], []any{"spec", "selector", "matchLabels", "app"}, 6},
		{"empty path", yamlDocs[0], nil, 1},
		{"json image", jsonDocs[0], path(0, "image"), 10},
		{"list item", listDocs[1], []any{"metadata", "name"}, 11},
		{"rendered document", rendered, path(1, "image"), 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.doc.LineOf(tt.path); got != tt.want {
				t.Errorf("LineOf(%v) = %d, want %d", tt.path, got, tt.want)
			}
		})
	}
}

func TestDecodeFile(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("apiVersion: v1\nkind: Secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	mustWrite(t, root, "apps/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n")
	mustWrite(t, root, "apps/big.yaml", strings.Repeat("#", 200))
	mustSymlink(t, filepath.Join(outside, "secret.yaml"), filepath.Join(root, "apps/escape.yaml"))
	mustSymlink(t, "ns.yaml", filepath.Join(root, "apps/alias.yaml"))

	tests := []struct {
		name     string
		path     string
		lim      Limits
		want     []docRef
		wantIs   error
		wantFile string
	}{
		{name: "relative path", path: "apps/ns.yaml", want: []docRef{{File: "apps/ns.yaml", Line: 1, Kind: "Namespace", Name: "a"}}},
		{name: "absolute path inside root", path: filepath.Join(root, "apps/ns.yaml"), want: []docRef{{File: "apps/ns.yaml", Line: 1, Kind: "Namespace", Name: "a"}}},
		{name: "symlink inside root keeps its name", path: "apps/alias.yaml", want: []docRef{{File: "apps/alias.yaml", Line: 1, Kind: "Namespace", Name: "a"}}},
		{name: "symlink escaping root", path: "apps/escape.yaml", wantIs: ErrOutsideRoot, wantFile: "apps/escape.yaml"},
		{name: "dot-dot escaping root", path: "../x.yaml", wantIs: ErrOutsideRoot, wantFile: "../x.yaml"},
		{name: "absolute path outside root", path: filepath.Join(outside, "secret.yaml"), wantIs: ErrOutsideRoot, wantFile: filepath.Join(outside, "secret.yaml")},
		{name: "oversize file", path: "apps/big.yaml", lim: Limits{MaxFileBytes: 100}, wantIs: ErrFileTooLarge, wantFile: "apps/big.yaml"},
		{name: "missing file", path: "apps/none.yaml", wantIs: os.ErrNotExist, wantFile: "apps/none.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, _, err := DecodeFile(root, tt.path, tt.lim)
			if tt.wantIs != nil {
				var de *DecodeError
				if !errors.As(err, &de) || !errors.Is(err, tt.wantIs) {
					t.Fatalf("error = %v, want a *DecodeError wrapping %v", err, tt.wantIs)
				}
				if de.File != tt.wantFile {
					t.Errorf("error names file %q, want %q", de.File, tt.wantFile)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeFile: %v", err)
			}
			if diff := cmp.Diff(tt.want, refs(docs)); diff != "" {
				t.Errorf("documents (-want +got):\n%s", diff)
			}
		})
	}
}

func mustWrite(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestYAMLErrorLines(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		wantLine int
		wantMsg  string
	}{
		{"scanner error", "a: 1\nb: 2\n c: 3\n", 3, "mapping values are not allowed in this context"},
		{"tab indentation", "a: 1\n\tb: 2\n", 2, "found a tab character that violates indentation"},
		{"parser error, 0-based in yaml.v3", "a: 1\nb: 2\n- x\n", 3, "did not find expected key"},
		{"parser error on the first line", "[a, b\n", 1, "did not find expected ',' or ']'"},
		{"unexpected end of input", "a: 1\nb: [\n", 2, "did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Decode("x.yaml", []byte(tt.data), Limits{})
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error = %v, want a *DecodeError", err)
			}
			got := struct {
				Line int
				Msg  string
			}{de.Line, de.Err.Error()}
			want := struct {
				Line int
				Msg  string
			}{tt.wantLine, tt.wantMsg}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
