package appset

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/tollgate-dev/tollgate/internal/jsonvalue"
)

// combined is a matrix or merge generator's children as decoded JSON.
type combined struct {
	Generators []map[string]any `json:"generators"`
	MergeKeys  []string         `json:"mergeKeys"`
}

// matrix returns every combination of the parameter sets of its two
// generators; the second is rendered with each set of the first.
func (g *generator) matrix(ctx context.Context, field string, raw any, depth int) ([]paramSet, error) {
	var m combined
	if err := fromMap(field, raw, &m); err != nil {
		return nil, err
	}
	if len(m.Generators) != 2 {
		return nil, fmt.Errorf("%s.generators: a matrix combines exactly two generators, got %d", field, len(m.Generators))
	}
	first, err := g.params(ctx, field+".generators[0]", m.Generators[0], nil, depth)
	if err != nil {
		return nil, err
	}
	var out []paramSet
	for _, a := range first {
		second, err := g.params(ctx, field+".generators[1]", m.Generators[1], a.params, depth)
		if err != nil {
			return nil, err
		}
		for _, b := range second {
			p, err := g.combine(a.params, b.params)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", field, err)
			}
			out = append(out, paramSet{params: p, files: slices.Concat(a.files, b.files)})
			if len(out) > MaxParameterSets {
				return nil, fmt.Errorf("%s: produces more than %d parameter sets", field, MaxParameterSets)
			}
		}
	}
	return out, nil
}

// combine joins a set of a matrix's first generator with one of its
// second: with goTemplate the first's values win and maps merge deeply;
// otherwise a parameter both have must have the same value.
func (g *generator) combine(a, b map[string]any) (map[string]any, error) {
	if g.r.goTemplate {
		return mergeOver(mergeOver(map[string]any{}, b), a), nil
	}
	out := maps.Clone(a)
	for k, v := range b {
		if prev, ok := out[k]; ok && fmt.Sprint(prev) != fmt.Sprint(v) {
			return nil, fmt.Errorf("found duplicate key %s with different value, a: %v, b: %v", k, prev, v)
		}
		out[k] = v
	}
	return out, nil
}

// mergeOver writes src over dst, merging nested maps, and returns dst.
func mergeOver(dst, src map[string]any) map[string]any {
	for k, sv := range src {
		dm, dIsMap := dst[k].(map[string]any)
		sm, sIsMap := sv.(map[string]any)
		if dIsMap && sIsMap {
			dst[k] = mergeOver(maps.Clone(dm), sm)
			continue
		}
		dst[k] = jsonvalue.Copy(sv)
	}
	return dst
}

// merge returns the parameter sets of its first generator, each overridden
// by the set of every later generator with the same values of the merge
// keys; sets of later generators that match no set of the first are
// dropped.
func (g *generator) merge(ctx context.Context, field string, raw any, depth int) ([]paramSet, error) {
	var m combined
	if err := fromMap(field, raw, &m); err != nil {
		return nil, err
	}
	if len(m.Generators) < 2 {
		return nil, fmt.Errorf("%s.generators: a merge needs two or more generators, got %d", field, len(m.Generators))
	}
	if len(m.MergeKeys) == 0 {
		return nil, fmt.Errorf("%s.mergeKeys: at least one merge key is required", field)
	}
	var keys []string
	for _, k := range m.MergeKeys {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	var base []paramSet
	var baseKeys []string
	for i, child := range m.Generators {
		childField := fmt.Sprintf("%s.generators[%d]", field, i)
		sets, err := g.params(ctx, childField, child, nil, depth)
		if err != nil {
			return nil, err
		}
		byKey := map[string]paramSet{}
		var order []string
		for _, s := range sets {
			k, err := mergeKey(s.params, keys)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", childField, err)
			}
			if _, dup := byKey[k]; dup {
				return nil, fmt.Errorf("%s: the merge keys are not unique: more than one parameter set has %s", childField, k)
			}
			byKey[k] = s
			order = append(order, k)
		}
		if i == 0 {
			baseKeys = order
			for _, k := range order {
				base = append(base, byKey[k])
			}
			continue
		}
		for j, k := range baseKeys {
			if over, ok := byKey[k]; ok {
				if g.r.goTemplate {
					base[j].params = mergeOver(deepCopy(base[j].params), over.params)
				} else {
					base[j].params = maps.Clone(base[j].params)
					maps.Copy(base[j].params, over.params)
				}
				base[j].files = slices.Concat(base[j].files, over.files)
			}
		}
	}
	return base, nil
}

// mergeKey identifies a parameter set by the values of the merge keys,
// each looked up as a top-level parameter.
func mergeKey(s map[string]any, keys []string) (string, error) {
	m := make(map[string]any, len(keys))
	for _, k := range keys {
		m[k] = s[k]
	}
	b, err := json.Marshal(m)
	return string(b), err
}
