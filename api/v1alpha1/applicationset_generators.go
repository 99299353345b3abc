package v1alpha1

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
)

// GeneratorKinds are the generator fields of a generator, implemented or
// not, in Argo CD's order.
var GeneratorKinds = []string{"list", "clusters", "git", "scmProvider", "clusterDecisionResource", "pullRequest", "matrix", "merge", "plugin"}

// WalkGenerators calls fn with every generator of set, nested matrix and
// merge children included, as decoded JSON, in order: field is its path
// with its kind (spec.generators[0].matrix.generators[1].git), as
// generation errors name it.
func (set *ApplicationSet) WalkGenerators(fn func(field, kind string, g map[string]any)) {
	b, err := json.Marshal(set.Spec.Generators)
	if err != nil {
		return
	}
	var gens []any
	if json.Unmarshal(b, &gens) != nil {
		return
	}
	var walk func(prefix string, gens []any)
	walk = func(prefix string, gens []any) {
		for i, g := range gens {
			m, _ := g.(map[string]any)
			for _, kind := range GeneratorKinds {
				body, _ := m[kind].(map[string]any)
				if body == nil {
					continue
				}
				field := fmt.Sprintf("%s[%d].%s", prefix, i, kind)
				fn(field, kind, body)
				if children, ok := body["generators"].([]any); ok && (kind == "matrix" || kind == "merge") {
					walk(field+".generators", children)
				}
			}
		}
	}
	walk("spec.generators", gens)
}

// TemplateProject returns the project the Applications of set are
// generated for when it can be known before generating ("default" when
// the template leaves it empty), or templated true when it depends on
// parameters or generators' own templates name different projects.
func (set *ApplicationSet) TemplateProject() (project string, templated bool) {
	base := set.Spec.Template.Spec.Project
	// A project a generator's own template sets wins over the
	// ApplicationSet's (mergeTemplate).
	effective := map[string]bool{}
	for _, gen := range set.Spec.Generators {
		raw, err := generatorMap(gen)
		if err != nil {
			return "", true
		}
		spec, _ := GeneratorTemplate(raw)["spec"].(map[string]any)
		p, _ := spec["project"].(string)
		effective[cmp.Or(p, base)] = true
	}
	if len(effective) > 1 {
		return "", true
	}
	project = base
	for p := range effective {
		project = p
	}
	if strings.Contains(project, "{{") {
		return "", true
	}
	if project == "" {
		project = "default"
	}
	return project, false
}

// GeneratorTemplate returns the template of the generator in raw (list,
// clusters, git, matrix or merge), nil when it has none.
func GeneratorTemplate(raw map[string]any) map[string]any {
	for _, k := range []string{"list", "clusters", "git", "matrix", "merge"} {
		if g, ok := raw[k].(map[string]any); ok {
			t, _ := g["template"].(map[string]any)
			return t
		}
	}
	return nil
}

// generatorMap is gen as decoded JSON.
func generatorMap(gen ApplicationSetGenerator) (map[string]any, error) {
	b, err := json.Marshal(gen)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}
