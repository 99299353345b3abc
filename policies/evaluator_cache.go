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
// functions keep using a fresh cache per evaluation. The Evaluator's policies
// never change, so a shared result stays valid for the Evaluator's life; the
// cache is bounded and starts over when full.

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

func (s *sharedCache) put(key ast.Ref, value *ast.Term) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries >= s.max {
		s.values = topdown.NewVirtualCache()
		s.entries = 0
	}
	s.values.Put(key, value)
	s.entries++
}

// evalCache is the topdown.VirtualCache of one evaluation: calls of shared
// functions go to the shared cache, everything else to a cache of its own.
// While a `with` statement is in effect (a pushed frame), everything stays
// local, since `with` may replace a function.
type evalCache struct {
	shared *sharedCache
	local  topdown.VirtualCache
	frames int
}

// newEvalCache returns the cache for one evaluation; shared may be nil.
func newEvalCache(shared *sharedCache) *evalCache {
	return &evalCache{shared: shared, local: topdown.NewVirtualCache()}
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
