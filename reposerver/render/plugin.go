package render

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// KindPlugin is the kind of a source a config management plugin renders
// (an Application's spec.source.plugin). Build does not render it: the
// repo-server hands the source to the plugin's sidecar.
const KindPlugin = "plugin"

// PluginOptions are a plugin source's options.
type PluginOptions struct {
	// Name is the plugin's name, "" for discovery.
	Name string
	// Env is the environment the plugin's commands get, as Argo CD's
	// repo-server sends it (NAME=VALUE, see pluginEnv).
	Env []string
}

// pluginOptions resolves a plugin source's options for the source's build
// environment env and the destination's kubeVersion and apiVersions.
func pluginOptions(field string, p *v1alpha1.ApplicationSourcePlugin, env BuildEnv, kubeVersion string, apiVersions []string) (*PluginOptions, error) {
	vars, err := pluginEnv(p, env, kubeVersion, apiVersions)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return &PluginOptions{Name: p.Name, Env: vars}, nil
}

// pluginEnv returns the environment Argo CD's repo-server sends a plugin
// (getPluginEnvs): the build variables, KUBE_VERSION and
// KUBE_API_VERSIONS; then each env entry as ARGOCD_ENV_<name>, its value
// expanded over the variables before the entries; then the parameters as
// ARGOCD_APP_PARAMETERS (JSON) and PARAM_<NAME> variables (a map's entries
// as PARAM_<NAME>_<KEY>, in key order; an array's as PARAM_<NAME>_<i>),
// names in capitals with every other character than A-Z, 0-9 and _ made _.
func pluginEnv(p *v1alpha1.ApplicationSourcePlugin, env BuildEnv, kubeVersion string, apiVersions []string) ([]string, error) {
	if kubeVersion != "" {
		v, err := version.ParseGeneric(kubeVersion)
		if err != nil {
			return nil, fmt.Errorf("could not parse kubernetes version %s: %w", kubeVersion, err)
		}
		kubeVersion = v.String()
	}
	base := append(env.list(), envVar{"KUBE_VERSION", kubeVersion}, envVar{"KUBE_API_VERSIONS", strings.Join(apiVersions, ",")})
	vars := varMap(base)
	out := make([]string, 0, len(base)+len(p.Env)+1+len(p.Parameters))
	for _, v := range base {
		out = append(out, v.name+"="+v.value)
	}
	for _, e := range p.Env {
		out = append(out, "ARGOCD_ENV_"+e.Name+"="+envsubst(e.Value, vars))
	}
	params, err := parametersJSON(p.Parameters)
	if err != nil {
		return nil, err
	}
	out = append(out, "ARGOCD_APP_PARAMETERS="+params)
	for _, param := range p.Parameters {
		base := "PARAM_" + escapeParamName(param.Name)
		if param.String != nil {
			out = append(out, base+"="+*param.String)
		}
		keys := make([]string, 0, len(param.Map))
		for k := range param.Map {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, base+"_"+escapeParamName(k)+"="+param.Map[k])
		}
		for i, v := range param.Array {
			out = append(out, fmt.Sprintf("%s_%d=%s", base, i, v))
		}
	}
	return out, nil
}

// parametersJSON is ARGOCD_APP_PARAMETERS as Argo CD marshals it: a list of
// objects with name, and string, map and array when set (a map or array
// set empty is {} or []); "null" for no parameters.
func parametersJSON(params []v1alpha1.ApplicationSourcePluginParameter) (string, error) {
	if params == nil {
		return "null", nil
	}
	list := make([]map[string]any, len(params))
	for i, p := range params {
		m := map[string]any{"name": p.Name}
		if p.String != nil {
			m["string"] = *p.String
		}
		if p.Map != nil {
			m["map"] = p.Map
		}
		if p.Array != nil {
			m["array"] = p.Array
		}
		list[i] = m
	}
	data, err := json.Marshal(list)
	if err != nil {
		return "", fmt.Errorf("failed to marshal plugin parameters: %w", err)
	}
	return string(data), nil
}

var paramNameInvalid = regexp.MustCompile(`[^A-Z0-9_]`)

// escapeParamName is Argo CD's escaped: capitals, and _ for every
// character but A-Z, 0-9 and _.
func escapeParamName(name string) string {
	return paramNameInvalid.ReplaceAllString(strings.ToUpper(name), "_")
}
