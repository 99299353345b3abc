package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApplicationSet generates Applications from one template and the
// parameters its generators produce, as Argo CD's ApplicationSet
// controller does. The fields are Argo CD's; those tollgate does not
// implement (the SCM provider, pull request, cluster decision resource and
// plugin generators, a progressive strategy) are kept as raw JSON so that
// the controller can refuse them by name instead of ignoring them.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=applicationsets,singular=applicationset,shortName={appset,appsets},scope=Namespaced
type ApplicationSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec ApplicationSetSpec `json:"spec"`
	// +optional
	Status ApplicationSetStatus `json:"status,omitzero"`
}

// ApplicationSetList is a list of ApplicationSets.
//
// +kubebuilder:object:root=true
type ApplicationSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []ApplicationSet `json:"items"`
}

// ApplicationSetSpec is the template, the generators and the policies of
// an ApplicationSet.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetSpec struct {
	// GoTemplate renders the template with Go's text/template and Sprig's
	// functions instead of {{param}} substitution.
	// +optional
	GoTemplate bool `json:"goTemplate,omitempty"`
	// Generators produce the parameter sets; each set renders one
	// Application.
	Generators []ApplicationSetGenerator `json:"generators"`
	// Template is the Application every parameter set renders.
	Template ApplicationSetTemplate `json:"template"`
	// SyncPolicy says what the ApplicationSet may do to the Applications
	// it generated.
	// +optional
	SyncPolicy *ApplicationSetSyncPolicy `json:"syncPolicy,omitempty"`
	// Strategy is how the generated Applications are synced: all at once
	// (the default), or step by step (RollingSync, Argo CD's progressive
	// syncs, run when the controller has --enable-progressive-syncs).
	// +optional
	Strategy *ApplicationSetStrategy `json:"strategy,omitempty"`
	// PreservedFields are annotations and labels of the generated
	// Applications kept as they are live.
	// +optional
	PreservedFields *ApplicationPreservedFields `json:"preservedFields,omitempty"`
	// GoTemplateOptions are options of text/template, such as
	// missingkey=error.
	// +optional
	GoTemplateOptions []string `json:"goTemplateOptions,omitempty"`
	// ApplyNestedSelectors is ignored, as in Argo CD 3: selectors of
	// nested generators always apply.
	// +optional
	ApplyNestedSelectors bool `json:"applyNestedSelectors,omitempty"`
	// IgnoreApplicationDifferences are fields of the generated
	// Applications the ApplicationSet does not overwrite.
	// +optional
	IgnoreApplicationDifferences []ApplicationSetResourceIgnoreDifferences `json:"ignoreApplicationDifferences,omitempty"`
	// TemplatePatch is a template rendered with each parameter set and
	// applied to the rendered Application as a strategic merge patch.
	// +optional
	TemplatePatch *string `json:"templatePatch,omitempty"`
}

// ApplicationSetTemplate is the Application an ApplicationSet renders: the
// metadata fields Argo CD copies, and the spec.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetTemplate struct {
	ApplicationSetTemplateMeta `json:"metadata"`
	Spec                       ApplicationSpec `json:"spec"`
}

// ApplicationSetTemplateMeta is the metadata of an ApplicationSet's
// template.
type ApplicationSetTemplateMeta struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	Finalizers []string `json:"finalizers,omitempty"`
}

// ApplicationSetGenerator is one generator of an ApplicationSet: exactly
// one of its generator fields is set, with an optional selector over the
// parameter sets it produces.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetGenerator struct {
	// +optional
	List *ListGenerator `json:"list,omitempty"`
	// +optional
	Clusters *ClusterGenerator `json:"clusters,omitempty"`
	// +optional
	Git *GitGenerator `json:"git,omitempty"`
	// +optional
	PullRequest *PullRequestGenerator `json:"pullRequest,omitempty"`
	// +optional
	SCMProvider *SCMProviderGenerator `json:"scmProvider,omitempty"`
	// +optional
	ClusterDecisionResource *DuckTypeGenerator `json:"clusterDecisionResource,omitempty"`
	// +optional
	Plugin *PluginGenerator `json:"plugin,omitempty"`
	// +optional
	Matrix *MatrixGenerator `json:"matrix,omitempty"`
	// +optional
	Merge *MergeGenerator `json:"merge,omitempty"`
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ApplicationSetNestedGenerator is a generator inside a matrix or merge
// generator: a matrix or merge there may hold only terminal generators,
// which is why it stays raw JSON here (as in Argo CD).
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetNestedGenerator struct {
	// +optional
	List *ListGenerator `json:"list,omitempty"`
	// +optional
	Clusters *ClusterGenerator `json:"clusters,omitempty"`
	// +optional
	Git *GitGenerator `json:"git,omitempty"`
	// +optional
	PullRequest *PullRequestGenerator `json:"pullRequest,omitempty"`
	// +optional
	SCMProvider *SCMProviderGenerator `json:"scmProvider,omitempty"`
	// +optional
	ClusterDecisionResource *DuckTypeGenerator `json:"clusterDecisionResource,omitempty"`
	// +optional
	Plugin *PluginGenerator `json:"plugin,omitempty"`
	// +optional
	Matrix *apiextensionsv1.JSON `json:"matrix,omitempty"`
	// +optional
	Merge *apiextensionsv1.JSON `json:"merge,omitempty"`
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ApplicationSetTerminalGenerator is a generator of a matrix or merge
// nested in another: no further nesting.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetTerminalGenerator struct {
	// +optional
	List *ListGenerator `json:"list,omitempty"`
	// +optional
	Clusters *ClusterGenerator `json:"clusters,omitempty"`
	// +optional
	Git *GitGenerator `json:"git,omitempty"`
	// +optional
	PullRequest *PullRequestGenerator `json:"pullRequest,omitempty"`
	// +optional
	SCMProvider *SCMProviderGenerator `json:"scmProvider,omitempty"`
	// +optional
	ClusterDecisionResource *DuckTypeGenerator `json:"clusterDecisionResource,omitempty"`
	// +optional
	Plugin *PluginGenerator `json:"plugin,omitempty"`
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// NestedMatrixGenerator is a matrix generator nested in a matrix or merge.
type NestedMatrixGenerator struct {
	Generators []ApplicationSetTerminalGenerator `json:"generators"`
}

// NestedMergeGenerator is a merge generator nested in a matrix or merge.
type NestedMergeGenerator struct {
	Generators []ApplicationSetTerminalGenerator `json:"generators"`
	MergeKeys  []string                          `json:"mergeKeys"`
}

// ListGenerator produces one parameter set per element.
type ListGenerator struct {
	// Elements are objects whose keys are the parameters.
	// +optional
	Elements []apiextensionsv1.JSON `json:"elements"`
	// ElementsYaml is a YAML list of such objects, usually a parameter of
	// an outer matrix rendered with toJson.
	// +optional
	ElementsYaml string `json:"elementsYaml,omitempty"`
	// Template overrides fields of the ApplicationSet's template for this
	// generator's Applications.
	// +optional
	Template ApplicationSetTemplate `json:"template,omitzero"`
}

// ClusterGenerator produces one parameter set per cluster Secret of Argo
// CD (label argocd.argoproj.io/secret-type=cluster), and for the in-cluster
// destination when no selector is given and no Secret describes it.
type ClusterGenerator struct {
	// +optional
	Selector metav1.LabelSelector `json:"selector,omitzero"`
	// +optional
	Template ApplicationSetTemplate `json:"template,omitzero"`
	// Values are added as values.<key>, each rendered with the cluster's
	// parameters.
	// +optional
	Values map[string]string `json:"values,omitempty"`
	// FlatList produces one parameter set holding every cluster as
	// "clusters".
	// +optional
	FlatList bool `json:"flatList,omitempty"`
}

// GitGenerator produces parameter sets from a Git repository: one per
// directory matching Directories, or per object in the files matching
// Files.
type GitGenerator struct {
	RepoURL string `json:"repoURL"`
	// +optional
	Directories []GitDirectoryGeneratorItem `json:"directories,omitempty"`
	// +optional
	Files []GitFileGeneratorItem `json:"files,omitempty"`
	// Revision is the branch, tag or commit read; "" is HEAD.
	// +optional
	Revision string `json:"revision"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	Template ApplicationSetTemplate `json:"template,omitzero"`
	// PathParamPrefix prefixes the path parameters: <prefix>.path.
	// +optional
	PathParamPrefix string `json:"pathParamPrefix,omitempty"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// GitDirectoryGeneratorItem is a path pattern of directories, included or
// excluded.
type GitDirectoryGeneratorItem struct {
	Path string `json:"path"`
	// +optional
	Exclude bool `json:"exclude,omitempty"`
}

// GitFileGeneratorItem is a path pattern of files, included or excluded.
type GitFileGeneratorItem struct {
	Path string `json:"path"`
	// +optional
	Exclude bool `json:"exclude,omitempty"`
}

// MatrixGenerator combines every parameter set of its first generator with
// every set of its second, which may use the first's parameters.
type MatrixGenerator struct {
	Generators []ApplicationSetNestedGenerator `json:"generators"`
	// +optional
	Template ApplicationSetTemplate `json:"template,omitzero"`
}

// MergeGenerator overrides the parameter sets of its first generator with
// those of the others that have the same values of MergeKeys.
type MergeGenerator struct {
	Generators []ApplicationSetNestedGenerator `json:"generators"`
	MergeKeys  []string                        `json:"mergeKeys"`
	// +optional
	Template ApplicationSetTemplate `json:"template,omitzero"`
}

// ApplicationsSyncPolicy says what an ApplicationSet may do to the
// Applications it generated.
//
// +kubebuilder:validation:Enum=create-only;create-update;create-delete;sync
type ApplicationsSyncPolicy string

// The policies of ApplicationsSyncPolicy.
const (
	ApplicationsSyncPolicyCreateOnly   ApplicationsSyncPolicy = "create-only"
	ApplicationsSyncPolicyCreateUpdate ApplicationsSyncPolicy = "create-update"
	ApplicationsSyncPolicyCreateDelete ApplicationsSyncPolicy = "create-delete"
	ApplicationsSyncPolicySync         ApplicationsSyncPolicy = "sync"
)

// AllowUpdate reports whether the policy updates Applications it generated
// before.
func (p ApplicationsSyncPolicy) AllowUpdate() bool {
	return p == ApplicationsSyncPolicyCreateUpdate || p == ApplicationsSyncPolicySync
}

// AllowDelete reports whether the policy deletes Applications it no longer
// generates.
func (p ApplicationsSyncPolicy) AllowDelete() bool {
	return p == ApplicationsSyncPolicyCreateDelete || p == ApplicationsSyncPolicySync
}

// ApplicationSetSyncPolicy is an ApplicationSet's sync policy.
type ApplicationSetSyncPolicy struct {
	// PreserveResourcesOnDeletion leaves the resources-finalizer off the
	// generated Applications, so deleting one leaves its resources.
	// +optional
	PreserveResourcesOnDeletion bool `json:"preserveResourcesOnDeletion,omitempty"`
	// +optional
	ApplicationsSync *ApplicationsSyncPolicy `json:"applicationsSync,omitempty"`
}

// ApplicationPreservedFields are annotation and label keys kept as they
// are on the live Applications.
type ApplicationPreservedFields struct {
	// +optional
	Annotations []string `json:"annotations,omitempty"`
	// +optional
	Labels []string `json:"labels,omitempty"`
}

// ApplicationSetResourceIgnoreDifferences are fields of the generated
// Applications (named Name, or all when Name is "") the ApplicationSet
// leaves as they are live.
type ApplicationSetResourceIgnoreDifferences struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// +optional
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
}

// ApplicationSetStatus is what the controller reports about an
// ApplicationSet.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetStatus struct {
	// +optional
	Conditions []ApplicationSetCondition `json:"conditions,omitempty"`
	// ApplicationStatus is the progressive sync's state of each
	// Application, written for a RollingSync strategy only.
	// +optional
	ApplicationStatus []ApplicationSetApplicationStatus `json:"applicationStatus,omitempty"`
	// Resources are the Applications the ApplicationSet generated, with
	// their sync and health.
	// +optional
	Resources []ResourceStatus `json:"resources,omitempty"`
	// +optional
	ResourcesCount int64 `json:"resourcesCount,omitempty"`
	// Health is the ApplicationSet's health, from its conditions
	// (ApplicationSetStatus.CalculateHealth).
	// +optional
	Health HealthStatus `json:"health,omitzero"`
}

// CalculateHealth is Argo CD's health of an ApplicationSet with the
// conditions of s: Degraded while ErrorOccurred is True, Progressing while
// a rollout is (RolloutProgressing True), Healthy when ResourcesUpToDate is
// True, with that condition's message; Unknown otherwise.
func (s *ApplicationSetStatus) CalculateHealth() HealthStatus {
	if len(s.Conditions) == 0 {
		return HealthStatus{Status: HealthStatusUnknown, Message: "No status conditions found for ApplicationSet"}
	}
	var progressing, healthy *ApplicationSetCondition
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if c.Status != ApplicationSetConditionStatusTrue {
			continue
		}
		switch c.Type {
		case ApplicationSetConditionErrorOccurred:
			return HealthStatus{Status: HealthStatusDegraded, Message: c.Message}
		case ApplicationSetConditionRolloutProgressing:
			progressing = c
		case ApplicationSetConditionResourcesUpToDate:
			healthy = c
		}
	}
	switch {
	case progressing != nil:
		return HealthStatus{Status: HealthStatusProgressing, Message: progressing.Message}
	case healthy != nil:
		return HealthStatus{Status: HealthStatusHealthy, Message: healthy.Message}
	}
	return HealthStatus{Status: HealthStatusUnknown, Message: "Waiting for health status to be determined"}
}

// ApplicationSetCondition is a condition of an ApplicationSet.
type ApplicationSetCondition struct {
	Type    ApplicationSetConditionType `json:"type"`
	Message string                      `json:"message"`
	// +optional
	LastTransitionTime *metav1.Time                  `json:"lastTransitionTime,omitempty"`
	Status             ApplicationSetConditionStatus `json:"status"`
	Reason             string                        `json:"reason"`
}

// ApplicationSetConditionType is the type of an ApplicationSetCondition.
type ApplicationSetConditionType string

// The condition types Argo CD reports.
const (
	ApplicationSetConditionErrorOccurred       ApplicationSetConditionType = "ErrorOccurred"
	ApplicationSetConditionParametersGenerated ApplicationSetConditionType = "ParametersGenerated"
	ApplicationSetConditionResourcesUpToDate   ApplicationSetConditionType = "ResourcesUpToDate"
	ApplicationSetConditionRolloutProgressing  ApplicationSetConditionType = "RolloutProgressing"
	// ApplicationSetConditionInvalidRolloutConfig says whether the
	// RollingSync steps are valid (operators, selections, maxUpdate).
	ApplicationSetConditionInvalidRolloutConfig ApplicationSetConditionType = "InvalidRolloutConfig"
)

// ApplicationSetConditionStatus is True, False or Unknown.
type ApplicationSetConditionStatus string

// The condition statuses.
const (
	ApplicationSetConditionStatusTrue    ApplicationSetConditionStatus = "True"
	ApplicationSetConditionStatusFalse   ApplicationSetConditionStatus = "False"
	ApplicationSetConditionStatusUnknown ApplicationSetConditionStatus = "Unknown"
)

// The condition reasons Argo CD reports, and tollgate's own for a denial
// by the gate.
const (
	ApplicationSetReasonErrorOccurred                        = "ErrorOccurred"
	ApplicationSetReasonApplicationSetUpToDate               = "ApplicationSetUpToDate"
	ApplicationSetReasonParametersGenerated                  = "ParametersGenerated"
	ApplicationSetReasonUpdateApplicationError               = "UpdateApplicationError"
	ApplicationSetReasonCreateApplicationError               = "CreateApplicationError"
	ApplicationSetReasonDeleteApplicationError               = "DeleteApplicationError"
	ApplicationSetReasonRefreshApplicationError              = "RefreshApplicationError"
	ApplicationSetReasonApplicationGenerationFromParamsError = "ApplicationGenerationFromParamsError"
	ApplicationSetReasonRenderTemplateParamsError            = "RenderTemplateParamsError"
	ApplicationSetReasonApplicationValidationError           = "ApplicationValidationError"
	ApplicationSetReasonApplicationSetModified               = "ApplicationSetModified"
	ApplicationSetReasonApplicationSetRolloutComplete        = "ApplicationSetRolloutComplete"
	ApplicationSetReasonApplicationSetRolloutError           = "ApplicationSetRolloutError"
	ApplicationSetReasonInvalidRolloutConfig                 = "ApplicationSetInvalidRolloutConfig"
	ApplicationSetReasonValidRolloutConfig                   = "ApplicationSetValidRolloutConfig"
	// ApplicationSetReasonPolicyViolation: tollgate's gate denied a
	// generated Application, which was not written.
	ApplicationSetReasonPolicyViolation = "PolicyViolation"
)
