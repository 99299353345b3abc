package policies

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Converting an Input to OPA's ast form is a large share of one evaluation:
// an object of a few dozen fields is a few hundred allocations, and the
// garbage collector's work grows with every byte. The object under review
// is converted by convert (evaluator_convert.go), which gives what
// ast.InterfaceToValue gives with fewer allocations. The Application and
// AppProject of rendered objects are the same documents for every object an
// Application renders: EvaluateAll converts each shared map once (a
// valueCache) and every input shares the result, and the Evaluator keeps
// the ast form of the documents it was recently given, and of the review
// contexts, for later calls (a documentCache and a contextCache, see
// evaluator_input_cache.go).

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
			v, err := convert(m)
			if err != nil {
				return nil, &InputError{Index: i, Err: fmt.Errorf("convert %s: %w", describe(m), err)}
			}
			cache[k] = v
		}
	}
	return cache, nil
}

// value returns the ast form of m, from the cache when it is there.
func (c valueCache) value(m map[string]any) (ast.Value, error) {
	return c.valueWith(m, nil)
}

// valueWith returns the ast form of m, from the cache when it is there,
// else from docs (which converts when it must).
func (c valueCache) valueWith(m map[string]any, docs *documentCache) (ast.Value, error) {
	if v, ok := c[mapKey(m)]; ok {
		return v, nil
	}
	return docs.value(m)
}

// Keys of the built-in rules' input document.
var (
	keyObject               = ast.StringTerm("object")
	keyApplication          = ast.StringTerm("application")
	keyProject              = ast.StringTerm("project")
	keyContext              = ast.StringTerm("context")
	keyEnforcementPoint     = ast.StringTerm("enforcementPoint")
	keyArgoCDNamespace      = ast.StringTerm("argocdNamespace")
	keyClusterScoped        = ast.StringTerm("clusterScoped")
	keyScaledByHPA          = ast.StringTerm("scaledByHPA")
	keyExistingApplications = ast.StringTerm("existingApplications")
	keyProtectedNamespaces  = ast.StringTerm("protectedNamespaces")
)

// inputCaches are the caches builtinInput draws on; nil ones are skipped.
type inputCaches struct {
	docs     *documentCache
	contexts *contextCache
}

// builtinInput builds the built-in rules' input document, the JSON form of
// Input, directly as an ast.Value. obj is the already converted in.Object,
// or, when whole is not nil, in.Object pruned to what the rules read
// (evaluator_reads.go) and whole converts it whole. The Application and
// AppProject come from cache, else from caches.docs. An empty
// Context.ArgoCDNamespace is filled with defaultNS.
func builtinInput(in Input, obj ast.Value, whole func() (ast.Value, error), defaultNS string, cache valueCache, caches inputCaches) (ast.Value, error) {
	kvs := make([][2]*ast.Term, 1, 4)
	if len(in.Application) > 0 {
		app := obj
		if !sameMap(in.Application, in.Object) {
			v, err := cache.valueWith(in.Application, caches.docs)
			if err != nil {
				return nil, fmt.Errorf("convert application: %w", err)
			}
			app = v
			// The rules compare input.object with input.application; the
			// caller made sure that the whole object differs from the
			// Application, and so must the pruned one.
			if whole != nil && obj.Compare(app) == 0 {
				if obj, err = whole(); err != nil {
					return nil, err
				}
			}
		}
		kvs = append(kvs, [2]*ast.Term{keyApplication, ast.NewTerm(app)})
	}
	kvs[0] = [2]*ast.Term{keyObject, ast.NewTerm(obj)}
	if len(in.Project) > 0 {
		v, err := cache.valueWith(in.Project, caches.docs)
		if err != nil {
			return nil, fmt.Errorf("convert project: %w", err)
		}
		kvs = append(kvs, [2]*ast.Term{keyProject, ast.NewTerm(v)})
	}
	c, err := caches.contexts.value(in.Context, defaultNS)
	if err != nil {
		return nil, err
	}
	kvs = append(kvs, [2]*ast.Term{keyContext, ast.NewTerm(c)})
	return ast.NewObject(kvs...), nil
}

// contextValue is the JSON form of Context as an ast.Value, with the
// evaluator's protected namespaces (an ast array; nil leaves them out).
func contextValue(c Context, defaultNS string, protected *ast.Term) (ast.Value, error) {
	ns := c.ArgoCDNamespace
	if ns == "" {
		ns = defaultNS
	}
	kvs := make([][2]*ast.Term, 0, 6)
	if protected != nil {
		kvs = append(kvs, [2]*ast.Term{keyProtectedNamespaces, protected})
	}
	kvs = append(kvs,
		[2]*ast.Term{keyEnforcementPoint, ast.StringTerm(string(c.EnforcementPoint))},
		[2]*ast.Term{keyArgoCDNamespace, ast.StringTerm(ns)},
		[2]*ast.Term{keyClusterScoped, ast.InternedTerm(c.ClusterScoped)},
	)
	if c.ScaledByHPA {
		kvs = append(kvs, [2]*ast.Term{keyScaledByHPA, ast.InternedTerm(true)})
	}
	if len(c.ExistingApplications) > 0 {
		apps := make([]*ast.Term, len(c.ExistingApplications))
		for i, a := range c.ExistingApplications {
			v, err := convert(a)
			if err != nil {
				return nil, fmt.Errorf("convert existing application %d: %w", i, err)
			}
			apps[i] = ast.NewTerm(v)
		}
		kvs = append(kvs, [2]*ast.Term{keyExistingApplications, ast.ArrayTerm(apps...)})
	}
	return ast.NewObject(kvs...), nil
}
