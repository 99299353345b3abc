package policies

import (
	"github.com/open-policy-agent/opa/v1/ast"
)

// ast.InterfaceToValue converts decoded JSON without reflection, but
// allocates for every object two lists of terms and a list of pairs besides
// the object itself, and a string for every key. convert gives the same
// value (TestConvertMatchesInterfaceToValue) with about a third fewer
// allocations: the terms of a whole document come from one array, sized by a
// first walk; the pairs of every object are gathered in one scratch list that
// NewObject copies from; and the common Kubernetes field names are shared
// values. What remains, NewObject's own map and lists per object, is OPA's.
//
// A term of a converted document lives in an array with the rest of the
// document's terms: whatever keeps one term keeps them all, so the shared
// function cache copies the scalar terms it keeps (sharedCache.put).

// convert returns ast.InterfaceToValue(x).
func convert(x any) (ast.Value, error) {
	return convertRead(x, &allReads)
}

// converter holds the terms of one document and the pairs of the objects
// being converted, innermost last.
type converter struct {
	terms []ast.Term
	pairs [][2]*ast.Term
}

// term returns a term of v from c's array, or from a new one when it is
// full (the earlier terms stay where they are).
func (c *converter) term(v ast.Value) *ast.Term {
	if len(c.terms) == cap(c.terms) {
		c.terms = make([]ast.Term, 0, 16)
	}
	c.terms = append(c.terms, ast.Term{Value: v})
	return &c.terms[len(c.terms)-1]
}

// fieldName returns the ast form of an object key: a shared value for the
// common Kubernetes field names (and for OPA's interned strings), so that
// most keys cost no allocation.
func fieldName(k string) ast.Value {
	if v, ok := fieldNames[k]; ok {
		return v
	}
	return ast.InternedValue(k)
}

// fieldNames are the ast forms of common Kubernetes field names. The values
// are never modified.
var fieldNames = func() map[string]ast.Value {
	names := []string{
		"apiVersion", "kind", "metadata", "name", "namespace", "labels", "annotations",
		"uid", "resourceVersion", "generation", "creationTimestamp", "generateName",
		"ownerReferences", "finalizers", "managedFields", "spec", "status", "data",
		"stringData", "type", "template", "selector", "matchLabels", "matchExpressions",
		"replicas", "strategy", "containers", "initContainers", "ephemeralContainers",
		"image", "imagePullPolicy", "command", "args", "env", "envFrom", "value",
		"valueFrom", "secretKeyRef", "configMapKeyRef", "fieldRef", "key", "ports",
		"containerPort", "protocol", "targetPort", "port", "resources", "requests",
		"limits", "cpu", "memory", "volumeMounts", "mountPath", "volumes", "configMap",
		"secret", "secretName", "serviceAccountName", "securityContext", "livenessProbe",
		"readinessProbe", "startupProbe", "httpGet", "path", "nodeSelector",
		"tolerations", "affinity", "jobTemplate", "schedule", "rules", "subjects",
		"roleRef", "source", "sources", "destination", "project", "repoURL",
		"targetRevision", "server", "syncPolicy",
	}
	m := make(map[string]ast.Value, len(names))
	for _, n := range names {
		m[n] = ast.String(n)
	}
	return m
}()

// convertRead returns convert(x) without the object keys r does not read
// (evaluator_reads.go); arrays keep all their elements.
func convertRead(x any, r *reads) (ast.Value, error) {
	c := converter{
		terms: make([]ast.Term, 0, countTerms(x, r)),
		pairs: make([][2]*ast.Term, 0, 16),
	}
	return c.value(x, r)
}

// countTerms counts the terms converting x under r takes: two per object
// entry, one per array element.
func countTerms(x any, r *reads) int {
	n := 0
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if sub := r.forKey(k); sub != nil {
				n += 2 + countTerms(v, sub)
			}
		}
	case []any:
		sub := r.forElems()
		n += len(x)
		for _, v := range x {
			n += countTerms(v, sub)
		}
	}
	return n
}

func (c *converter) value(x any, r *reads) (ast.Value, error) {
	switch x := x.(type) {
	case map[string]any:
		base := len(c.pairs)
		for k, v := range x {
			sub := r.forKey(k)
			if sub == nil {
				continue
			}
			val, err := c.value(v, sub)
			if err != nil {
				return nil, err
			}
			c.pairs = append(c.pairs, [2]*ast.Term{c.term(fieldName(k)), c.term(val)})
		}
		obj := ast.NewObject(c.pairs[base:]...)
		c.pairs = c.pairs[:base]
		return obj, nil
	case []any:
		sub := r.forElems()
		elems := make([]*ast.Term, len(x))
		for i, e := range x {
			v, err := c.value(e, sub)
			if err != nil {
				return nil, err
			}
			elems[i] = c.term(v)
		}
		return ast.NewArray(elems...), nil
	case string:
		return ast.InternedValue(x), nil
	}
	// Numbers, booleans, null and Go types that need a JSON round trip.
	return ast.InterfaceToValue(x)
}
