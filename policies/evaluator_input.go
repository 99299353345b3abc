package policies

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Converting an Input to OPA's ast form is a large share of one evaluation:
// an object of a few dozen fields is a few hundred allocations. The
// Application and AppProject of rendered objects are the same maps for
// every object an Application renders, so EvaluateAll converts each of them
// once (a valueCache) and every input shares the result.
//
// ast.InterfaceToValue already converts map[string]any, []any, strings,
// numbers and booleans without reflection; a hand-written converter measured
// no faster (the allocations are the cost), so it is used as is.

// valueCache maps a map shared by several Inputs, by identity, to its ast
// form. It is built before the evaluations start and only read afterwards,
// so concurrent evaluations share it without locking. A nil valueCache
// converts every time.
type valueCache map[unsafe.Pointer]ast.Value

// mapKey identifies a map by the address of its header.
func mapKey(m map[string]any) unsafe.Pointer {
	return reflect.ValueOf(m).UnsafePointer()
}

// sameMap reports whether a and b are the same map (not merely equal).
func sameMap(a, b map[string]any) bool {
	return mapKey(a) == mapKey(b)
}

// sharedValues converts the Applications and AppProjects that more than one
// of ins refers to. It fails on the first map that does not convert, naming
// the input.
func sharedValues(ins []Input) (valueCache, error) {
	seen := make(map[unsafe.Pointer]int)
	for _, in := range ins {
		for _, m := range [...]map[string]any{in.Application, in.Project} {
			if len(m) > 0 {
				seen[mapKey(m)]++
			}
		}
	}
	cache := make(valueCache)
	for i, in := range ins {
		for _, m := range [...]map[string]any{in.Application, in.Project} {
			if len(m) == 0 || seen[mapKey(m)] < 2 {
				continue
			}
			k := mapKey(m)
			if _, ok := cache[k]; ok {
				continue
			}
			v, err := ast.InterfaceToValue(m)
			if err != nil {
				return nil, fmt.Errorf("input %d: convert %s: %w", i, describe(m), err)
			}
			cache[k] = v
		}
	}
	return cache, nil
}

// value returns the ast form of m, from the cache when it is there.
func (c valueCache) value(m map[string]any) (ast.Value, error) {
	if v, ok := c[mapKey(m)]; ok {
		return v, nil
	}
	return ast.InterfaceToValue(m)
}

// builtinInput builds the built-in rules' input document, the JSON form of
// Input, directly as an ast.Value. obj is the already converted in.Object.
// An empty Context.ArgoCDNamespace is filled with defaultNS.
func builtinInput(in Input, obj ast.Value, defaultNS string, cache valueCache) (ast.Value, error) {
	kvs := make([][2]*ast.Term, 0, 4)
	kvs = append(kvs, [2]*ast.Term{ast.InternedTerm("object"), ast.NewTerm(obj)})
	if len(in.Application) > 0 {
		app := obj
		if !sameMap(in.Application, in.Object) {
			v, err := cache.value(in.Application)
			if err != nil {
				return nil, fmt.Errorf("convert application: %w", err)
			}
			app = v
		}
		kvs = append(kvs, [2]*ast.Term{ast.InternedTerm("application"), ast.NewTerm(app)})
	}
	if len(in.Project) > 0 {
		v, err := cache.value(in.Project)
		if err != nil {
			return nil, fmt.Errorf("convert project: %w", err)
		}
		kvs = append(kvs, [2]*ast.Term{ast.InternedTerm("project"), ast.NewTerm(v)})
	}
	c, err := contextValue(in.Context, defaultNS)
	if err != nil {
		return nil, err
	}
	kvs = append(kvs, [2]*ast.Term{ast.InternedTerm("context"), ast.NewTerm(c)})
	return ast.NewObject(kvs...), nil
}

// contextValue is the JSON form of Context as an ast.Value.
func contextValue(c Context, defaultNS string) (ast.Value, error) {
	ns := c.ArgoCDNamespace
	if ns == "" {
		ns = defaultNS
	}
	kvs := make([][2]*ast.Term, 0, 5)
	kvs = append(kvs,
		[2]*ast.Term{ast.InternedTerm("enforcementPoint"), ast.StringTerm(string(c.EnforcementPoint))},
		[2]*ast.Term{ast.InternedTerm("argocdNamespace"), ast.StringTerm(ns)},
		[2]*ast.Term{ast.InternedTerm("clusterScoped"), ast.InternedTerm(c.ClusterScoped)},
	)
	if c.ScaledByHPA {
		kvs = append(kvs, [2]*ast.Term{ast.InternedTerm("scaledByHPA"), ast.InternedTerm(true)})
	}
	if len(c.ExistingApplications) > 0 {
		apps := make([]*ast.Term, len(c.ExistingApplications))
		for i, a := range c.ExistingApplications {
			v, err := ast.InterfaceToValue(a)
			if err != nil {
				return nil, fmt.Errorf("convert existing application %d: %w", i, err)
			}
			apps[i] = ast.NewTerm(v)
		}
		kvs = append(kvs, [2]*ast.Term{ast.InternedTerm("existingApplications"), ast.ArrayTerm(apps...)})
	}
	return ast.NewObject(kvs...), nil
}
