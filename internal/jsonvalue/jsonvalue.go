// Package jsonvalue works on decoded JSON values: map[string]any, []any
// and scalars, as encoding/json, sigs.k8s.io/yaml and unstructured objects
// hold them.
package jsonvalue

// Copy returns a deep copy of v: its maps and slices are copied
// recursively; any other value (a scalar, or a type JSON does not decode
// into, such as a map[string]string) is shared.
func Copy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = Copy(e)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = Copy(e)
		}
		return l
	}
	return v
}
