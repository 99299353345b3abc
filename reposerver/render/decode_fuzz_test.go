package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// FuzzDecode checks that Decode never panics, returns only *DecodeError
// errors, and produces output bounded by the limits that JSON can encode
// (as the policy evaluator will). The seed corpus is in
// testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n"), false)
	lim := Limits{MaxFileBytes: 1 << 20, MaxNodes: 5000}
	f.Fuzz(func(t *testing.T, data []byte, asJSON bool) {
		name := "fuzz.yaml"
		if asJSON {
			name = "fuzz.json"
		}
		docs, notes, err := decodeData(name, data, lim, asJSON, true)
		// Without the syntax trees (from a reused arena), the same.
		plain, plainNotes, plainErr := Decode(name, data, lim)
		if !reflect.DeepEqual(withoutNodes(docs), plain) || !reflect.DeepEqual(notes, plainNotes) || fmt.Sprint(err) != fmt.Sprint(plainErr) {
			t.Fatalf("Decode without lines differs: %v, %v, %v; with lines %v, %v, %v", plain, plainNotes, plainErr, docs, notes, err)
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v (%T) is not a *DecodeError", err, err)
			}
			if de.File != name || de.Line < 0 || de.Index < -1 {
				t.Fatalf("bad error position %+v", de)
			}
			if docs != nil || notes != nil {
				t.Fatal("output returned with an error")
			}
			return
		}
		total := 0
		for _, d := range docs {
			total += countValues(d.Object)
			if d.File != name || d.Index < 0 || d.Line < 0 {
				t.Fatalf("bad document position %+v", d)
			}
			if _, ok := d.Object["apiVersion"].(string); !ok {
				t.Fatalf("document without a string apiVersion: %v", d.Object)
			}
			if _, ok := d.Object["kind"].(string); !ok {
				t.Fatalf("document without a string kind: %v", d.Object)
			}
			if _, err := json.Marshal(d.Object); err != nil {
				t.Fatalf("document cannot be encoded as JSON: %v", err)
			}
			if l := d.LineOf([]any{"metadata", "name"}); l < 0 {
				t.Fatalf("LineOf = %d", l)
			}
			if l := d.LineOf([]any{"spec", 0, "x", float64(2)}); l < 0 {
				t.Fatalf("LineOf = %d", l)
			}
		}
		// Each List item is a document of its own, but shares nodes with
		// its List; allow for that.
		if total > 2*lim.MaxNodes {
			t.Fatalf("output has %d values, limit is %d nodes", total, lim.MaxNodes)
		}
		for _, n := range notes {
			if n.File != name || n.Message == "" {
				t.Fatalf("bad note %+v", n)
			}
		}
	})
}

// countValues counts the values in a decoded tree, keys included.
func countValues(v any) int {
	switch t := v.(type) {
	case map[string]any:
		n := 1
		for _, x := range t {
			n += 1 + countValues(x)
		}
		return n
	case []any:
		n := 1
		for _, x := range t {
			n += countValues(x)
		}
		return n
	default:
		return 1
	}
}

// withoutNodes returns docs without their syntax trees, as Decode gives
// them.
func withoutNodes(docs []Document) []Document {
	var out []Document
	for _, d := range docs {
		d.node = nil
		out = append(out, d)
	}
	return out
}
