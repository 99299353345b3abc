package appset

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// generator produces parameter sets with one ApplicationSet's renderer.
type generator struct {
	r   renderer
	src Sources
	// setName is the ApplicationSet's name, which plugins are told.
	setName string
}

// paramSet is one parameter set and the files of git files generators
// whose content it holds.
type paramSet struct {
	params map[string]any
	files  []reposerver.ParamFile
}

// paramSets are sets without files: what list and clusters generators
// produce.
func paramSets(sets []map[string]any) []paramSet {
	out := make([]paramSet, len(sets))
	for i, p := range sets {
		out[i] = paramSet{params: p}
	}
	return out
}

// maxNesting is how deep matrix and merge generators nest: a matrix or
// merge of the ApplicationSet may hold one more, whose generators are
// terminal, as in Argo CD.
const maxNesting = 1

// params returns the parameter sets of the generator raw (a decoded
// generator object at field), its string fields first rendered with outer
// when it is the second generator of a matrix, and filtered by its
// selector. depth counts the matrix and merge generators around it.
func (g *generator) params(ctx context.Context, field string, raw, outer map[string]any, depth int) ([]paramSet, error) {
	if outer != nil {
		rendered, err := g.r.renderValue(raw, outer)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		raw = rendered.(map[string]any)
	}
	var kinds []string
	for _, k := range v1alpha1.GeneratorKinds {
		if v, ok := raw[k]; ok && v != nil {
			kinds = append(kinds, k)
		}
	}
	switch {
	case len(kinds) == 0:
		return nil, fmt.Errorf("%s: no generator is set (want one of list, clusters, git, pullRequest, scmProvider, clusterDecisionResource, plugin, matrix, merge)", field)
	case len(kinds) > 1:
		return nil, fmt.Errorf("%s: more than one generator is set (%s)", field, strings.Join(kinds, ", "))
	}
	kind := kinds[0]
	sub := field + "." + kind
	var sets []paramSet
	var err error
	switch kind {
	case "list":
		var plain []map[string]any
		plain, err = g.list(sub, raw[kind])
		sets = paramSets(plain)
	case "clusters":
		var plain []map[string]any
		plain, err = g.clusters(ctx, sub, raw[kind])
		sets = paramSets(plain)
	case "git":
		sets, err = g.git(ctx, sub, raw[kind])
	case "pullRequest", "scmProvider", "plugin", "clusterDecisionResource":
		var plain []map[string]any
		switch kind {
		case "pullRequest":
			plain, err = g.pullRequest(ctx, sub, raw[kind])
		case "scmProvider":
			plain, err = g.scmProvider(ctx, sub, raw[kind])
		case "plugin":
			plain, err = g.plugin(ctx, sub, raw[kind])
		default:
			plain, err = g.clusterDecisions(ctx, sub, raw[kind])
		}
		sets = paramSets(plain)
	case "matrix", "merge":
		if depth > maxNesting {
			return nil, fmt.Errorf("%s: a %s generator may not be nested this deep (a matrix or merge may hold one more matrix or merge, whose generators may not)", sub, kind)
		}
		if kind == "matrix" {
			sets, err = g.matrix(ctx, sub, raw[kind], depth+1)
		} else {
			sets, err = g.merge(ctx, sub, raw[kind], depth+1)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(sets) > MaxParameterSets {
		return nil, fmt.Errorf("%s: produces %d parameter sets, more than %d", sub, len(sets), MaxParameterSets)
	}
	return g.filter(field, raw["selector"], sets)
}

// filter keeps the parameter sets the selector matches, their parameters
// flattened to "a.b" keys as labels, as Argo CD's post-selector does.
func (g *generator) filter(field string, rawSelector any, sets []paramSet) ([]paramSet, error) {
	if rawSelector == nil {
		return sets, nil
	}
	var ls metav1.LabelSelector
	if err := fromMap(field+".selector", rawSelector, &ls); err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, fmt.Errorf("%s.selector: %w", field, err)
	}
	var out []paramSet
	for _, s := range sets {
		if sel.Matches(labels.Set(flatten(s.params))) {
			out = append(out, s)
		}
	}
	return out, nil
}

// flatten turns nested parameters into "a.b" and "a.0" keys with their
// values printed with %v, as Argo CD flattens parameters for selectors
// and for {{param}} substitution of files. A map[string]string (labels in
// goTemplate mode) stays one key, as in Argo CD.
func flatten(params map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(join(prefix, k), e)
			}
		case []any:
			for i, e := range v {
				walk(join(prefix, fmt.Sprint(i)), e)
			}
		default:
			out[prefix] = fmt.Sprintf("%v", v)
		}
	}
	walk("", params)
	return out
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// stringParams is flatten for {{param}} substitution: every value a string.
func stringParams(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// addValues adds a generator's values, each rendered with the parameters
// the generator produced, as values.<key> (or, with goTemplate, a values
// map).
func (g *generator) addValues(field string, params map[string]any, values map[string]string) error {
	if len(values) == 0 {
		return nil
	}
	rendered := make(map[string]any, len(values))
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v, err := g.r.replace(values[k], params)
		if err != nil {
			return fmt.Errorf("%s.values.%s: %w", field, k, err)
		}
		rendered[k] = v
	}
	if g.r.goTemplate {
		params["values"] = rendered
		return nil
	}
	for k, v := range rendered {
		params["values."+k] = v
	}
	return nil
}
