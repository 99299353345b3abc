package notify

// AppDetail is what repo.GetAppDetails returns: what the repo-server tells
// of the Application's first source, with Argo CD's type and field names
// (util/notification/expression/shared), so that a template written for
// Argo CD, such as
//
//	{{ (call .repo.GetAppDetails).Helm.GetParameterValueByName "image.tag" }}
//
// reads the same.
type AppDetail struct {
	// Type is the source's type: Helm, Kustomize, Directory or Plugin.
	Type string
	// Helm is set for a Helm source.
	Helm *CustomHelmAppSpec
	// Kustomize is set for a Kustomize source.
	Kustomize *KustomizeAppSpec
	// Directory is never set, as Argo CD's repo-server never sets it.
	Directory *DirectoryAppSpec
}

// CustomHelmAppSpec is a Helm source's details and the Application's own
// parameters, which win over the chart's.
type CustomHelmAppSpec struct {
	HelmAppSpec HelmAppSpec
	// HelmParameterOverrides are the source's spec...helm.parameters.
	HelmParameterOverrides []HelmParameter
}

// HelmAppSpec is what the repo-server reads of a Helm chart.
type HelmAppSpec struct {
	// Name is empty, as Argo CD's repo-server leaves it.
	Name string
	// ValueFiles are the value files under the chart directory.
	ValueFiles []string
	// Parameters are values.yaml and the source's value files, flattened
	// ("image.tag"), sorted by name.
	Parameters []*HelmParameter
	// Values is the chart's values.yaml.
	Values string
	// FileParameters are the source's spec...helm.fileParameters.
	FileParameters []*HelmFileParameter
}

// HelmParameter is a Helm parameter, as spec.source.helm.parameters
// writes it.
type HelmParameter struct {
	Name        string
	Value       string
	ForceString bool
}

// HelmFileParameter is a Helm file parameter, as
// spec.source.helm.fileParameters writes it.
type HelmFileParameter struct {
	Name string
	Path string
}

// KustomizeAppSpec is what the repo-server tells of a Kustomize source.
type KustomizeAppSpec struct {
	// Images are the images of the rendered containers and init
	// containers, sorted.
	Images []string
}

// DirectoryAppSpec stands for Argo CD's type of the same name.
type DirectoryAppSpec struct{}

// GetParameterValueByName is the value of parameter name: the
// Application's own parameter of that name, else the chart's, else "".
func (h CustomHelmAppSpec) GetParameterValueByName(name string) string {
	for _, p := range h.HelmParameterOverrides {
		if p.Name == name {
			return p.Value
		}
	}
	for _, p := range h.HelmAppSpec.Parameters {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// GetFileParameterPathByName is the path of the file parameter name, ""
// without one.
func (h CustomHelmAppSpec) GetFileParameterPathByName(name string) string {
	for _, p := range h.HelmAppSpec.FileParameters {
		if p.Name == name {
			return p.Path
		}
	}
	return ""
}
