package apply

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// managedPaths returns the paths in target of the fields that managers own
// in live, read from live's metadata.managedFields (fieldsV1 format).
func managedPaths(live *unstructured.Unstructured, managers []string, target map[string]any) []fieldPath {
	var out []fieldPath
	for _, e := range live.GetManagedFields() {
		if !slices.Contains(managers, e.Manager) || e.FieldsV1 == nil || e.Subresource != "" {
			continue
		}
		var tree map[string]any
		if err := json.Unmarshal(e.FieldsV1.Raw, &tree); err != nil {
			continue
		}
		walkFields(target, tree, nil, &out)
	}
	return out
}

// walkFields resolves a fieldsV1 tree against node. Keys are `f:<field>`,
// `k:<json key fields>` (list item by key), `v:<json value>` (set item) and
// `i:<index>`; `.` marks the node itself and is skipped. A key whose subtree
// is empty (or only `.`) is a leaf: the whole value is owned.
func walkFields(node any, tree map[string]any, prefix fieldPath, out *[]fieldPath) {
	for key, sub := range tree {
		if key == "." {
			continue
		}
		subtree, _ := sub.(map[string]any)
		child, step, ok := resolveFieldKey(node, key)
		if !ok {
			continue
		}
		p := append(slices.Clone(prefix), step)
		if isLeaf(subtree) {
			*out = append(*out, p)
			continue
		}
		walkFields(child, subtree, p, out)
	}
}

func isLeaf(tree map[string]any) bool {
	for k := range tree {
		if k != "." {
			return false
		}
	}
	return true
}

// resolveFieldKey finds the child of node named by one fieldsV1 key.
func resolveFieldKey(node any, key string) (child, step any, ok bool) {
	kind, arg, found := strings.Cut(key, ":")
	if !found {
		return nil, nil, false
	}
	switch kind {
	case "f":
		m, isMap := node.(map[string]any)
		if !isMap {
			return nil, nil, false
		}
		v, exists := m[arg]
		return v, arg, exists
	case "i":
		l, isList := node.([]any)
		i, err := strconv.Atoi(arg)
		if !isList || err != nil || i < 0 || i >= len(l) {
			return nil, nil, false
		}
		return l[i], i, true
	case "k":
		var keys map[string]any
		l, isList := node.([]any)
		if !isList || json.Unmarshal([]byte(arg), &keys) != nil {
			return nil, nil, false
		}
		for i, e := range l {
			if m, isMap := e.(map[string]any); isMap && hasKeys(m, keys) {
				return e, i, true
			}
		}
	case "v":
		var want any
		l, isList := node.([]any)
		if !isList || json.Unmarshal([]byte(arg), &want) != nil {
			return nil, nil, false
		}
		for i, e := range l {
			if jsonEqual(e, want) {
				return e, i, true
			}
		}
	}
	return nil, nil, false
}

func hasKeys(m, keys map[string]any) bool {
	for k, want := range keys {
		if !jsonEqual(m[k], want) {
			return false
		}
	}
	return true
}

// jsonEqual compares values as JSON, so int64 and float64 forms of the same
// number are equal.
func jsonEqual(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return reflect.DeepEqual(a, b)
	}
	return string(ja) == string(jb)
}
