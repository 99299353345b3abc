package policies

import (
	"encoding/json"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
)

// An Evaluator keeps the ast form of the Applications and AppProjects it
// was recently given (a documentCache), so that the objects of one
// Application, reviewed one Evaluate call at a time, do not convert the
// same two documents again and again. Callers hand in fresh maps (the
// webhook reads a copy from its informer cache per request) or reuse and
// modify theirs, so neither a map's identity nor its name says that its
// content is unchanged. An entry is therefore found by the document's kind,
// namespace and name, and used only after the map at hand has been
// compared, value by value, with a private copy of the document the entry
// was converted from: a walk without allocations, a fraction of the cost of
// converting. A document that changed converts again and replaces the
// entry; a stale entry is never used.
//
// Sharing the same ast values across evaluations also makes the keys of
// the evaluator's shared function cache (evaluator_cache.go) that hold an
// Application or an AppProject compare by pointer.

// defaultDocumentCacheEntries bounds the documents an Evaluator keeps.
const defaultDocumentCacheEntries = 256

// documentKey names a document: its kind, namespace and name.
type documentKey struct {
	kind, namespace, name string
}

// documentKeyOf returns the key of m; false when m has no name.
func documentKeyOf(m map[string]any) (documentKey, bool) {
	meta, _ := m["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if name == "" {
		return documentKey{}, false
	}
	kind, _ := m["kind"].(string)
	namespace, _ := meta["namespace"].(string)
	return documentKey{kind: kind, namespace: namespace, name: name}, true
}

// documentCache maps documents to their ast form. It is safe for concurrent
// use; its entries are never modified.
type documentCache struct {
	max int

	mu      sync.RWMutex
	entries map[documentKey]documentEntry
}

// documentEntry is a document's ast form and the document it was converted
// from: a private deep copy, which no caller can modify.
type documentEntry struct {
	doc   map[string]any
	value ast.Value
}

// newDocumentCache returns an empty cache holding at most max documents.
func newDocumentCache(max int) *documentCache {
	return &documentCache{max: max, entries: make(map[documentKey]documentEntry)}
}

// value returns the ast form of m: the kept one when m still equals the
// document it was converted from, else a fresh conversion, which it keeps.
// A nil cache converts every time.
func (c *documentCache) value(m map[string]any) (ast.Value, error) {
	if c == nil {
		return convert(m)
	}
	key, ok := documentKeyOf(m)
	if !ok {
		return convert(m)
	}
	c.mu.RLock()
	e, found := c.entries[key]
	c.mu.RUnlock()
	if found && sameJSON(m, e.doc) {
		return e.value, nil
	}
	v, err := convert(m)
	if err != nil {
		return nil, err
	}
	// A document holding Go types that copyJSON does not know (a
	// []string, say) is converted every time.
	doc, ok := copyJSON(m)
	if !ok {
		return v, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		for k := range c.entries { // any entry: Go randomizes the order
			delete(c.entries, k)
			break
		}
	}
	c.entries[key] = documentEntry{doc: doc.(map[string]any), value: v}
	return v, nil
}

// copyJSON returns a deep copy of x, decoded JSON: map[string]any, []any,
// string, bool, nil and numbers (float64, int64, int, uint64,
// json.Number). It reports false for any other Go type.
func copyJSON(x any) (any, bool) {
	switch x := x.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, v := range x {
			c, ok := copyJSON(v)
			if !ok {
				return nil, false
			}
			m[k] = c
		}
		return m, true
	case []any:
		s := make([]any, len(x))
		for i, v := range x {
			c, ok := copyJSON(v)
			if !ok {
				return nil, false
			}
			s[i] = c
		}
		return s, true
	case nil, string, bool, float64, int64, int, uint64, json.Number:
		return x, true
	}
	return nil, false
}

// sameJSON reports whether a equals b, a copy made by copyJSON: the same
// maps, lists and scalars of the same Go types. (Values equal as JSON but
// of other Go types, float64(1) and int64(1) say, convert alike but do not
// count as the same; they merely convert again.)
func sameJSON(a, b any) bool {
	return equalJSON(a, b, false)
}

// mayEqual reports whether a and b, decoded JSON, may be equal as OPA
// values: sameJSON, except that any two numbers may be equal (OPA compares
// 3 and 3.0 by value).
func mayEqual(a, b any) bool {
	return equalJSON(a, b, true)
}

// equalJSON is sameJSON, or mayEqual when anyNumbers is set.
func equalJSON(a, b any, anyNumbers bool) bool {
	if anyNumbers && isNumber(a) && isNumber(b) {
		return true
	}
	switch a := a.(type) {
	case map[string]any:
		m, ok := b.(map[string]any)
		if !ok || len(m) != len(a) {
			return false
		}
		for k, v := range a {
			w, ok := m[k]
			if !ok || !equalJSON(v, w, anyNumbers) {
				return false
			}
		}
		return true
	case []any:
		s, ok := b.([]any)
		if !ok || len(s) != len(a) {
			return false
		}
		for i, v := range a {
			if !equalJSON(v, s[i], anyNumbers) {
				return false
			}
		}
		return true
	case string:
		s, ok := b.(string)
		return ok && s == a
	case bool:
		v, ok := b.(bool)
		return ok && v == a
	case nil:
		return b == nil
	case float64:
		v, ok := b.(float64)
		return ok && v == a
	case int64:
		v, ok := b.(int64)
		return ok && v == a
	case int:
		v, ok := b.(int)
		return ok && v == a
	case uint64:
		v, ok := b.(uint64)
		return ok && v == a
	case json.Number:
		v, ok := b.(json.Number)
		return ok && v == a
	}
	return false
}

// contextCache keeps the ast form of the review contexts an Evaluator has
// seen: a handful (enforcement point, Argo CD namespace, two flags), shared
// by every review. Contexts listing existing Applications are not kept. It
// is safe for concurrent use; its values are never modified.
type contextCache struct {
	mu     sync.RWMutex
	values map[contextKey]ast.Value
	// protected is the evaluator's protected namespaces, the same in every
	// context (see contextValue).
	protected *ast.Term
}

// maxContexts bounds a contextCache; it starts over when full.
const maxContexts = 64

// contextKey is what a Context without existing Applications holds, its
// Argo CD namespace defaulted.
type contextKey struct {
	point                      EnforcementPoint
	namespace                  string
	clusterScoped, scaledByHPA bool
}

// newContextCache returns an empty cache of contexts that carry the
// protected namespaces.
func newContextCache(protected *ast.Term) *contextCache {
	return &contextCache{values: make(map[contextKey]ast.Value), protected: protected}
}

// value returns contextValue(ctx, defaultNS), kept from an earlier call
// when it can be. A nil cache converts every time.
func (c *contextCache) value(ctx Context, defaultNS string) (ast.Value, error) {
	if c == nil {
		return contextValue(ctx, defaultNS, nil)
	}
	if len(ctx.ExistingApplications) > 0 {
		return contextValue(ctx, defaultNS, c.protected)
	}
	key := contextKey{point: ctx.EnforcementPoint, namespace: ctx.ArgoCDNamespace, clusterScoped: ctx.ClusterScoped, scaledByHPA: ctx.ScaledByHPA}
	if key.namespace == "" {
		key.namespace = defaultNS
	}
	c.mu.RLock()
	v, ok := c.values[key]
	c.mu.RUnlock()
	if ok {
		return v, nil
	}
	v, err := contextValue(ctx, defaultNS, c.protected)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.values) >= maxContexts {
		clear(c.values)
	}
	c.values[key] = v
	return v, nil
}

// isNumber reports whether x is a decoded JSON number.
func isNumber(x any) bool {
	switch x.(type) {
	case float64, float32, int, int64, int32, uint64, uint32, json.Number:
		return true
	}
	return false
}
