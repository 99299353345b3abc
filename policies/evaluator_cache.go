package policies

import (
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// OPA caches the value of each rule and each function call for the length of
// one evaluation. Across evaluations nothing is kept, so every object an
// Application renders recomputes the same facts about that Application and
// its AppProject: whether its destination is permitted, which resource kinds
// the project lists, whether an image reference is pinned.
//
// Many of the built-in functions are pure: their value depends on their
// arguments alone (they read no input, use no `with`, call no
// non-deterministic builtin, and depend only on rules and functions that are
// pure too). The Evaluator keeps the results of such calls in a cache shared
// by all its evaluations, keyed by the function and its argument values as
// OPA keys its own per-evaluation cache. Rules (which read input) and impure
// functions keep using a fresh cache per evaluation (a localCache, lighter
// than OPA's). The Evaluator's policies never change, so a shared result
// stays valid for the Evaluator's life; the cache is bounded and starts over
// when full.

// defaultSharedCacheEntries bounds the shared function cache.
const defaultSharedCacheEntries = 8192

// sharedFunctions returns the paths (e.g. "data.tollgate.lib.image_pinned")
// of the pure functions of c that a rule or an impure function calls: their
// calls go to the shared cache. A pure function that only other pure
// functions call is left out: its callers' results are shared already, and
// caching every step of a chain costs more on a first evaluation than it
// saves.
func sharedFunctions(c *ast.Compiler) map[string]bool {
	pure := pureFunctions(c)
	shared := map[string]bool{}
	for _, m := range c.Modules {
		ast.WalkRules(m, func(r *ast.Rule) bool {
			if len(r.Head.Args) == 0 || r.Module == nil {
				return false
			}
			path := r.Ref().String()
			if !pure[path] {
				return false
			}
			for dep := range c.Graph.Dependents(r) {
				caller, ok := dep.(*ast.Rule)
				if !ok || caller.Module == nil || len(caller.Head.Args) == 0 || !pure[caller.Ref().String()] {
					shared[path] = true
				}
			}
			return false
		})
	}
	return shared
}

// pureFunctions returns the paths of the functions in c whose every
// definition is pure.
func pureFunctions(c *ast.Compiler) map[string]bool {
	impure := map[*ast.Rule]bool{}
	var visit func(r *ast.Rule) bool
	visit = func(r *ast.Rule) bool {
		if v, ok := impure[r]; ok {
			return v
		}
		// Rego forbids recursion; should a cycle appear anyway, the rule
		// counts as impure while it is being visited.
		impure[r] = true
		bad := impureItself(r)
		for dep := range c.Graph.Dependencies(r) {
			if bad {
				break
			}
			d, ok := dep.(*ast.Rule)
			bad = !ok || visit(d)
		}
		impure[r] = bad
		return bad
	}
	pure := map[string]bool{}
	for _, m := range c.Modules {
		ast.WalkRules(m, func(r *ast.Rule) bool {
			if len(r.Head.Args) == 0 || r.Module == nil {
				return false
			}
			path := r.Ref().String()
			ok := !visit(r)
			if prev, seen := pure[path]; seen {
				ok = ok && prev
			}
			pure[path] = ok
			return false
		})
	}
	return pure
}

// impureItself reports whether r, not counting the rules it depends on,
// reads input, uses `with`, or calls a non-deterministic builtin.
func impureItself(r *ast.Rule) bool {
	found := false
	ast.WalkTerms(r, func(t *ast.Term) bool {
		switch v := t.Value.(type) {
		case ast.Ref:
			found = found || v.HasPrefix(ast.InputRootRef) || nondeterministic(v)
		case ast.Var:
			found = found || v.Equal(ast.InputRootDocument.Value)
		}
		return found
	})
	if found {
		return true
	}
	ast.WalkExprs(r, func(e *ast.Expr) bool {
		found = found || len(e.With) > 0
		return found
	})
	return found
}

// nondeterministic reports whether ref names a non-deterministic builtin.
func nondeterministic(ref ast.Ref) bool {
	b, ok := ast.BuiltinMap[ref.String()]
	return ok && b.Nondeterministic
}

// sharedCache holds the results of pure function calls for all evaluations
// of one Evaluator. It is safe for concurrent use.
type sharedCache struct {
	// functions are the paths of the functions whose calls are shared.
	functions map[string]bool
	max       int

	// isShared memoizes functions by the *ast.Term of a call's operator:
	// the compiled policies hand OPA the same terms on every evaluation.
	isShared sync.Map

	mu      sync.RWMutex
	values  topdown.VirtualCache
	entries int
}

// newSharedCache returns an empty cache for the shared functions of c (see
// sharedFunctions), holding at most max results.
func newSharedCache(c *ast.Compiler, max int) *sharedCache {
	return &sharedCache{functions: sharedFunctions(c), max: max, values: topdown.NewVirtualCache()}
}

// holds reports whether key, a cache key from OPA, is a call of a shared
// function: its first term is the function's ref, the others its arguments.
func (s *sharedCache) holds(key ast.Ref) bool {
	if len(key) == 0 {
		return false
	}
	op := key[0]
	ref, ok := op.Value.(ast.Ref)
	if !ok {
		return false // a rule's ref starts with the data var
	}
	if v, ok := s.isShared.Load(op); ok {
		return v.(bool)
	}
	shared := s.functions[ref.String()]
	s.isShared.Store(op, shared)
	return shared
}

func (s *sharedCache) get(key ast.Ref) *ast.Term {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, _ := s.values.Get(key)
	return v
}

// put keeps value for key. The scalar terms of key and value are copied
// first: a term of a converted input lives in an array with the rest of
// its document (evaluator_convert.go), which the cache would otherwise keep
// alive.
func (s *sharedCache) put(key ast.Ref, value *ast.Term) {
	own := make(ast.Ref, len(key))
	for i, t := range key {
		own[i] = detach(t)
	}
	value = detach(value)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries >= s.max {
		s.values = topdown.NewVirtualCache()
		s.entries = 0
	}
	s.values.Put(own, value)
	s.entries++
}

// detach returns a copy of t when it holds a scalar, else t.
func detach(t *ast.Term) *ast.Term {
	switch t.Value.(type) {
	case ast.String, ast.Number, ast.Boolean, ast.Null:
		return &ast.Term{Value: t.Value}
	}
	return t
}

// evalCache is the topdown.VirtualCache of one evaluation: calls of shared
// functions go to the shared cache, everything else to a cache of its own.
// While a `with` statement is in effect (a pushed frame), everything stays
// local, since `with` may replace a function.
type evalCache struct {
	shared *sharedCache
	local  localCache
	frames int
}

// newEvalCache returns the cache for one evaluation; shared may be nil.
func newEvalCache(shared *sharedCache) *evalCache {
	c := &evalCache{shared: shared}
	c.local.init()
	return c
}

// evalCaches recycles the caches of finished evaluations: OPA holds on to
// an evaluation's cache only until Eval returns, and hands back results
// converted to Go values.
var evalCaches = sync.Pool{New: func() any { return new(evalCache) }}

// getEvalCache is newEvalCache from the pool; give the cache back with
// release once the evaluation has returned.
func getEvalCache(shared *sharedCache) *evalCache {
	c := evalCaches.Get().(*evalCache)
	c.shared = shared
	c.local.init()
	return c
}

// release empties c, so that it keeps no values alive, and returns it to
// the pool.
func (c *evalCache) release() {
	c.local.reset()
	c.shared, c.frames = nil, 0
	evalCaches.Put(c)
}

func (c *evalCache) routed(ref ast.Ref) bool {
	return c.shared != nil && c.frames == 0 && c.shared.holds(ref)
}

// Push implements topdown.VirtualCache.
func (c *evalCache) Push() {
	c.frames++
	c.local.Push()
}

// Pop implements topdown.VirtualCache.
func (c *evalCache) Pop() {
	c.frames--
	c.local.Pop()
}

// Get implements topdown.VirtualCache.
func (c *evalCache) Get(ref ast.Ref) (*ast.Term, bool) {
	if c.routed(ref) {
		return c.shared.get(ref), false
	}
	return c.local.Get(ref)
}

// Put implements topdown.VirtualCache. OPA records only defined results of
// function calls; an undefined one (nil) is kept locally.
func (c *evalCache) Put(ref ast.Ref, value *ast.Term) {
	if value != nil && c.routed(ref) {
		c.shared.put(ref, value)
		return
	}
	c.local.Put(ref, value)
}

// Keys implements topdown.VirtualCache: the keys of this evaluation's own
// cache.
func (c *evalCache) Keys() []ast.Ref {
	return c.local.Keys()
}

// localCache is the cache of one evaluation's own results: the value of
// each rule and of each function call that is not shared. OPA's
// topdown.NewVirtualCache is a trie with a hash map per ref element, a few
// allocations for every value it keeps. One review keeps a dozen or two
// values, so localCache keeps them in a list, found by the ref's hash, with
// room for the common case inside the evalCache, which evaluations recycle
// (no allocation at all).
// Like OPA's cache it answers from the top frame only. It is not safe for
// concurrent use (neither is an evaluation).
type localCache struct {
	// entries are the cached values, the top frame's from bases' last
	// element on.
	entries []localEntry
	bases   []int
	// terms holds the copies of the entries' refs.
	terms []*ast.Term

	inlineEntries [12]localEntry
	inlineTerms   [48]*ast.Term
}

// localEntry is a cached value or the mark of an undefined result. As in
// OPA's cache, the mark, once set, stays.
type localEntry struct {
	hash      int
	key       ast.Ref
	value     *ast.Term
	undefined bool
}

// init points the lists at the room inside c.
func (c *localCache) init() {
	c.entries = c.inlineEntries[:0]
	c.terms = c.inlineTerms[:0]
}

// reset drops every entry of c.
func (c *localCache) reset() {
	clear(c.inlineEntries[:])
	clear(c.inlineTerms[:])
	c.entries, c.terms, c.bases = nil, nil, c.bases[:0]
}

// top returns the entries of the top frame.
func (c *localCache) top() []localEntry {
	if n := len(c.bases); n > 0 {
		return c.entries[c.bases[n-1]:]
	}
	return c.entries
}

// find returns the top frame's entry for ref, or nil.
func (c *localCache) find(ref ast.Ref, hash int) *localEntry {
	top := c.top()
	for i := len(top) - 1; i >= 0; i-- {
		if e := &top[i]; e.hash == hash && ast.RefEqual(e.key, ref) {
			return e
		}
	}
	return nil
}

// Push implements topdown.VirtualCache.
func (c *localCache) Push() {
	c.bases = append(c.bases, len(c.entries))
}

// Pop implements topdown.VirtualCache.
func (c *localCache) Pop() {
	n := len(c.bases) - 1
	clear(c.entries[c.bases[n]:])
	c.entries = c.entries[:c.bases[n]]
	c.bases = c.bases[:n]
}

// Get implements topdown.VirtualCache.
func (c *localCache) Get(ref ast.Ref) (*ast.Term, bool) {
	if e := c.find(ref, ref.Hash()); e != nil {
		if e.undefined {
			return nil, true
		}
		return e.value, false
	}
	return nil, false
}

// Put implements topdown.VirtualCache: a nil value marks ref undefined.
// OPA may reuse the slice of ref after the call, so the entry keeps a copy
// of it (the terms are not modified).
func (c *localCache) Put(ref ast.Ref, value *ast.Term) {
	hash := ref.Hash()
	e := c.find(ref, hash)
	if e == nil {
		if cap(c.terms)-len(c.terms) < len(ref) {
			// Earlier keys keep the old array.
			c.terms = make([]*ast.Term, 0, max(len(c.inlineTerms), len(ref)))
		}
		start := len(c.terms)
		c.terms = append(c.terms, ref...)
		c.entries = append(c.entries, localEntry{hash: hash, key: c.terms[start:len(c.terms):len(c.terms)]})
		e = &c.entries[len(c.entries)-1]
	}
	if value != nil {
		e.value = value
	} else {
		e.undefined = true
	}
}

// Keys implements topdown.VirtualCache: the refs given a value in the top
// frame (as in OPA's cache, even if marked undefined since).
func (c *localCache) Keys() []ast.Ref {
	var keys []ast.Ref
	for _, e := range c.top() {
		if e.value != nil {
			keys = append(keys, e.key)
		}
	}
	return keys
}
