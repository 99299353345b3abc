package check

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// decodeApplication decodes what rendering reads of an Application
// document (metadata.name and .namespace, and spec) into the typed
// Application. Keys match exactly, as in the API server's decoder, and
// unknown fields are ignored. A field of the wrong type is an error naming
// it, such as "spec.sources[0].path: want a string, got a number".
func decodeApplication(obj map[string]any) (v1alpha1.Application, error) {
	in := map[string]any{"spec": obj["spec"]}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		in["metadata"] = map[string]any{"name": meta["name"], "namespace": meta["namespace"]}
	} else {
		in["metadata"] = obj["metadata"]
	}
	var app v1alpha1.Application
	err := decodeValue(in, reflect.ValueOf(&app).Elem(), "")
	return app, err
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	intOrString     = reflect.TypeFor[intstr.IntOrString]()
)

// decodeValue stores v, a decoded YAML or JSON value (map[string]any,
// []any, string, int64, float64, bool or nil), in out, following the json
// tags of out's type; path names v in errors. A null leaves out as it is.
// A type with its own UnmarshalJSON (runtime.RawExtension,
// intstr.IntOrString, metav1.Time) decodes v's JSON encoding.
func decodeValue(v any, out reflect.Value, path string) error {
	if v == nil {
		return nil
	}
	if out.Type() == intOrString {
		switch v.(type) {
		case string, int64, float64:
		default:
			return wrongType(path, "a number or a string", v)
		}
	}
	if out.CanAddr() && out.Addr().Type().Implements(jsonUnmarshaler) {
		data, err := json.Marshal(v)
		if err == nil {
			err = out.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(data)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
	switch out.Kind() {
	case reflect.Pointer:
		p := reflect.New(out.Type().Elem())
		if err := decodeValue(v, p.Elem(), path); err != nil {
			return err
		}
		out.Set(p)
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return wrongType(path, "an object", v)
		}
		return decodeStruct(m, out, path)
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			if out.Type().Elem().Kind() == reflect.String {
				return wrongType(path, "a list of strings", v)
			}
			return wrongType(path, "a list", v)
		}
		s := reflect.MakeSlice(out.Type(), len(list), len(list))
		for i, it := range list {
			if err := decodeValue(it, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		out.Set(s)
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok || out.Type().Key().Kind() != reflect.String {
			return wrongType(path, "an object", v)
		}
		mv := reflect.MakeMapWithSize(out.Type(), len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			ev := reflect.New(out.Type().Elem()).Elem()
			if err := decodeValue(m[k], ev, fieldPath(path, k)); err != nil {
				return err
			}
			mv.SetMapIndex(reflect.ValueOf(k).Convert(out.Type().Key()), ev)
		}
		out.Set(mv)
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			return wrongType(path, "a string", v)
		}
		out.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return wrongType(path, "a boolean", v)
		}
		out.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := integer(v)
		if !ok || out.OverflowInt(n) {
			return wrongType(path, "an integer", v)
		}
		out.SetInt(n)
	case reflect.Float32, reflect.Float64:
		switch n := v.(type) {
		case int64:
			out.SetFloat(float64(n))
		case float64:
			out.SetFloat(n)
		default:
			return wrongType(path, "a number", v)
		}
	case reflect.Interface:
		out.Set(reflect.ValueOf(v))
	default:
		return fmt.Errorf("%s: cannot decode into %s", path, out.Type())
	}
	return nil
}

// decodeStruct decodes the keys of m into the fields of the struct out by
// their json names; the fields of an embedded struct without a name (such
// as `json:",inline"`) are read from m itself.
func decodeStruct(m map[string]any, out reflect.Value, path string) error {
	t := out.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			if err := decodeStruct(m, out.Field(i), path); err != nil {
				return err
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		if v, ok := m[name]; ok {
			if err := decodeValue(v, out.Field(i), fieldPath(path, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// fieldPath appends the key name to path.
func fieldPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// integer returns v as an integer when it is a whole number.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		if n == math.Trunc(n) && n >= math.MinInt64 && n < math.MaxInt64 {
			return int64(n), true
		}
	}
	return 0, false
}

// wrongType is the error of a value of the wrong type at path.
func wrongType(path, want string, v any) error {
	return fmt.Errorf("%s: want %s, got %s", path, want, typeName(v))
}

// typeName names the JSON type of a decoded value for messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case int, int64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
