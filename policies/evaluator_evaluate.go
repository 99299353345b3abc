package policies

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Evaluate judges one Input against the built-in rules, the user policies
// and the native checks, under the evaluator's timeout. Violations are
// filtered by exemptions and severity overrides and sorted by rule, then
// message. A policy that fails, or runs past the timeout, yields an error
// "evaluate policies for <kind>/<name>: ..." (errors.Is
// context.DeadlineExceeded on timeout).
func (e *Evaluator) Evaluate(ctx context.Context, in Input) (Decision, error) {
	return e.evaluateOne(ctx, in, nil)
}

// evaluateOne is Evaluate with the ast forms of shared maps in cache.
func (e *Evaluator) evaluateOne(ctx context.Context, in Input, cache valueCache) (Decision, error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()

	// A fast evaluation may finish before OPA notices a context that is
	// already done, so check it first.
	err := ctx.Err()
	var vs []Violation
	if err == nil {
		vs, err = e.evaluate(ctx, in, cache)
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			if errors.Is(ctxErr, context.DeadlineExceeded) {
				err = fmt.Errorf("policy evaluation exceeded %s: %w", e.timeout, ctxErr)
			} else {
				err = fmt.Errorf("policy evaluation stopped: %w", ctxErr)
			}
		}
		return Decision{}, fmt.Errorf("evaluate policies for %s: %w", describe(in.Object), err)
	}
	vs = e.finish(in, vs)
	slices.SortFunc(vs, compareViolations)
	return Decision{Violations: vs}, nil
}

// evaluate runs the three sources of violations for one Input.
//
// The built-in query keeps the results of pure functions in the
// evaluator's shared cache (evaluator_cache.go) and the rest of its results
// in a cache of its own cheaper than OPA's. OPA would otherwise start a
// goroutine per query to watch ctx, and collect metrics nobody reads; a
// topdown.Cancel that reads ctx.Err() (OPA polls it between evaluation
// steps) and no-op metrics replace both. Rule indexing and early exit are
// OPA's defaults, and instrumentation is off. The built-in query of the
// object's kind (evaluator_kinds.go) sees the object pruned to what it
// reads (evaluator_reads.go); user policies see it whole.
func (e *Evaluator) evaluate(ctx context.Context, in Input, cache valueCache) ([]Violation, error) {
	var wholeObj ast.Value
	whole := func() (ast.Value, error) {
		if wholeObj != nil {
			return wholeObj, nil
		}
		wholeObj = ast.NullValue
		if in.Object != nil {
			v, err := convert(in.Object)
			if err != nil {
				return nil, err
			}
			wholeObj = v
		}
		return wholeObj, nil
	}
	cancel := rego.EvalExternalCancel(ctxCancel{ctx})

	var vs []Violation
	if e.builtin != nil {
		q := e.builtin.forObject(in.Object)
		var (
			obj       ast.Value
			err       error
			wholeFrom func() (ast.Value, error)
		)
		if prunable(in, q.reads) {
			obj, err = convertRead(in.Object, q.reads)
			wholeFrom = whole
		} else {
			obj, err = whole()
		}
		if err != nil {
			return nil, fmt.Errorf("convert object: %w", err)
		}
		caches := e.inputs
		if cache != nil {
			// EvaluateAll: its shared maps are in cache; it keeps nothing
			// after the call (see EvaluateAll).
			caches.docs = nil
		}
		input, err := builtinInput(in, obj, wholeFrom, e.argocdNS, cache, caches)
		if err != nil {
			return nil, err
		}
		vc := getEvalCache(e.shared)
		rs, err := q.query.Eval(ctx, rego.EvalParsedInput(input), cancel, noMetrics, rego.EvalVirtualCache(vc))
		vc.release()
		if err != nil {
			return nil, fmt.Errorf("evaluate built-in policies: %w", err)
		}
		if vs, err = appendBuiltinResults(vs, rs); err != nil {
			return nil, err
		}
		if in.Context.RedeclaredKind != "" {
			vs = append(vs, redeclaredKindViolation(in))
		}
		vs = append(vs, reservedAnnotationViolations(in)...)
	}
	if e.user != nil {
		var obj ast.Value
		var err error
		if r := e.userReads; r != nil && !r.whole && in.Object != nil {
			obj, err = convertRead(in.Object, r)
		} else {
			obj, err = whole()
		}
		if err != nil {
			return nil, fmt.Errorf("convert object: %w", err)
		}
		rs, err := e.user.Eval(ctx, rego.EvalParsedInput(obj), cancel, noMetrics)
		if err != nil {
			return nil, fmt.Errorf("evaluate user policies: %w", err)
		}
		if vs, err = appendUserResults(vs, rs, e.userRules); err != nil {
			return nil, err
		}
	}
	for i, check := range e.checks {
		out, err := runCheck(check, in)
		if err != nil {
			return nil, fmt.Errorf("run check %d: %w", i, err)
		}
		vs = append(vs, out...)
	}
	return vs, nil
}

// redeclaredKindViolation denies a CustomResourceDefinition that
// re-declares a kind the cluster serves or a built-in kind: the rules
// would otherwise judge that kind by the scope the tenant's CRD claims.
func redeclaredKindViolation(in Input) Violation {
	return Violation{
		Rule:     "project-resource-denied",
		Severity: SeverityDeny,
		Message: fmt.Sprintf("%s re-declares %s; a CustomResourceDefinition in the manifests may only add kinds the cluster does not serve yet",
			describeObject(in.Object), in.Context.RedeclaredKind),
		Path: []any{"spec", "names", "kind"},
	}
}

// noMetrics makes an evaluation skip OPA's metrics.
var noMetrics = rego.EvalMetrics(metrics.NoOp())

// ctxCancel is the topdown.Cancel of an evaluation under ctx: cancelled
// once ctx is done. It needs neither a goroutine nor a callback registered
// on ctx.
type ctxCancel struct {
	ctx context.Context
}

var _ topdown.Cancel = ctxCancel{}

// Cancel implements topdown.Cancel; the evaluation stops when ctx does.
func (ctxCancel) Cancel() {}

// Cancelled implements topdown.Cancel.
func (c ctxCancel) Cancelled() bool {
	return c.ctx.Err() != nil
}

// runCheck calls a native check, turning a panic into an error so that no
// panic escapes a request.
func runCheck(check Check, in Input) (out []Violation, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("check panicked: %v", r)
		}
	}()
	return check(in), nil
}

// EvaluateAll evaluates ins concurrently with GOMAXPROCS workers and returns
// the decisions in input order. The first error stops the remaining work and
// is returned, naming the input's index and object. An Application or
// AppProject map that several inputs share is converted for OPA once; the
// caller must not modify the inputs' maps during the call. Unlike Evaluate,
// EvaluateAll keeps no converted document after the call: a caller that
// judges an Application's objects in one call (the engine, the CLI) would
// only fill the document cache with Applications it rarely judges again.
func (e *Evaluator) EvaluateAll(ctx context.Context, ins []Input) ([]Decision, error) {
	out := make([]Decision, len(ins))
	if len(ins) == 0 {
		return out, nil
	}
	cache, err := sharedValues(ins)
	if err != nil {
		return nil, fmt.Errorf("evaluate inputs: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		next     atomic.Int64
		firstErr error
		once     sync.Once
		wg       sync.WaitGroup
	)
	workers := min(runtime.GOMAXPROCS(0), len(ins))
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ins) || ctx.Err() != nil {
					return
				}
				d, err := e.evaluateOne(ctx, ins[i], cache)
				if err != nil {
					once.Do(func() {
						firstErr = &InputError{Index: i, Err: err}
						cancel()
					})
					return
				}
				out[i] = d
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("evaluate inputs: %w", err)
	}
	return out, nil
}

// compareViolations orders violations by rule, message, then path and
// object, so output is stable.
func compareViolations(a, b Violation) int {
	if c := cmp.Or(
		cmp.Compare(a.Rule, b.Rule),
		cmp.Compare(a.Message, b.Message),
	); c != 0 {
		return c
	}
	if c := comparePaths(a.Path, b.Path); c != 0 {
		return c
	}
	return cmp.Or(
		cmp.Compare(a.Severity, b.Severity),
		cmp.Compare(a.Object.Namespace, b.Object.Namespace),
		cmp.Compare(a.Object.Name, b.Object.Name),
	)
}

// comparePaths orders JSON paths element by element; ints sort before
// strings.
func comparePaths(a, b []any) int {
	for i := range min(len(a), len(b)) {
		ai, aIsInt := a[i].(int)
		bi, bIsInt := b[i].(int)
		switch {
		case aIsInt && bIsInt:
			if c := cmp.Compare(ai, bi); c != 0 {
				return c
			}
		case aIsInt:
			return -1
		case bIsInt:
			return 1
		default:
			if c := cmp.Compare(fmt.Sprint(a[i]), fmt.Sprint(b[i])); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(len(a), len(b))
}

// describe names an object in errors as <kind>/<name>.
func describe(obj map[string]any) string {
	kind, _ := obj["kind"].(string)
	if kind == "" {
		kind = "<no kind>"
	}
	name := objectName(obj)
	if name == "" {
		name, _ = nestedString(obj, "metadata", "generateName")
		if name == "" {
			name = "<no name>"
		}
	}
	return kind + "/" + name
}
