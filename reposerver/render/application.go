package render

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/version"

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

// AppInfo is what a render takes from the Application besides its source.
type AppInfo struct {
	// Name is the Application's instance name (InstanceName): its
	// ARGOCD_APP_NAME, and the name of its own override file. The part
	// after "_" is Helm's release name unless the source sets one.
	Name string
	// Namespace is the destination namespace.
	Namespace string
	// Project is the Application's AppProject (ARGOCD_APP_PROJECT_NAME).
	Project string
	// KubeVersion and APIVersions are the destination cluster's server
	// version and API versions ("group/version" and
	// "group/version/Kind"), which Helm charts see as .Capabilities unless
	// the source overrides them, as in Argo CD. Empty means the Helm SDK's
	// defaults.
	KubeVersion string
	APIVersions []string
}

// SourceOptions resolves one source of app for rendering as Argo CD's
// repo-server does: the override files of dir (the source's directory in
// the checkout at root: its path, or the chart's directory) merged in
// (MergeSourceOverrides, for the instance app.Name), then ApplicationOptions.
// It returns the merged source with the options. The repo-server and
// tollgate test resolve every source with it.
func SourceOptions(app AppInfo, s AppSource, root, dir, revision string, refs map[string]string) (AppSource, Options, error) {
	merge := s
	merge.Source.Path = dir
	merged, err := MergeSourceOverrides(root, merge, app.Name)
	if err != nil {
		return s, Options{}, err
	}
	merged.Source.Path = s.Source.Path
	opts, err := ApplicationOptions(app, merged, revision, refs)
	return merged, opts, err
}

// ApplicationOptions turns one source of the Application app, checked out
// at revision ("" when unknown), into render options: the one mapping the
// CLI, the engine and the repo-server share. Argo CD's build variables
// (BuildEnv) are substituted where Argo CD substitutes them. refs maps the
// ref names of the Application's other sources to the roots of their
// checkouts (see Options.Refs); a Helm value file naming a ref that is not
// there is an error naming the field. A field tollgate does not honour is
// an *UnsupportedError naming it.
func ApplicationOptions(app AppInfo, s AppSource, revision string, refs map[string]string) (Options, error) {
	opts := Options{Namespace: app.Namespace, AppName: nameOfInstance(app.Name), Refs: refs}
	src := s.Source
	if err := unsupported(s.Field, src); err != nil {
		return opts, err
	}
	var err error
	if opts.Type, err = explicitType(src); err != nil {
		return opts, fmt.Errorf("%s: %w", s.Field, err)
	}
	env := BuildEnv{
		AppName: app.Name, Namespace: app.Namespace, Project: app.Project, Revision: revision,
		RepoURL: src.RepoURL, Path: src.Path, TargetRevision: src.TargetRevision,
	}
	if d := src.Directory; d != nil {
		opts.Directory = &DirectoryOptions{Recurse: d.Recurse, Include: d.Include, Exclude: d.Exclude, DisableExtensionFilter: d.DisableExtensionFilter}
		j, err := jsonnetOptions(s.Field+".directory.jsonnet", d, env)
		if err != nil {
			return opts, err
		}
		opts.Directory.Jsonnet = j
	}
	if k := src.Kustomize; k != nil {
		ko, err := kustomizeOptions(s.Field+".kustomize", k, env)
		if err != nil {
			return opts, err
		}
		opts.Kustomize = ko
	}
	if h := src.Helm; h != nil {
		ho, err := helmOptions(s.Field+".helm", h, env, refs)
		if err != nil {
			return opts, err
		}
		opts.Helm = ho
	}
	if p := src.Plugin; p != nil {
		po, err := pluginOptions(s.Field+".plugin", p, env, app.KubeVersion, app.APIVersions)
		if err != nil {
			return opts, err
		}
		opts.Plugin = po
	}
	return opts, capabilities(s.Field, src, app, &opts)
}

// explicitType returns the source kind its blocks name, as Argo CD's
// ExplicitType: "" for none, an error for more than one.
func explicitType(src v1alpha1.ApplicationSource) (string, error) {
	var names, kinds []string
	for _, t := range []struct {
		set        bool
		name, kind string
	}{
		{src.Kustomize != nil, "Kustomize", KindKustomize},
		{src.Helm != nil, "Helm", KindHelm},
		{src.Directory != nil, "Directory", KindDirectory},
		{src.Plugin != nil, "Plugin", KindPlugin},
	} {
		if t.set {
			names, kinds = append(names, t.name), append(kinds, t.kind)
		}
	}
	switch len(names) {
	case 0:
		return "", nil
	case 1:
		return kinds[0], nil
	}
	return "", fmt.Errorf("multiple application sources defined: %s", strings.Join(names, ","))
}

// capabilities sets what a Helm chart of the source would see as
// .Capabilities (the repo-server keeps them only for sources that render
// as Helm), as Argo CD's GetKubeVersionOrDefault and
// GetAPIVersionsOrDefault choose them: the
// source's helm (else kustomize) kubeVersion and apiVersions, else the
// destination cluster's. The version is normalised as Argo CD does
// ("v1.29.3+k3s1" is "1.29.3"); an override list replaces the cluster's.
func capabilities(field string, src v1alpha1.ApplicationSource, app AppInfo, opts *Options) error {
	kubeVersion, kvField, apiVersions := app.KubeVersion, "", app.APIVersions
	if k := src.Kustomize; k != nil {
		if k.KubeVersion != "" {
			kubeVersion, kvField = k.KubeVersion, field+".kustomize.kubeVersion"
		}
		if len(k.APIVersions) > 0 {
			apiVersions = k.APIVersions
		}
	}
	if h := src.Helm; h != nil {
		if h.KubeVersion != "" {
			kubeVersion, kvField = h.KubeVersion, field+".helm.kubeVersion"
		}
		if len(h.APIVersions) > 0 {
			apiVersions = h.APIVersions
		}
	}
	if kubeVersion != "" {
		v, err := version.ParseGeneric(kubeVersion)
		if err != nil {
			if kvField == "" {
				kvField = "destination cluster version"
			}
			return fmt.Errorf("%s: could not parse kubernetes version %s: %w", kvField, kubeVersion, err)
		}
		kubeVersion = v.String()
	}
	if kubeVersion != "" || len(apiVersions) > 0 {
		opts.Capabilities = &Capabilities{KubeVersion: kubeVersion, APIVersions: apiVersions}
	}
	return nil
}

// kustomizeOptions maps spec.source.kustomize (at field) the way Argo CD's
// kustomize.Build feeds it to `kustomize edit`: images and common label
// values always expanded, common annotation values only with
// commonAnnotationsEnvsubst, replica counts as integers.
func kustomizeOptions(field string, k *v1alpha1.ApplicationSourceKustomize, env BuildEnv) (*KustomizeOptions, error) {
	if k.LabelIncludeTemplates && !k.LabelWithoutSelector {
		// kustomize edit add label --include-templates refuses this too.
		return nil, fmt.Errorf("%s.labelIncludeTemplates: needs labelWithoutSelector (kustomize: --without-selector flag must be specified for --include-templates to work)", field)
	}
	o := &KustomizeOptions{
		NamePrefix: k.NamePrefix, NameSuffix: k.NameSuffix, Namespace: k.Namespace,
		CommonLabels:      env.envsubstMap(k.CommonLabels),
		CommonAnnotations: k.CommonAnnotations,
		ForceCommonLabels: k.ForceCommonLabels, ForceCommonAnnotations: k.ForceCommonAnnotations,
		LabelWithoutSelector: k.LabelWithoutSelector, LabelIncludeTemplates: k.LabelIncludeTemplates,
		Components: k.Components, IgnoreMissingComponents: k.IgnoreMissingComponents,
	}
	if k.CommonAnnotationsEnvsubst {
		o.CommonAnnotations = env.envsubstMap(k.CommonAnnotations)
	}
	for _, img := range k.Images {
		o.Images = append(o.Images, env.Envsubst(img))
	}
	for i, r := range k.Replicas {
		count := r.Count.IntValue()
		if r.Count.Type == intstr.String {
			n, err := strconv.Atoi(r.Count.StrVal)
			if err != nil {
				return nil, fmt.Errorf("%s.replicas[%d].count: expected integer value for count. Received: %s", field, i, r.Count.StrVal)
			}
			count = n
		}
		o.Replicas = append(o.Replicas, KustomizeReplica{Name: r.Name, Count: count})
	}
	for i, p := range k.Patches {
		if p.Path == "" && p.Patch == "" {
			return nil, fmt.Errorf("%s.patches[%d]: set path or patch", field, i)
		}
		kp := KustomizePatch{Path: p.Path, Patch: p.Patch, Options: p.Options}
		if t := p.Target; t != nil {
			kp.Target = &KustomizeTarget{
				Group: t.Group, Version: t.Version, Kind: t.Kind, Name: t.Name, Namespace: t.Namespace,
				LabelSelector: t.LabelSelector, AnnotationSelector: t.AnnotationSelector,
			}
		}
		o.Patches = append(o.Patches, kp)
	}
	return o, nil
}

// jsonnetOptions maps spec.source.directory.jsonnet (at field) as Argo
// CD's makeJsonnetVM does: TLA and external variable values expanded,
// libraries as written.
func jsonnetOptions(field string, d *v1alpha1.ApplicationSourceDirectory, env BuildEnv) (JsonnetOptions, error) {
	var j JsonnetOptions
	if d.Jsonnet == nil || len(d.Jsonnet.Raw) == 0 {
		return j, nil
	}
	var spec struct {
		TLAs    []JsonnetVar `json:"tlas"`
		ExtVars []JsonnetVar `json:"extVars"`
		Libs    []string     `json:"libs"`
	}
	if err := json.Unmarshal(d.Jsonnet.Raw, &spec); err != nil {
		return j, fmt.Errorf("%s: %w", field, err)
	}
	for _, list := range []struct {
		name string
		in   []JsonnetVar
		out  *[]JsonnetVar
	}{{"tlas", spec.TLAs, &j.TLAs}, {"extVars", spec.ExtVars, &j.ExtVars}} {
		for i, v := range list.in {
			if v.Name == "" {
				return j, fmt.Errorf("%s.%s[%d].name: must not be empty", field, list.name, i)
			}
			v.Value = env.Envsubst(v.Value)
			*list.out = append(*list.out, v)
		}
	}
	j.Libs = spec.Libs
	return j, nil
}

// helmOptions maps spec.source.helm (at field) as Argo CD's helmTemplate
// does: parameter values and value file paths expanded.
func helmOptions(field string, h *v1alpha1.ApplicationSourceHelm, env BuildEnv, refs map[string]string) (*HelmOptions, error) {
	ho := &HelmOptions{
		Values: h.Values, ReleaseName: h.ReleaseName,
		Namespace: h.Namespace, SkipCrds: h.SkipCrds, IgnoreMissingValueFiles: h.IgnoreMissingValueFiles,
		SkipTests: h.SkipTests, SkipSchemaValidation: h.SkipSchemaValidation,
	}
	for i, vf := range h.ValueFiles {
		f := fmt.Sprintf("%s.valueFiles[%d]", field, i)
		vf, err := env.valueFile(vf, refs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if strings.Contains(vf, "://") {
			return nil, &UnsupportedError{Field: f, Why: "remote value files (" + vf + ") are not fetched"}
		}
		ho.ValueFiles = append(ho.ValueFiles, vf)
	}
	if h.ValuesObject != nil && len(h.ValuesObject.Raw) > 0 {
		// As Argo CD's ValuesYAML: valuesObject, when set (null too),
		// replaces values.
		ho.Values = ""
		if string(h.ValuesObject.Raw) != "null" {
			if err := json.Unmarshal(h.ValuesObject.Raw, &ho.ValuesObject); err != nil {
				return nil, fmt.Errorf("%s.valuesObject: want an object: %w", field, err)
			}
		}
	}
	for _, p := range h.Parameters {
		ho.Parameters = append(ho.Parameters, HelmParameter{Name: p.Name, Value: env.Envsubst(p.Value), ForceString: p.ForceString})
	}
	for i, p := range h.FileParameters {
		f := fmt.Sprintf("%s.fileParameters[%d].path", field, i)
		path, err := env.valueFile(p.Path, refs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if strings.Contains(path, "://") {
			return nil, &UnsupportedError{Field: f, Why: "remote files (" + path + ") are not fetched"}
		}
		ho.FileParameters = append(ho.FileParameters, HelmFileParameter{Name: p.Name, Path: path})
	}
	return ho, nil
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
	add(src.TagPrefix != "", "tagPrefix")
	if k := src.Kustomize; k != nil {
		// Argo CD selects a kustomize binary registered in argocd-cm
		// (kustomize.path.<version>) and fails when there is none.
		add(k.Version != "", "kustomize.version")
	}
	if h := src.Helm; h != nil {
		add(h.Version != "" && h.Version != "v3", "helm.version")
	}
	if len(set) == 0 {
		return nil
	}
	why := ""
	switch set[0] {
	case "tagPrefix":
		why = "a Git targetRevision is not read as a semver constraint over tags"
	case "kustomize.version":
		why = "tollgate builds with the kustomize library it embeds (sigs.k8s.io/kustomize/api " + moduleVersion("sigs.k8s.io/kustomize/api") + ")"
	}
	return &UnsupportedError{Field: field + "." + set[0], Why: why}
}

// moduleVersion returns the version of the module path linked into this
// binary, or "unknown".
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				return m.Version
			}
		}
	}
	return "unknown"
}
