package appset

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// list returns one parameter set per element of a list generator:
// elements, then elementsYaml (a YAML list of objects).
func (g *generator) list(field string, raw any) ([]map[string]any, error) {
	var l v1alpha1.ListGenerator
	if err := fromMap(field, raw, &l); err != nil {
		return nil, err
	}
	var elements []map[string]any
	for i, e := range l.Elements {
		var m map[string]any
		if err := yaml.Unmarshal(e.Raw, &m); err != nil || m == nil {
			return nil, fmt.Errorf("%s.elements[%d]: want an object", field, i)
		}
		elements = append(elements, m)
	}
	if l.ElementsYaml != "" {
		var more []map[string]any
		if err := yaml.Unmarshal([]byte(l.ElementsYaml), &more); err != nil {
			return nil, fmt.Errorf("%s.elementsYaml: want a YAML list of objects: %w", field, err)
		}
		elements = append(elements, more...)
	}
	out := make([]map[string]any, 0, len(elements))
	for i, e := range elements {
		if g.r.goTemplate {
			out = append(out, e)
			continue
		}
		params, err := flatElement(e)
		if err != nil {
			return nil, fmt.Errorf("%s.elements[%d]: %w", field, i, err)
		}
		out = append(out, params)
	}
	return out, nil
}

// flatElement is a list element as {{param}} parameters: strings, numbers
// and booleans as printed, null as "", and the strings of a "values" object
// as values.<key>. Other objects and arrays are refused, as in Argo CD.
func flatElement(e map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range e {
		if k == "values" {
			values, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("values: want an object of strings")
			}
			for vk, vv := range values {
				s, ok := vv.(string)
				if !ok {
					return nil, fmt.Errorf("values.%s: want a string", vk)
				}
				out["values."+vk] = s
			}
			continue
		}
		switch v := v.(type) {
		case nil:
			out[k] = ""
		case string:
			out[k] = v
		case bool, float64, int64, int:
			out[k] = fmt.Sprintf("%v", v)
		default:
			return nil, fmt.Errorf("%s: nested objects and arrays are not supported without goTemplate", k)
		}
	}
	return out, nil
}
