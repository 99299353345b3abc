package policies

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// The analyzer walks the compiled built-in rules and computes what each
// reads of input.object (see reads, in evaluator_reads.go); for the user
// policies, whose input is the object itself, what they read of input.

// ruleSummary is what a rule or a function reads and what its value is.
type ruleSummary struct {
	// object is what it reads of input.object.
	object reads
	// params is what a function reads of each parameter.
	params []reads
	// value is where its value comes from.
	value origins
}

// analyzer computes the reads of the built-in rules.
type analyzer struct {
	compiler *ast.Compiler
	// user: the input is the object (the user policies'), not the
	// built-in rules' input with the object at input.object.
	user bool
	// kind is the kind of input.object, "" when not known. A body that
	// requires another kind (ruleKinds) fails before it matters, so its
	// reads are left out.
	kind      string
	summaries map[string]*ruleSummary
	// active guards against a rule that depends on itself (Rego forbids
	// it; the analysis gives up rather than loop).
	active map[string]bool
	// failed is the first construct the analysis does not know.
	failed error
}

// scope is the analysis state of one body.
type scope struct {
	sum    *ruleSummary
	vars   map[ast.Var]origins
	consts map[ast.Var]ast.Value
	bound  map[ast.Var]bool
}

// newScope returns the scope of a rule body that builds sum.
func newScope(sum *ruleSummary) *scope {
	return &scope{sum: sum, vars: map[ast.Var]origins{}, consts: map[ast.Var]ast.Value{}, bound: map[ast.Var]bool{}}
}

// child returns the scope of a comprehension body inside s.
func (s *scope) child() *scope {
	return &scope{sum: s.sum, vars: maps.Clone(s.vars), consts: maps.Clone(s.consts), bound: maps.Clone(s.bound)}
}

// readsOf returns what the violation rules of the named built-in packages
// read of an input.object of the given kind ("" for any kind); nil when the
// analysis gave up (convert the whole object).
func readsOf(compiler *ast.Compiler, pkgs []string, kind string) (*reads, error) {
	a := &analyzer{compiler: compiler, kind: kind, summaries: map[string]*ruleSummary{}, active: map[string]bool{}}
	out := &reads{}
	for _, pkg := range pkgs {
		ref := builtinPackagesRef.Append(ast.StringTerm(pkg)).Append(ast.StringTerm("violation"))
		// Every rule under the reference: violation rules with longer
		// reference heads too.
		s := a.summarise(ref.String(), compiler.GetRulesWithPrefix(ref), nil)
		if a.failed != nil {
			return nil, a.failed
		}
		out.merge(&s.object)
	}
	out.finish()
	return out, nil
}

// userReads returns what the user rules read of their input, the object
// under review; nil when the analysis gave up (convert the whole object).
// A rule's value is the result: read whole.
func userReads(compiler *ast.Compiler, rules []userRule) *reads {
	a := &analyzer{compiler: compiler, user: true, summaries: map[string]*ruleSummary{}, active: map[string]bool{}}
	out := &reads{}
	for _, r := range rules {
		s := a.summarise(r.ref.String(), compiler.GetRulesWithPrefix(r.ref), nil)
		for _, o := range s.value {
			a.need(newScope(s), o, true)
		}
		if a.failed != nil {
			return nil
		}
		out.merge(&s.object)
	}
	out.finish()
	return out
}

func (a *analyzer) fail(format string, args ...any) {
	if a.failed == nil {
		a.failed = fmt.Errorf(format, args...)
	}
}

// rule returns the ruleSummary of the rules at ref (not functions).
func (a *analyzer) rule(ref ast.Ref) *ruleSummary {
	return a.summarise(ref.String(), a.rulesAt(ref), nil)
}

// rulesAt returns the rules of exactly ref. Rules further under ref (with
// longer reference heads) would make ref's value an object the analysis
// does not follow: it gives up.
func (a *analyzer) rulesAt(ref ast.Ref) []*ast.Rule {
	rules := a.compiler.GetRulesExact(ref)
	if len(rules) > 0 && len(a.compiler.GetRulesWithPrefix(ref)) != len(rules) {
		a.fail("%v: rules under a rule", ref)
	}
	return rules
}

// function returns the ruleSummary of the function at ref called with the
// given constant arguments (nil where the argument is not constant).
func (a *analyzer) function(ref ast.Ref, consts []ast.Value) *ruleSummary {
	var key strings.Builder
	key.WriteString(ref.String())
	for _, c := range consts {
		key.WriteByte('|')
		if c != nil {
			key.WriteString(c.String())
		}
	}
	return a.summarise(key.String(), a.rulesAt(ref), consts)
}

// summarise analyses every definition of a rule or function (with its
// else chain) once per key.
func (a *analyzer) summarise(key string, rules []*ast.Rule, consts []ast.Value) *ruleSummary {
	if s, ok := a.summaries[key]; ok {
		return s
	}
	s := &ruleSummary{params: make([]reads, len(consts))}
	if a.active[key] {
		a.fail("%s depends on itself", key)
		return s
	}
	a.active[key] = true
	defer delete(a.active, key)
	for _, r := range rules {
		for ; r != nil; r = r.Else {
			if a.kind != "" {
				if kinds := ruleKinds(r); kinds != nil && !slices.Contains(kinds, a.kind) {
					continue
				}
			}
			a.definition(s, r, consts)
		}
	}
	a.summaries[key] = s
	return s
}

// definition analyses one rule or function definition into s.
func (a *analyzer) definition(s *ruleSummary, r *ast.Rule, consts []ast.Value) {
	sc := newScope(s)
	if len(r.Head.Args) != len(consts) {
		a.fail("%s: called with %d arguments, defined with %d", r.Head.Ref(), len(consts), len(r.Head.Args))
		return
	}
	for i, arg := range r.Head.Args {
		v, ok := arg.Value.(ast.Var)
		if !ok {
			// A pattern in the head compares the argument.
			s.params[i].whole = true
			continue
		}
		sc.bound[v] = true
		if consts[i] != nil {
			sc.consts[v] = consts[i]
			continue
		}
		sc.vars[v] = origins{{root: rootParam + root(i)}}
	}
	a.body(sc, r.Body)
	if r.Head.Key != nil {
		a.use(sc, r.Head.Key)
		if r.Head.Value != nil {
			a.use(sc, r.Head.Value)
		}
		return
	}
	if r.Head.Value != nil {
		s.value = append(s.value, a.value(sc, r.Head.Value)...)
	}
}

// body analyses the expressions of a body in order.
func (a *analyzer) body(sc *scope, body ast.Body) {
	for _, expr := range body {
		a.expr(sc, expr)
		ast.WalkVars(expr, func(v ast.Var) bool {
			sc.bound[v] = true
			return false
		})
	}
}

func (a *analyzer) expr(sc *scope, expr *ast.Expr) {
	if len(expr.With) > 0 {
		a.fail("%v: with", expr)
		return
	}
	switch terms := expr.Terms.(type) {
	case *ast.Term:
		a.use(sc, terms)
	case []*ast.Term:
		a.call(sc, expr.Operator(), terms[1:])
	default:
		a.fail("%v: unknown expression", expr)
	}
}

// call analyses a call of op with args (the last one may be the output).
func (a *analyzer) call(sc *scope, op ast.Ref, args []*ast.Term) {
	name := op.String()
	switch name {
	case ast.Equality.Name:
		a.unify(sc, args[0], args[1])
		return
	case ast.Equal.Name, ast.NotEqual.Name:
		if a.objectVersusApplication(sc, args[0], args[1]) {
			return
		}
	case "is_object", "is_array", "is_string", "is_number", "is_boolean", "is_null", "is_set", "type_name":
		for _, o := range a.value(sc, args[0]) {
			a.need(sc, o, false)
		}
		return
	case "object.get":
		if len(args) >= 3 {
			if p, ok := constPath(args[1]); ok {
				from := a.value(sc, args[0])
				for _, o := range from {
					a.need(sc, o, false)
				}
				a.use(sc, args[2])
				if len(args) == 4 {
					a.bind(sc, args[3], from.plus(p))
				}
				return
			}
		}
	}
	if ast.BuiltinMap[name] != nil {
		for _, arg := range args {
			a.use(sc, arg)
		}
		return
	}
	rules := a.rulesAt(op)
	if len(rules) == 0 || len(rules[0].Head.Args) == 0 {
		a.fail("call of %s: not a builtin or a function", name)
		return
	}
	n := len(rules[0].Head.Args)
	if len(args) < n || len(args) > n+1 {
		a.fail("call of %s with %d arguments", name, len(args))
		return
	}
	consts := make([]ast.Value, n)
	from := make([]origins, n)
	for i, arg := range args[:n] {
		consts[i] = a.constant(sc, arg)
		from[i] = a.value(sc, arg)
	}
	s := a.function(op, consts)
	sc.sum.object.merge(&s.object)
	for i := range s.params {
		for _, o := range from[i] {
			a.needReads(sc, o, &s.params[i])
		}
	}
	var out origins
	for _, o := range s.value {
		if o.root >= rootParam {
			out = append(out, from[int(o.root)].plus(o.path)...)
			continue
		}
		out = append(out, o)
	}
	if len(args) == n+1 {
		a.bind(sc, args[n], out)
		return
	}
	// A call without an output tests its value.
	for _, o := range out {
		a.need(sc, o, true)
	}
}

// objectVersusApplication reports whether x and y are input.object and
// input.application, the comparison prunedForRules keeps true to the whole
// object.
func (a *analyzer) objectVersusApplication(sc *scope, x, y *ast.Term) bool {
	is := func(t *ast.Term, r root) bool {
		os := a.value(sc, t)
		return len(os) == 1 && os[0].root == r && len(os[0].path) == 0
	}
	return (is(x, rootObject) && is(y, rootApplication)) || (is(y, rootObject) && is(x, rootApplication))
}

// unify analyses x = y: a binding of the side that is a fresh variable (or
// a pattern of fresh variables), else a comparison.
func (a *analyzer) unify(sc *scope, x, y *ast.Term) {
	for _, pair := range [2][2]*ast.Term{{x, y}, {y, x}} {
		lhs, rhs := pair[0], pair[1]
		if v, ok := lhs.Value.(ast.Var); ok && !sc.bound[v] {
			if c := a.constant(sc, rhs); c != nil {
				sc.consts[v] = c
			}
			a.bind(sc, lhs, a.value(sc, rhs))
			return
		}
	}
	for _, pair := range [2][2]*ast.Term{{x, y}, {y, x}} {
		lhs, rhs := pair[0], pair[1]
		if isPatternOfFreshVars(sc, lhs) {
			a.bind(sc, lhs, a.value(sc, rhs).plus(path{{wildcard: true}}))
			return
		}
	}
	a.use(sc, x)
	a.use(sc, y)
}

// isPatternOfFreshVars reports whether t is an array of variables not
// bound yet, e.g. [ns, path] = ....
func isPatternOfFreshVars(sc *scope, t *ast.Term) bool {
	arr, ok := t.Value.(*ast.Array)
	if !ok || arr.Len() == 0 {
		return false
	}
	for i := range arr.Len() {
		v, ok := arr.Elem(i).Value.(ast.Var)
		if !ok || sc.bound[v] {
			return false
		}
	}
	return true
}

// bind records that the variables of t (a variable or an array pattern of
// them) hold values from os.
func (a *analyzer) bind(sc *scope, t *ast.Term, os origins) {
	switch v := t.Value.(type) {
	case ast.Var:
		sc.vars[v] = append(sc.vars[v], os...)
	case *ast.Array:
		for i := range v.Len() {
			a.bind(sc, v.Elem(i), os)
		}
	default:
		// A constant output: the value is compared.
		for _, o := range os {
			a.need(sc, o, true)
		}
	}
}

// use records that the whole value of t is read.
func (a *analyzer) use(sc *scope, t *ast.Term) {
	for _, o := range a.value(sc, t) {
		a.need(sc, o, true)
	}
}

// need records that o is read: whole, or only its existence and type.
func (a *analyzer) need(sc *scope, o origin, whole bool) {
	n := a.readsAt(sc, o)
	if n != nil && whole {
		*n = reads{whole: true}
	}
}

// needReads records that r is read under o.
func (a *analyzer) needReads(sc *scope, o origin, r *reads) {
	if n := a.readsAt(sc, o); n != nil {
		n.merge(r)
	}
}

// readsAt returns the node of o in the ruleSummary being built; nil for the
// Application, whose reads do not matter.
func (a *analyzer) readsAt(sc *scope, o origin) *reads {
	switch {
	case o.root == rootObject:
		return sc.sum.object.at(o.path)
	case o.root >= rootParam:
		return sc.sum.params[int(o.root)].at(o.path)
	}
	return nil
}

// constant returns t's value when it is a constant scalar (or a variable
// bound to one); nil otherwise.
func (a *analyzer) constant(sc *scope, t *ast.Term) ast.Value {
	switch v := t.Value.(type) {
	case ast.String, ast.Number, ast.Boolean, ast.Null:
		return v
	case ast.Var:
		return sc.consts[v]
	}
	return nil
}

// value returns where t's value comes from, recording what evaluating t
// reads on the way (a variable used as a key, the bodies of
// comprehensions).
func (a *analyzer) value(sc *scope, t *ast.Term) origins {
	switch v := t.Value.(type) {
	case ast.Var:
		return sc.vars[v]
	case ast.Ref:
		return a.ref(sc, v)
	case ast.String, ast.Number, ast.Boolean, ast.Null:
		return nil
	case *ast.Array:
		for i := range v.Len() {
			a.use(sc, v.Elem(i))
		}
		return nil
	case ast.Object:
		v.Foreach(func(k, x *ast.Term) {
			a.use(sc, k)
			a.use(sc, x)
		})
		return nil
	case ast.Set:
		v.Foreach(func(x *ast.Term) { a.use(sc, x) })
		return nil
	case *ast.ArrayComprehension:
		c := sc.child()
		a.body(c, v.Body)
		a.use(c, v.Term)
		return nil
	case *ast.SetComprehension:
		c := sc.child()
		a.body(c, v.Body)
		a.use(c, v.Term)
		return nil
	case *ast.ObjectComprehension:
		c := sc.child()
		a.body(c, v.Body)
		a.use(c, v.Key)
		a.use(c, v.Value)
		return nil
	}
	a.fail("unknown term %v", t)
	return nil
}

// ref returns where the value of ref comes from.
func (a *analyzer) ref(sc *scope, ref ast.Ref) origins {
	head, ok := ref[0].Value.(ast.Var)
	if !ok {
		a.fail("reference %v with a head that is not a variable", ref)
		return nil
	}
	switch {
	case head.Equal(ast.InputRootDocument.Value):
		if len(ref) < 2 {
			a.fail("bare input")
			return nil
		}
		if a.user {
			return a.exists(sc, origins{{root: rootObject, path: a.steps(sc, ref[1:])}})
		}
		key, ok := ref[1].Value.(ast.String)
		if !ok {
			a.fail("%v: computed key under input", ref)
			return nil
		}
		switch key {
		case "object":
			return a.exists(sc, origins{{root: rootObject, path: a.steps(sc, ref[2:])}})
		case "application":
			return origins{{root: rootApplication, path: a.steps(sc, ref[2:])}}
		}
		a.steps(sc, ref[2:])
		return nil
	case head.Equal(ast.DefaultRootDocument.Value):
		// The rules of the longest constant prefix.
		j := 1
		for j < len(ref) {
			if _, ok := ref[j].Value.(ast.String); !ok {
				break
			}
			j++
		}
		for i := j; i > 1; i-- {
			rules := a.rulesAt(ref[:i])
			if len(rules) == 0 {
				continue
			}
			if len(rules[0].Head.Args) > 0 {
				a.fail("%v: function used as a value", ref)
				return nil
			}
			s := a.rule(ref[:i])
			sc.sum.object.merge(&s.object)
			return a.exists(sc, s.value.plus(a.steps(sc, ref[i:])))
		}
		if len(a.compiler.GetRulesWithPrefix(ref[:j])) > 0 {
			a.fail("%v: reference to a package", ref)
		}
		a.steps(sc, ref[1:])
		return nil
	}
	return a.exists(sc, sc.vars[head].plus(a.steps(sc, ref[1:])))
}

// exists records that a reference to os reads whether each exists, and
// with what type: a reference is undefined where the path is missing, even
// when nothing uses its value (x := input.object.a fails without a).
func (a *analyzer) exists(sc *scope, os origins) origins {
	for _, o := range os {
		a.need(sc, o, false)
	}
	return os
}

// steps turns the terms of a reference after its head into a path.
func (a *analyzer) steps(sc *scope, terms []*ast.Term) path {
	p := make(path, len(terms))
	for i, t := range terms {
		if s, ok := t.Value.(ast.String); ok {
			p[i] = step{key: string(s)}
			continue
		}
		if s, ok := a.constant(sc, t).(ast.String); ok {
			p[i] = step{key: string(s)}
			continue
		}
		// A key computed from the object is read whole.
		a.use(sc, t)
		p[i] = step{wildcard: true}
	}
	return p
}

// constPath returns the path of object.get's key argument: a string or an
// array of strings.
func constPath(t *ast.Term) (path, bool) {
	switch v := t.Value.(type) {
	case ast.String:
		return path{{key: string(v)}}, true
	case *ast.Array:
		p := make(path, v.Len())
		for i := range v.Len() {
			s, ok := v.Elem(i).Value.(ast.String)
			if !ok {
				return nil, false
			}
			p[i] = step{key: string(s)}
		}
		return p, true
	}
	return nil, false
}
