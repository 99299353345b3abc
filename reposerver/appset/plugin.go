package appset

import (
	"context"
	"fmt"
	"maps"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// PluginCaller asks generator plugins for parameter sets: in the
// repo-server, with the baseUrl and token the controller read.
type PluginCaller interface {
	// Params asks the plugin of the plugin generator gen at field, for
	// the ApplicationSet named set, and returns its output's parameters.
	Params(ctx context.Context, field, set string, gen *v1alpha1.PluginGenerator) ([]map[string]any, error)
}

// plugin returns the parameter sets the generator raw's plugin answers
// (Argo CD's getparams.execute), each flattened to "a.b" keys without
// goTemplate, with generator.input.parameters and values added, as Argo
// CD's plugin generator does.
func (g *generator) plugin(ctx context.Context, field string, raw any) ([]map[string]any, error) {
	var p v1alpha1.PluginGenerator
	if err := fromMap(field, raw, &p); err != nil {
		return nil, err
	}
	if p.ConfigMapRef.Name == "" {
		return nil, fmt.Errorf("%s.configMapRef.name: the plugin's ConfigMap is not named", field)
	}
	if g.src.Plugins == nil {
		return nil, fmt.Errorf("%s: %w: the plugin generator asks the plugin's HTTP service, which only the controller's repo-server calls", field, ErrNotGeneratedHere)
	}
	found, err := g.src.Plugins.Params(ctx, field, g.setName, &p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	input := map[string]any{}
	for k, v := range p.Input.Parameters {
		var decoded any
		if err := fromMap(field+".input.parameters."+k, v, &decoded); err != nil {
			return nil, err
		}
		input[k] = decoded
	}
	out := make([]map[string]any, 0, len(found))
	for _, obj := range found {
		params := map[string]any{}
		if g.r.goTemplate {
			maps.Copy(params, obj)
		} else {
			params = stringParams(flatten(obj))
		}
		params["generator"] = map[string]any{"input": map[string]any{"parameters": input}}
		if err := g.addValues(field, params, p.Values); err != nil {
			return nil, err
		}
		out = append(out, params)
	}
	return out, nil
}
