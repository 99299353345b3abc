package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ApplicationSource is where an Application's manifests come from: a Git
// repository path or a Helm chart, and how to render them.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSource struct {
	// RepoURL is the Git or Helm repository URL.
	RepoURL string `json:"repoURL"`
	// Path is the directory in a Git repository.
	// +optional
	Path string `json:"path,omitempty"`
	// TargetRevision is a Git commit, tag or branch (default HEAD), or a Helm
	// chart version (semver constraint).
	// +optional
	TargetRevision string `json:"targetRevision,omitempty"`
	// Helm holds Helm options.
	// +optional
	Helm *ApplicationSourceHelm `json:"helm,omitempty"`
	// Kustomize holds Kustomize options.
	// +optional
	Kustomize *ApplicationSourceKustomize `json:"kustomize,omitempty"`
	// Directory holds options for a plain directory of manifests.
	// +optional
	Directory *ApplicationSourceDirectory `json:"directory,omitempty"`
	// Plugin makes the source a config management plugin's: the
	// repo-server hands it to a plugin sidecar (Argo CD's cmp-server
	// protocol) chosen by name or by discovery.
	// +optional
	Plugin *ApplicationSourcePlugin `json:"plugin,omitempty"`
	// Chart is the Helm chart name, for sources from a Helm repository.
	// +optional
	Chart string `json:"chart,omitempty"`
	// Ref names this source so other sources of the Application can use its
	// files ("$ref/path" in Helm valueFiles).
	// +optional
	Ref string `json:"ref,omitempty"`
	// Name is the display name of the source.
	// +optional
	Name string `json:"name,omitempty"`
	// TagPrefix filters Git tags by this prefix before targetRevision is
	// read as a semver constraint; tollgate refuses it (a Git
	// targetRevision is not read as a constraint).
	// +optional
	TagPrefix string `json:"tagPrefix,omitempty"`
}

// ApplicationSourceHelm holds Helm options for a source.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourceHelm struct {
	// ValueFiles are values files, relative to the chart, merged in order.
	// +optional
	ValueFiles []string `json:"valueFiles,omitempty"`
	// Parameters are applied like --set (or --set-string).
	// +optional
	Parameters []HelmParameter `json:"parameters,omitempty"`
	// ReleaseName is the release name; default the Application's name.
	// +optional
	ReleaseName string `json:"releaseName,omitempty"`
	// Values is a values YAML document, merged after ValueFiles.
	// +optional
	Values string `json:"values,omitempty"`
	// FileParameters are applied like --set-file.
	// +optional
	FileParameters []HelmFileParameter `json:"fileParameters,omitempty"`
	// PassCredentials passes repository credentials to all domains.
	// +optional
	PassCredentials bool `json:"passCredentials,omitempty"`
	// IgnoreMissingValueFiles skips value files that do not exist.
	// +optional
	IgnoreMissingValueFiles bool `json:"ignoreMissingValueFiles,omitempty"`
	// SkipCrds leaves out the chart's crds/ directory.
	// +optional
	SkipCrds bool `json:"skipCrds,omitempty"`
	// ValuesObject is a values object, merged after Values.
	// +optional
	ValuesObject *runtime.RawExtension `json:"valuesObject,omitempty"`
	// Namespace is the release namespace; default the destination namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Version is the Helm major version; only "v3" (or empty) is rendered.
	// +optional
	Version string `json:"version,omitempty"`
	// KubeVersion is the Kubernetes version templates see, in place of
	// the destination cluster's.
	// +optional
	KubeVersion string `json:"kubeVersion,omitempty"`
	// APIVersions are the API versions templates see, in place of the
	// destination cluster's.
	// +optional
	APIVersions []string `json:"apiVersions,omitempty"`
	// SkipTests leaves out the chart's test hooks.
	// +optional
	SkipTests bool `json:"skipTests,omitempty"`
	// SkipSchemaValidation skips the chart's values schema validation.
	// +optional
	SkipSchemaValidation bool `json:"skipSchemaValidation,omitempty"`
}

// HelmParameter is one --set name=value.
//
// +kubebuilder:pruning:PreserveUnknownFields
type HelmParameter struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Value string `json:"value,omitempty"`
	// ForceString makes it --set-string.
	// +optional
	ForceString bool `json:"forceString,omitempty"`
}

// HelmFileParameter is one --set-file name=path.
//
// +kubebuilder:pruning:PreserveUnknownFields
type HelmFileParameter struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Path string `json:"path,omitempty"`
}

// ApplicationSourceKustomize holds Kustomize options for a source, applied
// to the kustomization like `kustomize edit` does.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourceKustomize struct {
	// +optional
	NamePrefix string `json:"namePrefix,omitempty"`
	// +optional
	NameSuffix string `json:"nameSuffix,omitempty"`
	// Images override images like `kustomize edit set image`.
	// +optional
	Images []string `json:"images,omitempty"`
	// +optional
	CommonLabels map[string]string `json:"commonLabels,omitempty"`
	// +optional
	CommonAnnotations map[string]string `json:"commonAnnotations,omitempty"`
	// ForceCommonLabels overwrites labels already set.
	// +optional
	ForceCommonLabels bool `json:"forceCommonLabels,omitempty"`
	// ForceCommonAnnotations overwrites annotations already set.
	// +optional
	ForceCommonAnnotations bool `json:"forceCommonAnnotations,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Replicas []KustomizeReplica `json:"replicas,omitempty"`
	// +optional
	Patches []KustomizePatch `json:"patches,omitempty"`
	// +optional
	Components []string `json:"components,omitempty"`
	// Version selects a kustomize binary in Argo CD; tollgate refuses a
	// source that sets it (it builds with the kustomize it embeds).
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	CommonAnnotationsEnvsubst bool `json:"commonAnnotationsEnvsubst,omitempty"`
	// +optional
	LabelWithoutSelector bool `json:"labelWithoutSelector,omitempty"`
	// +optional
	LabelIncludeTemplates bool `json:"labelIncludeTemplates,omitempty"`
	// +optional
	KubeVersion string `json:"kubeVersion,omitempty"`
	// +optional
	APIVersions []string `json:"apiVersions,omitempty"`
	// +optional
	IgnoreMissingComponents bool `json:"ignoreMissingComponents,omitempty"`
}

// KustomizeReplica sets the replica count of the named workload.
//
// +kubebuilder:pruning:PreserveUnknownFields
type KustomizeReplica struct {
	Name string `json:"name"`
	// Count is a number, or a string holding one.
	Count intstr.IntOrString `json:"count"`
}

// KustomizePatch is a kustomize patch, inline or from a file.
//
// +kubebuilder:pruning:PreserveUnknownFields
type KustomizePatch struct {
	// +optional
	Path string `json:"path,omitempty"`
	// +optional
	Patch string `json:"patch,omitempty"`
	// +optional
	Target *KustomizeSelector `json:"target,omitempty"`
	// +optional
	Options map[string]bool `json:"options,omitempty"`
}

// KustomizeSelector selects the resources a patch applies to.
//
// +kubebuilder:pruning:PreserveUnknownFields
type KustomizeSelector struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
	// +optional
	AnnotationSelector string `json:"annotationSelector,omitempty"`
}

// ApplicationSourceDirectory holds options for a plain directory source.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourceDirectory struct {
	// Recurse reads subdirectories too.
	// +optional
	Recurse bool `json:"recurse,omitempty"`
	// Jsonnet holds the options of the directory's .jsonnet files: tlas,
	// extVars (each {name, value, code}) and libs, as in Argo CD.
	// +optional
	Jsonnet *runtime.RawExtension `json:"jsonnet,omitempty"`
	// Exclude is a glob of files to leave out.
	// +optional
	Exclude string `json:"exclude,omitempty"`
	// Include is a glob of files to read.
	// +optional
	Include string `json:"include,omitempty"`
	// DisableExtensionFilter reads files of any extension (not only
	// .yaml, .yml, .json and .jsonnet), so that Include and Exclude can
	// pick files such as *.yaml.sealed; those are decoded as YAML.
	// +optional
	DisableExtensionFilter bool `json:"disableExtensionFilter,omitempty"`
}

// ApplicationSourcePlugin holds the options of a config management plugin
// source, as Argo CD's.
type ApplicationSourcePlugin struct {
	// Name selects the plugin: its ConfigManagementPlugin's metadata.name,
	// with "-<spec.version>" when it has a version. Empty: the plugin whose
	// discovery rules match the source.
	// +optional
	Name string `json:"name,omitempty"`
	// Env is given to the plugin's commands, each as ARGOCD_ENV_<name>.
	// +optional
	Env []EnvEntry `json:"env,omitempty"`
	// Parameters are given to the plugin's commands as
	// ARGOCD_APP_PARAMETERS (JSON) and PARAM_<NAME> variables.
	// +optional
	Parameters []ApplicationSourcePluginParameter `json:"parameters,omitempty"`
}

// EnvEntry is one variable of a plugin's environment.
type EnvEntry struct {
	// Name is the variable's name, usually in capitals.
	Name string `json:"name"`
	// Value is its value; $VAR and ${VAR} of the build environment are
	// expanded.
	Value string `json:"value"`
}

// ApplicationSourcePluginParameter is one parameter of a plugin source: a
// string, a map or an array. A map or array given empty ({} or []) is set,
// one left out is not.
type ApplicationSourcePluginParameter struct {
	// Name is the parameter's name.
	// +optional
	Name string `json:"name,omitempty"`
	// String is its value as a string.
	// +optional
	String *string `json:"string,omitempty"`
	// Map is its value as a map.
	// +optional
	Map map[string]string `json:"map,omitempty"`
	// Array is its value as a list.
	// +optional
	Array []string `json:"array,omitempty"`
}
