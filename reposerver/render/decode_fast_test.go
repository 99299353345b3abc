package render

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// sameAsYAMLv3 checks that when fastYAML reads data, it gives the trees
// yaml.v3 gives, comments aside; it reports whether fastYAML read it.
func sameAsYAMLv3(t *testing.T, name string, data []byte) bool {
	t.Helper()
	fast, ok := fastYAML(data, new(arena))
	if !ok {
		return false
	}
	want, err := parseYAMLv3(data)
	if err != nil {
		t.Errorf("%s: fastYAML read what yaml.v3 refuses (%v):\n%s", name, err, data)
		return true
	}
	if len(want) != len(fast) {
		t.Errorf("%s: fastYAML read %d documents, yaml.v3 %d:\n%s", name, len(fast), len(want), data)
		return true
	}
	for i := range want {
		if d := nodeDiff(want[i], fast[i], fmt.Sprintf("document %d", i)); d != "" {
			t.Errorf("%s: fastYAML differs from yaml.v3 at %s\ninput:\n%s", name, d, data)
		}
	}
	return true
}

// nodeDiff describes the first difference between two node trees, where
// says where they are, comments aside; "" when there is none.
func nodeDiff(want, got *yaml.Node, where string) string {
	type fields struct {
		kind         yaml.Kind
		style        yaml.Style
		tag, value   string
		anchor       string
		alias        *yaml.Node
		line, column int
	}
	w := fields{want.Kind, want.Style, want.Tag, want.Value, want.Anchor, want.Alias, want.Line, want.Column}
	g := fields{got.Kind, got.Style, got.Tag, got.Value, got.Anchor, got.Alias, got.Line, got.Column}
	if w != g {
		return fmt.Sprintf("%s: yaml.v3 %+v, fast %+v", where, w, g)
	}
	if len(want.Content) != len(got.Content) {
		return fmt.Sprintf("%s: yaml.v3 %d children, fast %d", where, len(want.Content), len(got.Content))
	}
	for i := range want.Content {
		if d := nodeDiff(want.Content[i], got.Content[i], fmt.Sprintf("%s/%d", where, i)); d != "" {
			return d
		}
	}
	return ""
}

// fastCases are inputs fastYAML reads; each must parse as yaml.v3 parses
// it.
var fastCases = map[string]string{
	"deployment": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web   # trailing comment
  labels: {app: web, tier: "front end", n: 3, ok: true, none: null}
  annotations:
    a: 'it''s'
    b: "quoted: value"
    c: 0755
    d: 1e3
    e: 2001-12-14
    f: ~
# a comment between entries
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: main
        image: nginx:1.27
        args: ["--port", "8080", a b]
        ports:
          - containerPort: 8080
            name: http
        env:
        -   name: X
            value: "1"
      volumes: []
      empty:
status:
`,
	"documents":           "a: 1\n---\nb: [x, {y: z}]\n--- # marked\nc: |\n  line one\n\n  line three\n    indented\nd: x\n",
	"literal":             "keep: |+\n  a\n\n\nstrip: |-\n  b\n  c\nclip: |\n  d\n\n",
	"sequence of scalars": "items:\n- a\n- 'b'\n- \"c\"\n- [d]\n- {e: f}\nafter: 1\n",
	"explicit first":      "---\nkind: List\nitems:\n  - kind: A\n    nested:\n      - x\n",
	"keys":                "\"quoted key\": 1\n'single': 2\n80: http\ntrue: yes\n",
	"url values":          "url: https://example.com/a?b=c#frag\nport: :8080\ncolon: a:b\n",
	"null then sequence":  "a:\nb:\n- 1\nc:\n  d:\n",
}

// fallbackCases are inputs fastYAML leaves to yaml.v3.
var fallbackCases = map[string]string{
	"anchor":          "a: &x 1\nb: *x\n",
	"tag":             "a: !!str 1\n",
	"folded":          "a: >\n  b\n",
	"multi-line":      "a: b\n  c\n",
	"escape":          "a: \"b\\nc\"\n",
	"open quote":      "a: 'b\n  c'\n",
	"tab":             "a:\tb\n",
	"crlf":            "a: b\r\n",
	"non-ASCII":       "a: é\n",
	"empty document":  "a: 1\n---\n---\nb: 2\n",
	"scalar doc":      "just a string\n",
	"sequence doc":    "- a\n- b\n",
	"merge key":       "<<: {a: 1}\n",
	"multi-line flow": "a: [b,\n  c]\n",
	"bad indent":      "a:\n    b: 1\n  c: 2\n",
	"directive":       "%YAML 1.2\n---\na: 1\n",
	"doc end":         "a: 1\n...\n",
	"indicator":       "a: |2\n   b\n",
	"nested dash":     "a:\n- - b\n",
	"key on value":    "a: b: c\n",
	"empty":           "",
}

func TestFastYAMLMatchesYAMLv3(t *testing.T) {
	for name, in := range fastCases {
		if !sameAsYAMLv3(t, name, []byte(in)) {
			t.Errorf("%s: fastYAML did not read it", name)
		}
	}
	for name, in := range fallbackCases {
		if _, ok := fastYAML([]byte(in), new(arena)); ok {
			t.Errorf("%s: fastYAML read it, want it left to yaml.v3:\n%s", name, in)
		}
	}
	// Every YAML file of the tests' data.
	read := 0
	err := filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if sameAsYAMLv3(t, p, data) {
			read++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if read < 20 {
		t.Errorf("fastYAML read %d files of testdata, want most of them", read)
	}
}

// FuzzFastYAML: whatever fastYAML reads, it reads as yaml.v3 does.
func FuzzFastYAML(f *testing.F) {
	for _, in := range fastCases {
		f.Add([]byte(in))
	}
	for _, in := range fallbackCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsYAMLv3(t, "fuzz", data)
	})
}
