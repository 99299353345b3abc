package policies

import (
	"encoding/json"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

func TestConvertMatchesInterfaceToValue(t *testing.T) {
	type custom struct {
		Name string `json:"name"`
	}
	tests := []struct {
		name string
		doc  any
	}{
		{name: "nil", doc: nil},
		{name: "nil map", doc: map[string]any(nil)},
		{name: "empty map", doc: map[string]any{}},
		{name: "deployment", doc: benchDeployment("web")},
		{name: "application", doc: benchApplication()},
		{name: "project", doc: DefaultProject()},
		{name: "scalars", doc: map[string]any{
			"s": "x", "empty": "", "t": true, "f": false, "null": nil,
			"float": 1.5, "whole float": float64(3), "int": 7, "int64": int64(-9), "uint64": uint64(1 << 63),
			"number": json.Number("1.0e2"), "small number": json.Number("3"),
		}},
		{name: "nested lists", doc: map[string]any{"a": []any{[]any{}, []any{1, "two", nil, map[string]any{"b": []any{true}}}}}},
		{name: "list", doc: []any{"kind", map[string]any{"kind": "Pod"}, []any{}}},
		{name: "other go types", doc: map[string]any{
			"strings": []string{"a", "b"}, "string map": map[string]string{"k": "v"}, "struct": custom{Name: "x"},
		}},
		{name: "interned and field-name strings", doc: map[string]any{"metadata": "name", "name": "metadata", "labels": map[string]any{"kind": "value"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := ast.InterfaceToValue(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			got, err := convert(tt.doc)
			if err != nil {
				t.Fatalf("convert() error = %v", err)
			}
			if got.Compare(want) != 0 || got.String() != want.String() || got.Hash() != want.Hash() {
				t.Errorf("convert() = %v, want %v", got, want)
			}
		})
	}
}

func TestConvertErrors(t *testing.T) {
	doc := map[string]any{"spec": map[string]any{"broken": []any{make(chan int)}}}
	_, want := ast.InterfaceToValue(doc)
	_, got := convert(doc)
	if want == nil || got == nil || got.Error() != want.Error() {
		t.Errorf("convert() error = %v, want %v", got, want)
	}
}
