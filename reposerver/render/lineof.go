package render

import (
	"encoding/json"
	"math"

	yaml "go.yaml.in/yaml/v3"
)

// maxMergeDepth bounds how deep LineOf follows merge keys (<<) into
// merged mappings.
const maxMergeDepth = 64

// LineOf returns the 1-based line of the field at path in the document's
// file: path elements are string keys and integer indexes (int, int64,
// integral float64 or json.Number), as in policies.Violation.Path. When the
// path leaves the document (a missing field, say), it returns the line of
// the deepest element that exists, so a violation about a missing field
// points at its parent. For rendered documents, whose text is not in the
// repository, it returns d.Line.
func (d Document) LineOf(path []any) int {
	if d.node == nil {
		return d.Line
	}
	n := deref(d.node)
	line := d.Line
	for _, p := range path {
		switch n.Kind {
		case yaml.MappingNode:
			key, ok := p.(string)
			if !ok {
				return line
			}
			k, v := mapEntry(n, key, 0)
			if k == nil {
				return line
			}
			line, n = k.Line, deref(v)
		case yaml.SequenceNode:
			i, ok := pathIndex(p)
			if !ok || i < 0 || i >= len(n.Content) {
				return line
			}
			line, n = n.Content[i].Line, deref(n.Content[i])
		default:
			return line
		}
	}
	return line
}

// pathIndex converts a JSON path element to a list index.
func pathIndex(p any) (int, bool) {
	switch v := p.(type) {
	case int:
		return v, true
	case int64:
		return int(v), v >= math.MinInt32 && v <= math.MaxInt32
	case float64:
		if v != math.Trunc(v) || v < 0 || v > math.MaxInt32 {
			return 0, false
		}
		return int(v), true
	case json.Number:
		i, err := v.Int64()
		return int(i), err == nil && i >= 0 && i <= math.MaxInt32
	default:
		return 0, false
	}
}

// mapEntry finds key in the mapping node n, looking into merged mappings
// (<<) when the key is not written in n itself. It returns the key and
// value nodes, or nils.
func mapEntry(n *yaml.Node, key string, depth int) (k, v *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode || depth > maxMergeDepth {
		return nil, nil
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn := deref(n.Content[i])
		if kn.Kind != yaml.ScalarNode {
			continue
		}
		if kn.ShortTag() == "!!merge" {
			merges = append(merges, n.Content[i+1])
			continue
		}
		if kn.Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	for _, m := range merges {
		m = deref(m)
		sources := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			sources = m.Content
		}
		for _, s := range sources {
			if k, v := mapEntry(deref(s), key, depth+1); k != nil {
				return k, v
			}
		}
	}
	return nil, nil
}

// lookupNode returns the value node of key in the mapping n, aliases
// followed, or nil.
func lookupNode(n *yaml.Node, key string) *yaml.Node {
	_, v := mapEntry(n, key, 0)
	if v == nil {
		return nil
	}
	return deref(v)
}
