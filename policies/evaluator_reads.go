package policies

// Converting the object under review into OPA's values is about a third of
// a review, and GC of what it allocates a good part of the rest. The
// built-in rules read little of it: a Deployment's kind, API version, name,
// namespace and replicas, and its containers' names and images, not their
// environment, ports, probes or resources. So the Evaluator converts only
// the parts of the object that the rules of the kind's query can read.
//
// Which parts those are is computed from the compiled rules, not declared,
// so that a rule that starts reading a field keeps it without anyone
// remembering a list. readsOf follows every reference that starts at
// input.object through local variables, rules and function calls (with
// the constant arguments of each call) and records, as a tree of paths
// (a reads), what each use needs:
//
//   - a reference or variable used whole (compared, passed to a builtin,
//     reported in a message, iterated by a comprehension) needs everything
//     under its path;
//   - a reference needs its path to exist, with the type of its value; a
//     variable bound to it needs nothing more by itself: its uses decide;
//   - a type test (is_object and the like) needs the value to exist with
//     its type, which a pruned object or array keeps;
//   - object.get(x, "k", d) is a reference x.k that may be missing;
//   - `input.object != input.application` compares the whole object with
//     the Application; the Evaluator prunes only when the answer is the same
//     for the pruned object (prunable, builtinInput).
//
// A variable in a path (iteration, a computed key) keeps every key at that
// level; arrays always keep all their elements. Anything the analysis does
// not know (bare `input`, `with`, a reference to a package, an unknown term)
// makes it give up, and the object is converted whole.
// TestKindQueriesMatchFullQuery compares decisions on pruned and whole
// objects over a corpus of every kind and random mutants of it.

// reads is a tree of the paths of a document that rules read.
type reads struct {
	// whole is set when everything under this node is read.
	whole bool
	// keys are the object keys read by name.
	keys map[string]*reads
	// any is what is read under every key of an object and every element of
	// an array (a path step that is not a constant string).
	any *reads
}

// child returns the node of key k (any when wildcard), creating it.
func (r *reads) child(k string, wildcard bool) *reads {
	if wildcard {
		if r.any == nil {
			r.any = &reads{}
		}
		return r.any
	}
	if r.keys == nil {
		r.keys = map[string]*reads{}
	}
	c := r.keys[k]
	if c == nil {
		c = &reads{}
		r.keys[k] = c
	}
	return c
}

// at returns the node at path p, creating it.
func (r *reads) at(p path) *reads {
	n := r
	for _, s := range p {
		n = n.child(s.key, s.wildcard)
	}
	return n
}

// merge adds what o reads to r.
func (r *reads) merge(o *reads) {
	if o == nil || r.whole {
		return
	}
	if o.whole {
		*r = reads{whole: true}
		return
	}
	for k, c := range o.keys {
		r.child(k, false).merge(c)
	}
	if o.any != nil {
		r.child("", true).merge(o.any)
	}
}

// finish folds any into every named key, so that pruning looks a key up
// once, and drops what a whole node makes moot.
func (r *reads) finish() {
	if r.whole {
		r.keys, r.any = nil, nil
		return
	}
	if r.any != nil {
		r.any.finish()
		for _, c := range r.keys {
			c.merge(r.any)
		}
	}
	for _, c := range r.keys {
		c.finish()
	}
}

// forKey returns the node that applies to key k of an object; nil when k
// is not read.
func (r *reads) forKey(k string) *reads {
	if r.whole {
		return r
	}
	if c, ok := r.keys[k]; ok {
		return c
	}
	return r.any
}

// forElems returns the node that applies to the elements of an array.
func (r *reads) forElems() *reads {
	if r.whole {
		return r
	}
	if r.any != nil {
		return r.any
	}
	return &noReads
}

// noReads reads nothing under a value but keeps its type; allReads reads
// all of it.
var noReads, allReads = reads{}, reads{whole: true}

// step is one step of a path: a constant key or a wildcard.
type step struct {
	key      string
	wildcard bool
}

type path []step

func (p path) plus(q path) path {
	return append(append(make(path, 0, len(p)+len(q)), p...), q...)
}

// A root says where an origin's path starts.
type root int

const (
	rootObject      root = -1 // input.object
	rootApplication root = -2 // input.application
	// rootParam + i is the i-th parameter of the function being analysed.
	rootParam root = 0
)

// origin is a place a value comes from: a path under a root.
type origin struct {
	root root
	path path
}

// origins are the places a value may come from; nil for values that come
// from none (constants, builtin results).
type origins []origin

func (os origins) plus(p path) origins {
	if len(p) == 0 {
		return os
	}
	out := make(origins, len(os))
	for i, o := range os {
		out[i] = origin{root: o.root, path: o.path.plus(p)}
	}
	return out
}

// prunable reports whether in.Object may be converted pruned to r: there is
// an object, r does not read it whole, and it is not the Application, nor
// possibly equal to it (builtinInput checks the pruned object too).
func prunable(in Input, r *reads) bool {
	if r == nil || r.whole || in.Object == nil {
		return false
	}
	if len(in.Application) == 0 {
		return true
	}
	return !sameMap(in.Application, in.Object) && !mayEqual(in.Object, in.Application)
}
