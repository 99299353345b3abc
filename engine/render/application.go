package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// AppSource is one source of an Application with the field it sits in, for
// messages: "spec.source" or "spec.sources[1]".
type AppSource struct {
	Field  string
	Source v1alpha1.ApplicationSource
}

// ApplicationSources lists the sources of spec the way Argo CD reads them:
// spec.sources replaces spec.source when it has entries. It is empty when
// the spec has neither.
func ApplicationSources(spec v1alpha1.ApplicationSpec) []AppSource {
	if len(spec.Sources) > 0 {
		out := make([]AppSource, len(spec.Sources))
		for i, s := range spec.Sources {
			out[i] = AppSource{Field: fmt.Sprintf("spec.sources[%d]", i), Source: s}
		}
		return out
	}
	if spec.Source == nil {
		return nil
	}
	return []AppSource{{Field: "spec.source", Source: *spec.Source}}
}

// RefOnly reports whether a source of an Application with n sources only
// provides files to the others: among several sources, one with a ref and
// neither a path nor a chart. Argo CD does not render it; a ref source with
// a path is rendered and provides its files too.
func (s AppSource) RefOnly(n int) bool {
	return s.Source.Ref != "" && s.Source.Path == "" && s.Source.Chart == "" && n > 1
}

// UnsupportedError is a field of an ApplicationSource that tollgate does not
// honour. The source is refused rather than rendered differently from Argo
// CD.
type UnsupportedError struct {
	// Field is the full field path, such as spec.sources[1].kustomize.patches.
	Field string
	// Why is the reason, or "" for "is not supported".
	Why string
}

func (e *UnsupportedError) Error() string {
	if e.Why != "" {
		return e.Field + " is not supported: " + e.Why
	}
	return e.Field + " is not supported"
}

// ApplicationOptions turns one source of the Application named appName,
// deployed to namespace, into render options: the one mapping the CLI, the
// engine and the repo-server share. refs maps the ref names of the
// Application's other sources to the roots of their checkouts (see
// Options.Refs); a Helm value file naming a ref that is not there is an
// error naming the field. A field tollgate does not honour is an
// *UnsupportedError naming it.
func ApplicationOptions(appName, namespace string, s AppSource, refs map[string]string) (Options, error) {
	opts := Options{Namespace: namespace, AppName: appName, Refs: refs}
	src := s.Source
	if err := unsupported(s.Field, src); err != nil {
		return opts, err
	}
	if d := src.Directory; d != nil {
		opts.Directory = &DirectoryOptions{Recurse: d.Recurse, Include: d.Include, Exclude: d.Exclude}
	}
	if k := src.Kustomize; k != nil {
		opts.Kustomize = &KustomizeOptions{
			Images: k.Images, NamePrefix: k.NamePrefix, NameSuffix: k.NameSuffix, Namespace: k.Namespace,
			CommonLabels: k.CommonLabels, CommonAnnotations: k.CommonAnnotations,
		}
	}
	h := src.Helm
	if h == nil {
		return opts, nil
	}
	ho := &HelmOptions{
		ValueFiles: h.ValueFiles, Values: h.Values, ReleaseName: h.ReleaseName,
		Namespace: h.Namespace, SkipCrds: h.SkipCrds, IgnoreMissingValueFiles: h.IgnoreMissingValueFiles,
	}
	for i, vf := range h.ValueFiles {
		field := fmt.Sprintf("%s.helm.valueFiles[%d]", s.Field, i)
		if strings.Contains(vf, "://") {
			return opts, &UnsupportedError{Field: field, Why: "remote value files (" + vf + ") are not fetched"}
		}
		if name, ok := strings.CutPrefix(vf, "$"); ok {
			name, _, _ = strings.Cut(name, "/")
			if _, found := refs[name]; !found {
				return opts, fmt.Errorf("%s: no source of the application has ref %q", field, name)
			}
		}
	}
	if h.ValuesObject != nil && len(h.ValuesObject.Raw) > 0 && string(h.ValuesObject.Raw) != "null" {
		if err := json.Unmarshal(h.ValuesObject.Raw, &ho.ValuesObject); err != nil {
			return opts, fmt.Errorf("%s.helm.valuesObject: want an object: %w", s.Field, err)
		}
	}
	for _, p := range h.Parameters {
		ho.Parameters = append(ho.Parameters, HelmParameter{Name: p.Name, Value: p.Value, ForceString: p.ForceString})
	}
	opts.Helm = ho
	return opts, nil
}

// unsupported returns an *UnsupportedError for the first field of src that
// tollgate does not honour, in a fixed order.
func unsupported(field string, src v1alpha1.ApplicationSource) error {
	var set []string
	add := func(on bool, name string) {
		if on {
			set = append(set, name)
		}
	}
	add(src.Plugin != nil, "plugin")
	if d := src.Directory; d != nil {
		add(d.Jsonnet != nil && len(d.Jsonnet.Raw) > 0 && string(d.Jsonnet.Raw) != "{}" && string(d.Jsonnet.Raw) != "null", "directory.jsonnet")
	}
	if k := src.Kustomize; k != nil {
		add(len(k.Replicas) > 0, "kustomize.replicas")
		add(len(k.Patches) > 0, "kustomize.patches")
		add(len(k.Components) > 0, "kustomize.components")
		add(k.ForceCommonLabels, "kustomize.forceCommonLabels")
		add(k.ForceCommonAnnotations, "kustomize.forceCommonAnnotations")
		add(k.Version != "", "kustomize.version")
		add(k.CommonAnnotationsEnvsubst, "kustomize.commonAnnotationsEnvsubst")
		add(k.LabelWithoutSelector, "kustomize.labelWithoutSelector")
		add(k.LabelIncludeTemplates, "kustomize.labelIncludeTemplates")
		add(k.KubeVersion != "", "kustomize.kubeVersion")
		add(len(k.APIVersions) > 0, "kustomize.apiVersions")
		add(k.IgnoreMissingComponents, "kustomize.ignoreMissingComponents")
	}
	if h := src.Helm; h != nil {
		add(len(h.FileParameters) > 0, "helm.fileParameters")
		add(h.Version != "" && h.Version != "v3", "helm.version")
		add(h.KubeVersion != "", "helm.kubeVersion")
		add(len(h.APIVersions) > 0, "helm.apiVersions")
		add(h.SkipTests, "helm.skipTests")
		add(h.SkipSchemaValidation, "helm.skipSchemaValidation")
	}
	if len(set) == 0 {
		return nil
	}
	why := ""
	if set[0] == "plugin" {
		why = "config management plugins are not run"
	}
	return &UnsupportedError{Field: field + "." + set[0], Why: why}
}
