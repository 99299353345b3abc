package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tollgate-dev/tollgate/engine/render"
)

// appSource is one source of an Application that tollgate test renders from
// the local checkout.
type appSource struct {
	// Field is where the source sits in the Application, for messages:
	// "spec.source" or "spec.sources[1]".
	Field string
	// Path is the source's path in the repository ("." for the root).
	Path string
	// Options are the source's rendering options.
	Options render.Options
}

// appPlan is what resolveSources decided for an Application.
type appPlan struct {
	Sources []appSource
	// Skipped explains, one message each, the sources (or source options)
	// that are not rendered.
	Skipped []string
}

// resolveSources works out which sources of the Application app come from
// the repository under test (repoURL, normalized; "" matches nothing) and
// how to render each, the way Argo CD's repo server would: spec.sources
// replaces spec.source when it has entries. A field of the wrong type is an
// error naming the field.
func resolveSources(app map[string]any, repoURL string) (appPlan, error) {
	spec, err := optMap(app, "spec", "spec")
	if err != nil {
		return appPlan{}, err
	}
	dest, err := optMap(spec, "destination", "spec.destination")
	if err != nil {
		return appPlan{}, err
	}
	namespace, err := optString(dest, "namespace", "spec.destination.namespace")
	if err != nil {
		return appPlan{}, err
	}
	name, _ := nestedString(app, "metadata", "name")

	var raw []map[string]any
	var fields []string
	if list, ok := spec["sources"]; ok && list != nil {
		items, ok := list.([]any)
		if !ok {
			return appPlan{}, fmt.Errorf("spec.sources: want a list, got %s", typeName(list))
		}
		for i, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				return appPlan{}, fmt.Errorf("spec.sources[%d]: want an object, got %s", i, typeName(it))
			}
			raw = append(raw, m)
			fields = append(fields, fmt.Sprintf("spec.sources[%d]", i))
		}
	}
	if len(raw) == 0 {
		src, err := optMap(spec, "source", "spec.source")
		if err != nil {
			return appPlan{}, err
		}
		if src == nil {
			return appPlan{Skipped: []string{"has no spec.source or spec.sources; nothing to render"}}, nil
		}
		raw, fields = []map[string]any{src}, []string{"spec.source"}
	}

	refs, err := localRefs(raw, fields, repoURL)
	if err != nil {
		return appPlan{}, err
	}
	var plan appPlan
	for i, src := range raw {
		field := fields[i]
		s, skip, err := resolveSource(src, field, repoURL, refs)
		if err != nil {
			return appPlan{}, err
		}
		if skip != "" {
			plan.Skipped = append(plan.Skipped, field+": "+skip)
			continue
		}
		s.Options.Namespace, s.Options.AppName = namespace, name
		plan.Sources = append(plan.Sources, s)
		for _, f := range unsupportedFields(src) {
			plan.Skipped = append(plan.Skipped, fmt.Sprintf("%s.%s is not applied by tollgate test", field, f))
		}
	}
	return plan, nil
}

// localRefs returns the names of the `ref` sources that point at the
// repository under test; their `$name/...` value files are read from it.
func localRefs(raw []map[string]any, fields []string, repoURL string) (map[string]bool, error) {
	refs := map[string]bool{}
	for i, src := range raw {
		ref, err := optString(src, "ref", fields[i]+".ref")
		if err != nil {
			return nil, err
		}
		u, err := optString(src, "repoURL", fields[i]+".repoURL")
		if err != nil {
			return nil, err
		}
		if ref != "" && repoURL != "" && normalizeRepoURL(u) == repoURL {
			refs[ref] = true
		}
	}
	return refs, nil
}

// resolveSource resolves one source. It returns a non-empty skip message for
// a source that is not rendered.
func resolveSource(src map[string]any, field, repoURL string, refs map[string]bool) (appSource, string, error) {
	var s appSource
	s.Field = field
	var str [4]string
	for i, key := range []string{"repoURL", "path", "chart", "ref"} {
		v, err := optString(src, key, field+"."+key)
		if err != nil {
			return s, "", err
		}
		str[i] = v
	}
	url, path, chart, ref := str[0], str[1], str[2], str[3]
	switch {
	case url == "":
		return s, "has no repoURL; not rendered", nil
	case chart != "":
		return s, fmt.Sprintf("Helm chart %q from repository %s is not rendered (only sources from the repository under test are)", chart, url), nil
	case repoURL == "" || normalizeRepoURL(url) != repoURL:
		return s, fmt.Sprintf("repository %s is not the repository under test; not rendered", url), nil
	case ref != "" && path == "":
		return s, fmt.Sprintf("ref %q only provides value files; not rendered on its own", ref), nil
	case src["plugin"] != nil:
		return s, "config management plugins are not supported; not rendered", nil
	}
	if path == "" {
		path = "."
	}
	s.Path = path

	dir, err := directoryOptions(src, field)
	if err != nil {
		return s, "", err
	}
	kust, err := kustomizeOptions(src, field)
	if err != nil {
		return s, "", err
	}
	helm, skip, err := helmOptions(src, field, refs)
	if err != nil || skip != "" {
		return s, skip, err
	}
	s.Options = render.Options{Directory: dir, Kustomize: kust, Helm: helm}
	return s, "", nil
}

// directoryOptions reads source.directory.
func directoryOptions(src map[string]any, field string) (*render.DirectoryOptions, error) {
	field += ".directory"
	m, err := optMap(src, "directory", field)
	if err != nil || m == nil {
		return nil, err
	}
	var o render.DirectoryOptions
	if o.Recurse, err = optBool(m, "recurse", field+".recurse"); err != nil {
		return nil, err
	}
	if o.Include, err = optString(m, "include", field+".include"); err != nil {
		return nil, err
	}
	if o.Exclude, err = optString(m, "exclude", field+".exclude"); err != nil {
		return nil, err
	}
	return &o, nil
}

// kustomizeOptions reads source.kustomize.
func kustomizeOptions(src map[string]any, field string) (*render.KustomizeOptions, error) {
	field += ".kustomize"
	m, err := optMap(src, "kustomize", field)
	if err != nil || m == nil {
		return nil, err
	}
	var o render.KustomizeOptions
	if o.Images, err = optStrings(m, "images", field+".images"); err != nil {
		return nil, err
	}
	if o.NamePrefix, err = optString(m, "namePrefix", field+".namePrefix"); err != nil {
		return nil, err
	}
	if o.NameSuffix, err = optString(m, "nameSuffix", field+".nameSuffix"); err != nil {
		return nil, err
	}
	if o.Namespace, err = optString(m, "namespace", field+".namespace"); err != nil {
		return nil, err
	}
	if o.CommonLabels, err = optStringMap(m, "commonLabels", field+".commonLabels"); err != nil {
		return nil, err
	}
	if o.CommonAnnotations, err = optStringMap(m, "commonAnnotations", field+".commonAnnotations"); err != nil {
		return nil, err
	}
	return &o, nil
}

// helmOptions reads source.helm. Value files from a `ref` source of the
// repository under test ("$values/path") are read from the repository root;
// a value file from another repository skips the source.
func helmOptions(src map[string]any, field string, refs map[string]bool) (*render.HelmOptions, string, error) {
	field += ".helm"
	m, err := optMap(src, "helm", field)
	if err != nil || m == nil {
		return nil, "", err
	}
	var o render.HelmOptions
	files, err := optStrings(m, "valueFiles", field+".valueFiles")
	if err != nil {
		return nil, "", err
	}
	for _, f := range files {
		if ref, rest, ok := strings.Cut(f, "/"); ok && strings.HasPrefix(ref, "$") {
			if !refs[strings.TrimPrefix(ref, "$")] {
				return nil, fmt.Sprintf("value file %q comes from a source that is not the repository under test; not rendered", f), nil
			}
			f = "/" + rest
		}
		o.ValueFiles = append(o.ValueFiles, f)
	}
	if o.Values, err = optString(m, "values", field+".values"); err != nil {
		return nil, "", err
	}
	if o.ValuesObject, err = optMap(m, "valuesObject", field+".valuesObject"); err != nil {
		return nil, "", err
	}
	if o.ReleaseName, err = optString(m, "releaseName", field+".releaseName"); err != nil {
		return nil, "", err
	}
	if o.Namespace, err = optString(m, "namespace", field+".namespace"); err != nil {
		return nil, "", err
	}
	if o.SkipCrds, err = optBool(m, "skipCrds", field+".skipCrds"); err != nil {
		return nil, "", err
	}
	params, ok := m["parameters"]
	if !ok || params == nil {
		return &o, "", nil
	}
	list, ok := params.([]any)
	if !ok {
		return nil, "", fmt.Errorf("%s.parameters: want a list, got %s", field, typeName(params))
	}
	for i, it := range list {
		pf := fmt.Sprintf("%s.parameters[%d]", field, i)
		pm, ok := it.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("%s: want an object, got %s", pf, typeName(it))
		}
		var p render.HelmParameter
		if p.Name, err = optString(pm, "name", pf+".name"); err != nil {
			return nil, "", err
		}
		if p.Value, err = optString(pm, "value", pf+".value"); err != nil {
			return nil, "", err
		}
		if p.ForceString, err = optBool(pm, "forceString", pf+".forceString"); err != nil {
			return nil, "", err
		}
		o.Parameters = append(o.Parameters, p)
	}
	return &o, "", nil
}

// unsupportedFields lists the rendering options set in src that tollgate
// test does not apply, as "kustomize.patches" and the like, sorted.
func unsupportedFields(src map[string]any) []string {
	known := map[string][]string{
		"kustomize": {"replicas", "patches", "components", "forceCommonLabels", "forceCommonAnnotations", "labelWithoutSelector", "commonAnnotationsEnvsubst"},
		"helm":      {"fileParameters"},
		"directory": {"jsonnet"},
	}
	var out []string
	for section, fields := range known {
		m, _ := src[section].(map[string]any)
		for _, f := range fields {
			if v, ok := m[f]; ok && !isEmpty(v) {
				out = append(out, section+"."+f)
			}
		}
	}
	sort.Strings(out)
	return out
}

// isEmpty reports whether v is null, false, "" or an empty list or object.
func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// optMap returns m[key] as an object; nil when it is missing or null.
func optMap(m map[string]any, key, field string) (map[string]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	out, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an object, got %s", field, typeName(v))
	}
	return out, nil
}

// optString returns m[key] as a string; "" when it is missing or null.
func optString(m map[string]any, key, field string) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: want a string, got %s", field, typeName(v))
	}
	return s, nil
}

// optBool returns m[key] as a boolean; false when it is missing or null.
func optBool(m map[string]any, key, field string) (bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s: want a boolean, got %s", field, typeName(v))
	}
	return b, nil
}

// optStrings returns m[key] as a list of strings.
func optStrings(m map[string]any, key, field string) ([]string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a list of strings, got %s", field, typeName(v))
	}
	out := make([]string, 0, len(list))
	for i, it := range list {
		s, ok := it.(string)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: want a string, got %s", field, i, typeName(it))
		}
		out = append(out, s)
	}
	return out, nil
}

// optStringMap returns m[key] as a map of strings.
func optStringMap(m map[string]any, key, field string) (map[string]string, error) {
	obj, err := optMap(m, key, field)
	if err != nil || obj == nil {
		return nil, err
	}
	out := make(map[string]string, len(obj))
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s, ok := obj[k].(string)
		if !ok {
			return nil, fmt.Errorf("%s.%s: want a string, got %s", field, k, typeName(obj[k]))
		}
		out[k] = s
	}
	return out, nil
}

// nestedString returns the string at path inside obj.
func nestedString(obj map[string]any, path ...string) (string, bool) {
	cur := obj
	for i, p := range path {
		if i == len(path)-1 {
			s, ok := cur[p].(string)
			return s, ok
		}
		next, ok := cur[p].(map[string]any)
		if !ok {
			return "", false
		}
		cur = next
	}
	return "", false
}

// typeName names the JSON type of a decoded value for messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case int, int64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
