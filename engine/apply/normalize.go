package apply

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Limits of a diff summary.
const (
	maxSummaryPaths = 8
	maxSummaryValue = 40
)

// noiseMetadata are metadata fields that differ between a live object and a
// dry-run result without being drift.
var noiseMetadata = []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink"}

// stripNoise removes status and server-maintained metadata in place.
func stripNoise(obj map[string]any) {
	delete(obj, "status")
	if md, ok := obj["metadata"].(map[string]any); ok {
		for _, k := range noiseMetadata {
			delete(md, k)
		}
	}
}

// removePaths deletes paths from obj in place. Duplicates are dropped and
// paths are removed in descending order, so that removing one list item does
// not shift the index of another path.
func removePaths(obj map[string]any, paths []fieldPath) {
	paths = slices.Clone(paths)
	slices.SortFunc(paths, func(a, b fieldPath) int { return comparePaths(b, a) })
	paths = slices.CompactFunc(paths, func(a, b fieldPath) bool { return comparePaths(a, b) == 0 })
	for _, p := range paths {
		removeAt(obj, p)
	}
}

func comparePaths(a, b fieldPath) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareSteps(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func compareSteps(a, b any) int {
	ai, aInt := a.(int)
	bi, bInt := b.(int)
	switch {
	case aInt && bInt:
		return cmp.Compare(ai, bi)
	case aInt:
		return -1
	case bInt:
		return 1
	}
	return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// removeAt removes the value at p below node and returns the new node
// (a list shrinks into a new slice).
func removeAt(node any, p fieldPath) any {
	if len(p) == 0 {
		return node
	}
	switch c := node.(type) {
	case map[string]any:
		k, ok := p[0].(string)
		if !ok {
			return node
		}
		child, exists := c[k]
		if !exists {
			return node
		}
		if len(p) == 1 {
			delete(c, k)
		} else {
			c[k] = removeAt(child, p[1:])
		}
		return c
	case []any:
		i, ok := p[0].(int)
		if !ok || i < 0 || i >= len(c) {
			return node
		}
		if len(p) == 1 {
			return append(c[:i:i], c[i+1:]...)
		}
		c[i] = removeAt(c[i], p[1:])
		return c
	}
	return node
}

// getPath returns the value at p in obj.
func getPath(obj map[string]any, p fieldPath) (any, bool) {
	var cur any = obj
	for _, s := range p {
		switch c := cur.(type) {
		case map[string]any:
			k, ok := s.(string)
			if !ok {
				return nil, false
			}
			if cur, ok = c[k]; !ok {
				return nil, false
			}
		case []any:
			i, ok := s.(int)
			if !ok || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// setPath sets the value at p in obj, creating missing maps (not list
// items). It reports whether it could.
func setPath(obj map[string]any, p fieldPath, v any) bool {
	if len(p) == 0 {
		return false
	}
	var cur any = obj
	for i, s := range p {
		last := i == len(p)-1
		switch c := cur.(type) {
		case map[string]any:
			k, ok := s.(string)
			if !ok {
				return false
			}
			if last {
				c[k] = v
				return true
			}
			next, exists := c[k]
			if !exists {
				if _, isIndex := p[i+1].(int); isIndex {
					return false
				}
				next = map[string]any{}
				c[k] = next
			}
			cur = next
		case []any:
			idx, ok := s.(int)
			if !ok || idx < 0 || idx >= len(c) {
				return false
			}
			if last {
				c[idx] = v
				return true
			}
			cur = c[idx]
		default:
			return false
		}
	}
	return false
}

// change is one differing path between live and desired.
type change struct {
	path        fieldPath
	live, want  any
	inLive, inW bool
}

// diffValues appends the paths where live and want differ.
func diffValues(live, want any, p fieldPath, out *[]change) {
	lm, lIsMap := live.(map[string]any)
	wm, wIsMap := want.(map[string]any)
	if lIsMap && wIsMap {
		keys := make([]string, 0, len(lm)+len(wm))
		for k := range lm {
			keys = append(keys, k)
		}
		for k := range wm {
			if _, ok := lm[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			lv, inL := lm[k]
			wv, inW := wm[k]
			cp := append(slices.Clone(p), k)
			if !inL || !inW {
				*out = append(*out, change{path: cp, live: lv, want: wv, inLive: inL, inW: inW})
				continue
			}
			diffValues(lv, wv, cp, out)
		}
		return
	}
	ll, lIsList := live.([]any)
	wl, wIsList := want.([]any)
	if lIsList && wIsList {
		for i := 0; i < max(len(ll), len(wl)); i++ {
			cp := append(slices.Clone(p), i)
			switch {
			case i >= len(ll):
				*out = append(*out, change{path: cp, want: wl[i], inW: true})
			case i >= len(wl):
				*out = append(*out, change{path: cp, live: ll[i], inLive: true})
			default:
				diffValues(ll[i], wl[i], cp, out)
			}
		}
		return
	}
	if !reflect.DeepEqual(live, want) && !jsonEqual(live, want) {
		*out = append(*out, change{path: p, live: live, want: want, inLive: true, inW: true})
	}
}

// summarize renders changes for people: paths, and short values unless
// redact is set (Secrets).
func summarize(changes []change, redact bool) string {
	var parts []string
	for i, c := range changes {
		if i == maxSummaryPaths {
			parts = append(parts, fmt.Sprintf("and %d more", len(changes)-i))
			break
		}
		path := c.path.String()
		switch {
		case !c.inLive:
			parts = append(parts, path+": added")
		case !c.inW:
			parts = append(parts, path+": removed")
		case redact || !isScalar(c.live) || !isScalar(c.want):
			parts = append(parts, path+": changed")
		default:
			parts = append(parts, fmt.Sprintf("%s: %s → %s", path, short(c.live), short(c.want)))
		}
	}
	return strings.Join(parts, "; ")
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	r := []rune(string(b))
	if len(r) > maxSummaryValue {
		return string(r[:maxSummaryValue-1]) + "…"
	}
	return string(r)
}
