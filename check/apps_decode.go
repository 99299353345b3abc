package check

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// decodeApplication decodes what rendering reads of an Application
// document (metadata.name and .namespace, and spec) into the typed
// Application as the API server decodes a custom resource: its JSON
// encoding through sigs.k8s.io/json, keys matching exactly and unknown
// fields ignored. A field of the wrong type is an error naming it, such as
// "spec.sources[0].path: want a string, got a number".
func decodeApplication(obj map[string]any) (v1alpha1.Application, error) {
	in := map[string]any{"spec": obj["spec"]}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		in["metadata"] = map[string]any{"name": meta["name"], "namespace": meta["namespace"]}
	} else {
		in["metadata"] = obj["metadata"]
	}
	var app v1alpha1.Application
	data, err := json.Marshal(in)
	if err != nil {
		return app, fmt.Errorf("encode application: %w", err)
	}
	err = kjson.UnmarshalCaseSensitivePreserveInts(data, &app)
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		path, t := te.Field, te.Type
		if p, ft, ok := locate(in, reflect.TypeFor[v1alpha1.Application](), strings.Split(te.Field, "."), te.Value); ok {
			path, t = strings.TrimPrefix(p, "."), ft
		}
		err = fmt.Errorf("%s: want %s, got %s", path, wantType(t), gotType(te.Value))
	}
	return app, err
}

// locate finds the value in v, of Go type t, that the decoder refused: the
// first one at the path field whose JSON kind is value, both as a
// json.UnmarshalTypeError gives them (field names struct fields only, an
// embedded struct without a JSON name by its Go name; value is "string",
// "number", "number 1.5" and so on). It returns the value's path with list
// indexes and map keys, and its Go type.
func locate(v any, t reflect.Type, field []string, value string) (string, reflect.Type, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch v := v.(type) {
	case []any:
		if t.Kind() == reflect.Slice {
			for i, e := range v {
				if p, et, ok := locate(e, t.Elem(), field, value); ok {
					return "[" + strconv.Itoa(i) + "]" + p, et, true
				}
			}
			return "", nil, false
		}
	case map[string]any:
		if t.Kind() == reflect.Map {
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if p, et, ok := locate(v[k], t.Elem(), field, value); ok {
					return "." + k + p, et, true
				}
			}
			return "", nil, false
		}
		if t.Kind() == reflect.Struct && len(field) > 0 {
			for i := range t.NumField() {
				f := t.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if cmp.Or(name, f.Name) != field[0] {
					continue
				}
				if name == "" && f.Anonymous {
					return locate(v, f.Type, field[1:], value)
				}
				p, ft, ok := locate(v[field[0]], f.Type, field[1:], value)
				return "." + field[0] + p, ft, ok
			}
			return "", nil, false
		}
	}
	if len(field) > 0 {
		return "", nil, false
	}
	var kind string
	switch v.(type) {
	case string:
		kind = "string"
	case bool:
		kind = "bool"
	case int64, float64:
		n, _ := json.Marshal(v)
		if value == "number "+string(n) {
			return "", t, true
		}
		kind = "number"
	case []any:
		kind = "array"
	case map[string]any:
		kind = "object"
	}
	return "", t, kind == value
}

// wantType says what JSON a field of Go type t takes.
func wantType(t reflect.Type) string {
	if t == reflect.TypeFor[intstr.IntOrString]() {
		return "an integer or a string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "a list of strings"
		}
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}

// gotType names the JSON kind json.UnmarshalTypeError.Value describes.
func gotType(value string) string {
	kind, _, _ := strings.Cut(value, " ")
	switch kind {
	case "bool":
		return "a boolean"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	return "a " + kind
}
