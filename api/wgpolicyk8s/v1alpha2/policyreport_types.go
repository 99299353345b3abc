package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PolicyResult is the outcome of one policy rule on its resources.
// +kubebuilder:validation:Enum=pass;fail;warn;error;skip
type PolicyResult string

// The results. tollgate's audit reports deny violations as fail and warn
// violations as warn.
const (
	ResultPass  PolicyResult = "pass"
	ResultFail  PolicyResult = "fail"
	ResultWarn  PolicyResult = "warn"
	ResultError PolicyResult = "error"
	ResultSkip  PolicyResult = "skip"
)

// PolicySeverity is how severe a result is.
// +kubebuilder:validation:Enum=critical;high;low;medium;info
type PolicySeverity string

// The severities. tollgate's audit reports deny rules as high and warn
// rules as medium.
const (
	SeverityCritical PolicySeverity = "critical"
	SeverityHigh     PolicySeverity = "high"
	SeverityMedium   PolicySeverity = "medium"
	SeverityLow      PolicySeverity = "low"
	SeverityInfo     PolicySeverity = "info"
)

// PolicyReportSummary counts the results of a report by outcome.
type PolicyReportSummary struct {
	// Pass counts the passed results.
	// +optional
	Pass int `json:"pass"`
	// Fail counts the failed results.
	// +optional
	Fail int `json:"fail"`
	// Warn counts the warnings.
	// +optional
	Warn int `json:"warn"`
	// Error counts the results that could not be evaluated.
	// +optional
	Error int `json:"error"`
	// Skip counts the skipped results.
	// +optional
	Skip int `json:"skip"`
}

// PolicyReportResult is the outcome of one rule on one or more resources.
type PolicyReportResult struct {
	// Source is the engine that produced the result ("tollgate").
	// +optional
	Source string `json:"source,omitempty"`
	// Policy is the policy's name (tollgate: the rule id).
	Policy string `json:"policy"`
	// Rule is the rule's name within the policy (tollgate: the rule id).
	// +optional
	Rule string `json:"rule,omitempty"`
	// Category groups policies.
	// +optional
	Category string `json:"category,omitempty"`
	// Severity of the result.
	// +optional
	Severity PolicySeverity `json:"severity,omitempty"`
	// Timestamp is when the result was produced.
	// +optional
	Timestamp metav1.Timestamp `json:"timestamp,omitempty"`
	// Result is the outcome.
	// +optional
	Result PolicyResult `json:"result,omitempty"`
	// Scored says whether the result counts in a score.
	// +optional
	Scored bool `json:"scored,omitempty"`
	// Subjects are the resources the result is about.
	// +optional
	Subjects []corev1.ObjectReference `json:"resources,omitempty"`
	// SubjectSelector selects the resources the result is about.
	// +optional
	SubjectSelector *metav1.LabelSelector `json:"resourceSelector,omitempty"`
	// Description says what was found and how to fix it.
	// +optional
	Description string `json:"message,omitempty"`
	// Properties are further name/value details.
	// +optional
	Properties map[string]string `json:"properties,omitempty"`
}

// PolicyReport holds the results of the policies on the resources of one
// namespace.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=polr
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.scope.kind`,priority=1
// +kubebuilder:printcolumn:name="Name",type=string,JSONPath=`.scope.name`,priority=1
// +kubebuilder:printcolumn:name="Pass",type=integer,JSONPath=`.summary.pass`
// +kubebuilder:printcolumn:name="Fail",type=integer,JSONPath=`.summary.fail`
// +kubebuilder:printcolumn:name="Warn",type=integer,JSONPath=`.summary.warn`
// +kubebuilder:printcolumn:name="Error",type=integer,JSONPath=`.summary.error`
// +kubebuilder:printcolumn:name="Skip",type=integer,JSONPath=`.summary.skip`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PolicyReport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Scope is the resource the report is about, when it is about one.
	// +optional
	Scope *corev1.ObjectReference `json:"scope,omitempty"`
	// ScopeSelector selects the resources the report is about.
	// +optional
	ScopeSelector *metav1.LabelSelector `json:"scopeSelector,omitempty"`
	// Summary counts the results.
	// +optional
	Summary PolicyReportSummary `json:"summary,omitempty"`
	// Results are the results.
	// +optional
	Results []PolicyReportResult `json:"results,omitempty"`
}

// PolicyReportList is a list of PolicyReports.
// +kubebuilder:object:root=true
type PolicyReportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PolicyReport `json:"items"`
}

// ClusterPolicyReport holds the results of the policies on cluster-scoped
// resources.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cpolr
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.scope.kind`,priority=1
// +kubebuilder:printcolumn:name="Name",type=string,JSONPath=`.scope.name`,priority=1
// +kubebuilder:printcolumn:name="Pass",type=integer,JSONPath=`.summary.pass`
// +kubebuilder:printcolumn:name="Fail",type=integer,JSONPath=`.summary.fail`
// +kubebuilder:printcolumn:name="Warn",type=integer,JSONPath=`.summary.warn`
// +kubebuilder:printcolumn:name="Error",type=integer,JSONPath=`.summary.error`
// +kubebuilder:printcolumn:name="Skip",type=integer,JSONPath=`.summary.skip`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterPolicyReport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Scope is the resource the report is about, when it is about one.
	// +optional
	Scope *corev1.ObjectReference `json:"scope,omitempty"`
	// ScopeSelector selects the resources the report is about.
	// +optional
	ScopeSelector *metav1.LabelSelector `json:"scopeSelector,omitempty"`
	// Summary counts the results.
	// +optional
	Summary PolicyReportSummary `json:"summary,omitempty"`
	// Results are the results.
	// +optional
	Results []PolicyReportResult `json:"results,omitempty"`
}

// ClusterPolicyReportList is a list of ClusterPolicyReports.
// +kubebuilder:object:root=true
type ClusterPolicyReportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterPolicyReport `json:"items"`
}
