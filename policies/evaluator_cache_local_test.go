package policies

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// TestLocalCacheMatchesOPA runs the same random Push, Pop, Put and Get calls
// on localCache and on OPA's own topdown.NewVirtualCache, and compares every
// answer.
func TestLocalCacheMatchesOPA(t *testing.T) {
	refs := []ast.Ref{
		ast.MustParseRef("data.tollgate.lib.rendered_namespace"),
		ast.MustParseRef("data.tollgate.lib.argocd_namespace"),
		ast.MustParseRef("data.tollgate.builtin.a.violation"),
		ast.MustParseRef("data.tollgate.builtin.b.violation"),
		ast.MustParseRef("data.tollgate.lib"),
		{ast.RefTerm(ast.MustParseRef("data.tollgate.lib.f")...), ast.StringTerm("a")},
		{ast.RefTerm(ast.MustParseRef("data.tollgate.lib.f")...), ast.StringTerm("b")},
		{ast.RefTerm(ast.MustParseRef("data.tollgate.lib.f")...), ast.IntNumberTerm(1), ast.ObjectTerm(ast.Item(ast.StringTerm("k"), ast.StringTerm("v")))},
	}
	// Refs equal to the ones above, built anew: the cache must compare
	// values, not pointers.
	copies := make([]ast.Ref, len(refs))
	for i, r := range refs {
		copies[i] = r.Copy()
	}
	values := []*ast.Term{nil, ast.IntNumberTerm(1), ast.StringTerm("x"), ast.SetTerm(), ast.BooleanTerm(false)}
	rng := rand.New(rand.NewPCG(7, 11))
	for run := range 50 {
		var local localCache
		local.init()
		opa := topdown.NewVirtualCache()
		depth := 0
		for step := range 300 {
			i := rng.IntN(len(refs))
			ref := refs[i]
			if rng.IntN(2) == 0 {
				ref = copies[i]
			}
			switch op := rng.IntN(10); {
			case op == 0 && depth < 4:
				local.Push()
				opa.Push()
				depth++
			case op == 1 && depth > 0:
				local.Pop()
				opa.Pop()
				depth--
			case op < 5:
				v := values[rng.IntN(len(values))]
				local.Put(slices.Clone(ref), v)
				opa.Put(slices.Clone(ref), v)
			default:
				got, gotUndefined := local.Get(ref)
				want, wantUndefined := opa.Get(ref)
				if gotUndefined != wantUndefined || (got == nil) != (want == nil) || (got != nil && !got.Equal(want)) {
					t.Fatalf("run %d, step %d: Get(%v) = %v, %v; OPA's cache says %v, %v", run, step, ref, got, gotUndefined, want, wantUndefined)
				}
			}
			gotKeys, wantKeys := refStrings(local.Keys()), refStrings(opa.Keys())
			if diff := cmp.Diff(wantKeys, gotKeys); diff != "" {
				t.Fatalf("run %d, step %d: Keys() (-OPA +local):\n%s", run, step, diff)
			}
		}
	}
}

func refStrings(refs []ast.Ref) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.String()
	}
	slices.Sort(out)
	return out
}

// TestLocalCacheManyEntries fills a cache past the room inside it.
func TestLocalCacheManyEntries(t *testing.T) {
	var c localCache
	c.init()
	ref := func(i int) ast.Ref {
		return ast.MustParseRef(fmt.Sprintf("data.tollgate.builtin.p%d.violation", i))
	}
	for i := range 100 {
		c.Put(ref(i), ast.IntNumberTerm(i))
	}
	for i := range 100 {
		if got, _ := c.Get(ref(i)); got == nil || !got.Equal(ast.IntNumberTerm(i)) {
			t.Fatalf("Get(%v) = %v, want %d", ref(i), got, i)
		}
	}
}

// TestEvalCacheRelease checks that a cache back from the pool holds nothing
// of the evaluation before.
func TestEvalCacheRelease(t *testing.T) {
	c := getEvalCache(nil)
	rule := ast.MustParseRef("data.t.r")
	c.Put(rule, ast.IntNumberTerm(1))
	c.Push()
	c.release()
	for range 10 {
		next := getEvalCache(nil)
		if got, undefined := next.Get(rule); got != nil || undefined || len(next.Keys()) != 0 || next.frames != 0 {
			t.Fatalf("Get(%v) from a recycled cache = %v, %v (keys %v, frames %d), want nothing", rule, got, undefined, next.Keys(), next.frames)
		}
		next.Put(rule, ast.IntNumberTerm(2))
		next.release()
	}
}
