package appset

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// patch applies the ApplicationSet's templatePatch, rendered with params,
// to app as a strategic merge patch. The patch cannot change the project,
// as in Argo CD.
func (g *generator) patch(app map[string]any, tmpl string, params map[string]any) (map[string]any, error) {
	rendered, err := g.r.replace(tmpl, params)
	if err != nil {
		return nil, fmt.Errorf("spec.templatePatch: %w", err)
	}
	patchJSON := []byte(rendered)
	if !strings.HasPrefix(strings.TrimSpace(rendered), "{") {
		if patchJSON, err = yaml.YAMLToJSON([]byte(rendered)); err != nil {
			return nil, fmt.Errorf("spec.templatePatch: %w", err)
		}
	}
	var check v1alpha1.Application
	if err := json.Unmarshal(patchJSON, &check); err != nil {
		return nil, fmt.Errorf("spec.templatePatch: invalid templatePatch: %w", err)
	}
	original, err := json.Marshal(app)
	if err != nil {
		return nil, err
	}
	patched, err := strategicpatch.StrategicMergePatch(original, patchJSON, v1alpha1.Application{})
	if err != nil {
		return nil, fmt.Errorf("spec.templatePatch: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(patched, &out); err != nil {
		return nil, err
	}
	if _, ok := out["metadata"].(map[string]any); !ok {
		out["metadata"] = map[string]any{}
	}
	spec, _ := out["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		out["spec"] = spec
	}
	origSpec, _ := app["spec"].(map[string]any)
	if p, ok := origSpec["project"]; ok {
		spec["project"] = p
	} else {
		delete(spec, "project")
	}
	return out, nil
}
