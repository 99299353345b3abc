package policies

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Most built-in packages judge a few kinds only: no-plaintext-secret looks
// at Secrets, SealedSecrets, ExternalSecrets and Lists, the Application
// rules at Applications. OPA's rule index skips such a rule quickly, but
// the query over every package still visits each package, builds its empty
// violation set and binds its variables: about a tenth of a Deployment's
// review. So the Evaluator prepares the query once per kind the library
// names, over only the packages that can report on that kind, plus one
// query for every other kind.
//
// Which kinds a package can report on is read from the compiled rules, not
// declared: a violation rule whose body has, as one of its conjuncts (not
// negated, no `with`), `input.object.kind == "K"` or
// `input.object.kind in {"K1", ...}`, holds only for those kinds, since a
// body fails as soon as one conjunct does. A package reports only on the
// kinds its violation rules name if every one of them has such a guard;
// one rule without it makes the package run for every kind. Anything the
// analysis does not recognise keeps the package in every query, so it can
// only cost time, never a violation (TestKindQueriesMatchFullQuery compares
// the two over a corpus of every kind).

// kindQueries are the built-in query prepared per object kind.
type kindQueries struct {
	// byKind holds the query for each kind some package's guards name.
	byKind map[string]*kindQuery
	// other is the query for every other kind, an object without a kind
	// and no object at all: the packages without guards.
	other *kindQuery
}

// kindQuery is the built-in query over some packages and what their rules
// read of an input.object of the kind (nil: convert it whole).
type kindQuery struct {
	query *rego.PreparedEvalQuery
	reads *reads
}

// forObject returns the query that judges obj.
func (q *kindQueries) forObject(obj map[string]any) *kindQuery {
	if kind, ok := obj["kind"].(string); ok {
		if pq, ok := q.byKind[kind]; ok {
			return pq
		}
	}
	return q.other
}

// prepareKindQueries prepares the built-in query of each kind the compiled
// library's guards name, and the one for all other kinds.
func prepareKindQueries(ctx context.Context, compiler *ast.Compiler) (*kindQueries, error) {
	guards := packageKinds(compiler)
	var everyKind []string
	kinds := map[string][]string{}
	for pkg, ks := range guards {
		if ks == nil {
			everyKind = append(everyKind, pkg)
			continue
		}
		for _, k := range ks {
			kinds[k] = append(kinds[k], pkg)
		}
	}
	prepared := map[string]*rego.PreparedEvalQuery{}
	queryOf := func(pkgs []string, kind string) (*kindQuery, error) {
		slices.Sort(pkgs)
		q := packagesQuery(pkgs)
		pq, ok := prepared[q]
		if !ok {
			var err error
			if pq, err = prepare(ctx, compiler, q); err != nil {
				return nil, fmt.Errorf("prepare %s: %w", q, err)
			}
			prepared[q] = pq
		}
		// An analysis that gives up leaves the object whole: slower, the
		// same decisions.
		r, _ := readsOf(compiler, pkgs, kind)
		return &kindQuery{query: pq, reads: r}, nil
	}
	out := &kindQueries{byKind: make(map[string]*kindQuery, len(kinds))}
	var err error
	if out.other, err = queryOf(slices.Clone(everyKind), ""); err != nil {
		return nil, err
	}
	for kind, pkgs := range kinds {
		if out.byKind[kind], err = queryOf(append(pkgs, everyKind...), kind); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// packagesQuery is builtinQuery over the named packages only. It binds pkg
// and v as builtinQuery does.
func packagesQuery(pkgs []string) string {
	quoted := make([]string, len(pkgs))
	for i, p := range pkgs {
		quoted[i] = strconv.Quote(p)
	}
	return "some pkg in [" + strings.Join(quoted, ", ") + "]; " + builtinQuery
}

// packageKinds maps each built-in package (the name under
// data.tollgate.builtin) with violation rules to the kinds it can report
// on, sorted; nil means every kind.
func packageKinds(compiler *ast.Compiler) map[string][]string {
	type acc struct {
		any   bool
		kinds map[string]bool
	}
	pkgs := map[string]*acc{}
	for _, m := range compiler.Modules {
		path := m.Package.Path
		if len(path) != 4 || !path[:3].Equal(builtinPackagesRef) {
			continue
		}
		name, ok := path[3].Value.(ast.String)
		if !ok {
			continue
		}
		for _, r := range m.Rules {
			head := r.Head.Ref()
			if !head[0].Equal(ast.VarTerm("violation")) {
				continue
			}
			a := pkgs[string(name)]
			if a == nil {
				a = &acc{kinds: map[string]bool{}}
				pkgs[string(name)] = a
			}
			kinds := ruleKinds(r)
			if kinds == nil || len(head) != 1 {
				a.any = true
				continue
			}
			for _, k := range kinds {
				a.kinds[k] = true
			}
		}
	}
	out := make(map[string][]string, len(pkgs))
	for name, a := range pkgs {
		if a.any {
			out[name] = nil
			continue
		}
		ks := make([]string, 0, len(a.kinds))
		for k := range a.kinds {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		out[name] = ks
	}
	return out
}

// builtinPackagesRef is data.tollgate.builtin.
var builtinPackagesRef = ast.MustParseRef("data.tollgate.builtin")

// objectKindRef is input.object.kind.
var objectKindRef = ast.MustParseRef("input.object.kind")

// ruleKinds returns the kinds a conjunct of r's body restricts
// input.object.kind to, or nil when no conjunct does. The compiler writes
// `input.object.kind == "K"` as `input.object.kind = "K"` and
// `input.object.kind in S` as `x = input.object.kind;
// internal.member_2(x, S)`.
func ruleKinds(r *ast.Rule) []string {
	// aliases are the local variables bound to input.object.kind.
	aliases := map[ast.Var]bool{}
	isKind := func(t *ast.Term) bool {
		switch v := t.Value.(type) {
		case ast.Ref:
			return v.Equal(objectKindRef)
		case ast.Var:
			return aliases[v]
		}
		return false
	}
	for _, expr := range r.Body {
		if expr.Negated || len(expr.With) > 0 || !expr.IsCall() {
			continue
		}
		ops := expr.Operands()
		switch name := expr.Operator().String(); {
		case (name == "eq" || name == "equal") && len(ops) == 2:
			for i, t := range ops {
				other := ops[1-i]
				if !isKind(t) {
					continue
				}
				if s, ok := other.Value.(ast.String); ok {
					return []string{string(s)}
				}
				if v, ok := other.Value.(ast.Var); ok && name == "eq" {
					aliases[v] = true
				}
			}
		case name == "internal.member_2" && len(ops) == 2 && isKind(ops[0]):
			if kinds, ok := stringElems(ops[1].Value); ok {
				return kinds
			}
		}
	}
	return nil
}

// stringElems returns the elements of a set or array of strings.
func stringElems(v ast.Value) ([]string, bool) {
	var terms []*ast.Term
	switch c := v.(type) {
	case ast.Set:
		terms = c.Slice()
	case *ast.Array:
		for i := range c.Len() {
			terms = append(terms, c.Elem(i))
		}
	default:
		return nil, false
	}
	out := make([]string, 0, len(terms))
	for _, t := range terms {
		s, ok := t.Value.(ast.String)
		if !ok {
			return nil, false
		}
		out = append(out, string(s))
	}
	return out, true
}
