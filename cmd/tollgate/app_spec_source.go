package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// helmCommaRx escapes the commas of a Helm parameter's value, as argocd's
// NewHelmParameter does, so that helm --set reads one value.
var helmCommaRx = regexp.MustCompile(`([^\\]),`)

// applySource sets the field of src that flag names, if any, as argocd's
// ConstructSource does.
func (o *appSpecOptions) applySource(flag string, src *v1alpha1.ApplicationSource) error {
	switch flag {
	case "repo":
		src.RepoURL = o.repoURL
	case "path":
		src.Path = o.appPath
	case "helm-chart":
		src.Chart = o.chart
	case "revision":
		src.TargetRevision = o.revision
	case "ref":
		src.Ref = o.ref
	case "source-name":
		src.Name = o.sourceName
	case "config-management-plugin":
		src.Plugin = &v1alpha1.ApplicationSourcePlugin{Name: o.configManagementPlugin}
	case "plugin-env":
		if src.Plugin == nil {
			src.Plugin = &v1alpha1.ApplicationSourcePlugin{}
		}
		for _, text := range o.pluginEnvs {
			name, value, ok := strings.Cut(text, "=")
			if !ok {
				return fmt.Errorf("expected env entry of the form: param=value but received: %s", text)
			}
			e := v1alpha1.EnvEntry{Name: name, Value: value}
			if i := slices.IndexFunc(src.Plugin.Env, func(c v1alpha1.EnvEntry) bool { return c.Name == name }); i >= 0 {
				src.Plugin.Env[i] = e
			} else {
				src.Plugin.Env = append(src.Plugin.Env, e)
			}
		}
	case "directory-recurse", "directory-exclude", "directory-include", "directory-disable-extension-filter":
		if src.Directory == nil {
			src.Directory = &v1alpha1.ApplicationSourceDirectory{}
		}
		switch flag {
		case "directory-recurse":
			src.Directory.Recurse = o.directoryRecurse
		case "directory-exclude":
			src.Directory.Exclude = o.directoryExclude
		case "directory-include":
			src.Directory.Include = o.directoryInclude
		default:
			src.Directory.DisableExtensionFilter = o.directoryDisableExtensionFilter
		}
	case "jsonnet-tla-str", "jsonnet-tla-code", "jsonnet-ext-var-str", "jsonnet-ext-var-code", "jsonnet-libs":
		return o.applyJsonnet(flag, src)
	default:
		if err := o.applyHelm(flag, src); err != nil {
			return err
		}
		return o.applyKustomize(flag, src)
	}
	return nil
}

// applyHelm sets the Helm field flag names, as argocd's setHelmOpt does: a
// false or empty value leaves the field as it is.
func (o *appSpecOptions) applyHelm(flag string, src *v1alpha1.ApplicationSource) error {
	if !strings.HasPrefix(flag, "helm-") && flag != "values" && flag != "ignore-missing-value-files" && flag != "values-literal-file" && flag != "release-name" {
		return nil
	}
	if src.Helm == nil {
		src.Helm = &v1alpha1.ApplicationSourceHelm{}
	}
	h := src.Helm
	setIf := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	switch flag {
	case "values":
		if len(o.valuesFiles) > 0 {
			h.ValueFiles = o.valuesFiles
		}
	case "ignore-missing-value-files":
		h.IgnoreMissingValueFiles = h.IgnoreMissingValueFiles || o.ignoreMissingValueFiles
	case "values-literal-file":
		read := o.readFile
		if read == nil {
			read = os.ReadFile
		}
		data, err := read(o.valuesLiteralFile)
		if err != nil {
			return fmt.Errorf("read values: %w", err)
		}
		if err := setValuesString(h, string(data)); err != nil {
			return err
		}
	case "release-name":
		setIf(&h.ReleaseName, o.releaseName)
	case "helm-version":
		setIf(&h.Version, o.helmVersion)
	case "helm-pass-credentials":
		h.PassCredentials = h.PassCredentials || o.helmPassCredentials
	case "helm-skip-crds":
		h.SkipCrds = h.SkipCrds || o.helmSkipCrds
	case "helm-skip-schema-validation":
		h.SkipSchemaValidation = h.SkipSchemaValidation || o.helmSkipSchemaValidation
	case "helm-skip-tests":
		h.SkipTests = h.SkipTests || o.helmSkipTests
	case "helm-namespace":
		setIf(&h.Namespace, o.helmNamespace)
	case "helm-kube-version":
		setIf(&h.KubeVersion, o.helmKubeVersion)
	case "helm-api-versions":
		if len(o.helmAPIVersions) > 0 {
			h.APIVersions = o.helmAPIVersions
		}
	case "helm-set", "helm-set-string":
		list := o.helmSets
		if flag == "helm-set-string" {
			list = o.helmSetStrings
		}
		for _, text := range list {
			p, err := newHelmParameter(text, flag == "helm-set-string")
			if err != nil {
				return err
			}
			addHelmParameter(h, p)
		}
	case "helm-set-file":
		for _, text := range o.helmSetFiles {
			name, path, ok := strings.Cut(text, "=")
			if !ok {
				return fmt.Errorf("expected helm file parameter of the form param=path but received: %s", text)
			}
			p := v1alpha1.HelmFileParameter{Name: name, Path: helmCommaRx.ReplaceAllString(path, `$1\,`)}
			if i := slices.IndexFunc(h.FileParameters, func(c v1alpha1.HelmFileParameter) bool { return c.Name == name }); i >= 0 {
				h.FileParameters[i] = p
			} else {
				h.FileParameters = append(h.FileParameters, p)
			}
		}
	}
	if reflect.ValueOf(*h).IsZero() {
		src.Helm = nil
	}
	return nil
}

// newHelmParameter reads name=value as argocd's NewHelmParameter does.
func newHelmParameter(text string, forceString bool) (v1alpha1.HelmParameter, error) {
	name, value, ok := strings.Cut(text, "=")
	if !ok {
		return v1alpha1.HelmParameter{}, fmt.Errorf("expected helm parameter of the form param=value but received: %s", text)
	}
	return v1alpha1.HelmParameter{Name: name, Value: helmCommaRx.ReplaceAllString(value, `$1\,`), ForceString: forceString}, nil
}

// addHelmParameter replaces the parameter of p's name, or appends p.
func addHelmParameter(h *v1alpha1.ApplicationSourceHelm, p v1alpha1.HelmParameter) {
	if i := slices.IndexFunc(h.Parameters, func(c v1alpha1.HelmParameter) bool { return c.Name == p.Name }); i >= 0 {
		h.Parameters[i] = p
		return
	}
	h.Parameters = append(h.Parameters, p)
}

// setValuesString sets the literal values block as argocd's
// SetValuesString does: YAML becomes valuesObject; "" clears both.
func setValuesString(h *v1alpha1.ApplicationSourceHelm, value string) error {
	h.Values = ""
	if value == "" {
		h.ValuesObject = nil
		return nil
	}
	data, err := yaml.YAMLToJSON([]byte(value))
	if err != nil {
		return fmt.Errorf("failed converting yaml to json: %w", err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("failed to unmarshal json: %w", err)
	}
	switch v.(type) {
	case string, map[string]any:
	default:
		return fmt.Errorf("invalid type %q", reflect.TypeOf(v))
	}
	h.ValuesObject = &runtime.RawExtension{Raw: data}
	return nil
}

// setParameterOverrides applies -p name=value to src as Helm parameters,
// as argocd's does for a Helm source (the only kind it takes them for).
func setParameterOverrides(src *v1alpha1.ApplicationSource, params []string) error {
	if len(params) == 0 {
		return nil
	}
	helm := src.Helm != nil || src.Chart != ""
	if !helm && (src.Kustomize != nil || src.Directory != nil || src.Plugin != nil || !strings.Contains(params[0], "=")) {
		return fmt.Errorf("--parameter: parameters can only be set against Helm applications")
	}
	if src.Helm == nil {
		src.Helm = &v1alpha1.ApplicationSourceHelm{}
	}
	for _, text := range params {
		p, err := newHelmParameter(text, false)
		if err != nil {
			return fmt.Errorf("--parameter: %w", err)
		}
		addHelmParameter(src.Helm, p)
	}
	return nil
}

// applyKustomize sets the Kustomize field flag names, as argocd's
// setKustomizeOpt does.
func (o *appSpecOptions) applyKustomize(flag string, src *v1alpha1.ApplicationSource) error {
	if !strings.HasPrefix(flag, "kustomize-") && flag != "nameprefix" && flag != "namesuffix" && flag != "ignore-missing-components" {
		return nil
	}
	if src.Kustomize == nil {
		src.Kustomize = &v1alpha1.ApplicationSourceKustomize{}
	}
	k := src.Kustomize
	setIf := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	switch flag {
	case "nameprefix":
		setIf(&k.NamePrefix, o.namePrefix)
	case "namesuffix":
		setIf(&k.NameSuffix, o.nameSuffix)
	case "kustomize-version":
		setIf(&k.Version, o.kustomizeVersion)
	case "kustomize-namespace":
		setIf(&k.Namespace, o.kustomizeNamespace)
	case "kustomize-image":
		for _, img := range o.kustomizeImages {
			if i := slices.IndexFunc(k.Images, func(c string) bool { return kustomizeImageMatch(c, img) }); i >= 0 {
				k.Images[i] = img
			} else {
				k.Images = append(k.Images, img)
			}
		}
	case "kustomize-replica":
		for _, text := range o.kustomizeReplicas {
			name, count, ok := strings.Cut(text, "=")
			if !ok {
				return fmt.Errorf("expected parameter of the form: name=count. Received: %s", text)
			}
			r := v1alpha1.KustomizeReplica{Name: name, Count: intstr.Parse(count)}
			if r.Count.Type == intstr.String {
				return fmt.Errorf("expected integer value for count. Received: %s", count)
			}
			if i := slices.IndexFunc(k.Replicas, func(c v1alpha1.KustomizeReplica) bool { return c.Name == name }); i >= 0 {
				k.Replicas[i] = r
			} else {
				k.Replicas = append(k.Replicas, r)
			}
		}
	case "kustomize-common-label", "kustomize-common-annotation":
		list := o.kustomizeCommonLabels
		if flag == "kustomize-common-annotation" {
			list = o.kustomizeCommonAnnotations
		}
		m, err := parseLabels(list)
		if err != nil {
			return err
		}
		if flag == "kustomize-common-label" {
			k.CommonLabels = m
		} else {
			k.CommonAnnotations = m
		}
	case "kustomize-force-common-label":
		k.ForceCommonLabels = k.ForceCommonLabels || o.kustomizeForceCommonLabels
	case "kustomize-force-common-annotation":
		k.ForceCommonAnnotations = k.ForceCommonAnnotations || o.kustomizeForceCommonAnnotations
	case "kustomize-label-without-selector":
		k.LabelWithoutSelector = k.LabelWithoutSelector || o.kustomizeLabelWithoutSelector
	case "kustomize-label-include-templates":
		k.LabelIncludeTemplates = k.LabelIncludeTemplates || o.kustomizeLabelIncludeTemplates
	case "ignore-missing-components":
		k.IgnoreMissingComponents = k.IgnoreMissingComponents || o.ignoreMissingComponents
	}
	if reflect.ValueOf(*k).IsZero() {
		src.Kustomize = nil
	}
	return nil
}

// kustomizeImageMatch reports whether two Kustomize image overrides name
// the same image (the part before the first =, : or @ of b's kind), as
// argocd's KustomizeImage.Match does.
func kustomizeImageMatch(a, b string) bool {
	delim := ":"
	for _, d := range []string{"=", ":", "@"} {
		if strings.Contains(b, d) {
			delim = d
			break
		}
	}
	an, _, _ := strings.Cut(a, delim)
	bn, _, _ := strings.Cut(b, delim)
	return an == bn
}

// parseLabels reads key=value pairs as argocd's label.Parse does.
func parseLabels(list []string) (map[string]string, error) {
	if list == nil {
		return nil, nil
	}
	m := map[string]string{}
	for _, r := range list {
		fields := strings.Split(r, "=")
		if len(fields) != 2 {
			return nil, fmt.Errorf("labels should have key=value, but instead got: %s", r)
		}
		m[fields[0]] = fields[1]
	}
	return m, nil
}

// jsonnetVar is Argo CD's JsonnetVar.
type jsonnetVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Code  bool   `json:"code"`
}

// applyJsonnet appends the Jsonnet arguments, ext vars or libs flag names
// to the directory's jsonnet options, as argocd's setJsonnetOpt* do;
// members of the options tollgate does not know are kept.
func (o *appSpecOptions) applyJsonnet(flag string, src *v1alpha1.ApplicationSource) error {
	if src.Directory == nil {
		src.Directory = &v1alpha1.ApplicationSourceDirectory{}
	}
	opts := map[string]any{}
	if j := src.Directory.Jsonnet; j != nil && len(j.Raw) > 0 {
		if err := json.Unmarshal(j.Raw, &opts); err != nil {
			return fmt.Errorf("read spec.source.directory.jsonnet: %w", err)
		}
	}
	add := func(key string, texts []string, code bool) {
		list, _ := opts[key].([]any)
		for _, t := range texts {
			name, value, _ := strings.Cut(t, "=")
			list = append(list, jsonnetVar{Name: name, Value: value, Code: code})
		}
		opts[key] = list
	}
	switch flag {
	case "jsonnet-tla-str":
		add("tlas", o.jsonnetTLAStr, false)
	case "jsonnet-tla-code":
		add("tlas", o.jsonnetTLACode, true)
	case "jsonnet-ext-var-str":
		add("extVars", o.jsonnetExtVarStr, false)
	case "jsonnet-ext-var-code":
		add("extVars", o.jsonnetExtVarCode, true)
	case "jsonnet-libs":
		libs, _ := opts["libs"].([]any)
		for _, l := range o.jsonnetLibs {
			libs = append(libs, l)
		}
		opts["libs"] = libs
	}
	raw, err := json.Marshal(opts)
	if err != nil {
		return fmt.Errorf("encode jsonnet options: %w", err)
	}
	src.Directory.Jsonnet = &runtime.RawExtension{Raw: raw}
	return nil
}
