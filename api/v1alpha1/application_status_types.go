package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ApplicationStatus is the observed state of an Application, written by the
// controller.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationStatus struct {
	// Resources are the resources of the Application and their state.
	// +optional
	Resources []ResourceStatus `json:"resources,omitempty"`
	// Sync is the result of the last comparison of desired and live state.
	// +optional
	Sync SyncStatus `json:"sync,omitzero"`
	// Health is the aggregated health of the resources.
	// +optional
	Health HealthStatus `json:"health,omitzero"`
	// History is the list of past syncs, oldest first.
	// +optional
	History []RevisionHistory `json:"history,omitempty"`
	// Conditions are errors and warnings about the Application.
	// +optional
	Conditions []ApplicationCondition `json:"conditions,omitempty"`
	// ReconciledAt is when the Application was last compared.
	// +optional
	ReconciledAt *metav1.Time `json:"reconciledAt,omitempty"`
	// OperationState is the state of the current or last operation.
	// +optional
	OperationState *OperationState `json:"operationState,omitempty"`
	// ObservedAt is deprecated in Argo CD and kept for compatibility.
	// +optional
	ObservedAt *metav1.Time `json:"observedAt,omitempty"`
	// SourceType is how the single source was rendered.
	// +optional
	SourceType ApplicationSourceType `json:"sourceType,omitempty"`
	// SourceTypes are how each of several sources was rendered.
	// +optional
	SourceTypes []ApplicationSourceType `json:"sourceTypes,omitempty"`
	// Summary lists URLs and images found in the resources.
	// +optional
	Summary ApplicationSummary `json:"summary,omitzero"`
	// ResourceHealthSource is where resource health is kept: "" (inline,
	// in resources, as tollgate keeps it) or Argo CD's "appTree".
	// +optional
	ResourceHealthSource string `json:"resourceHealthSource,omitempty"`
	// ControllerNamespace is the namespace of the controller that
	// reconciles the Application.
	// +optional
	ControllerNamespace string `json:"controllerNamespace,omitempty"`
	// SourceHydrator is Argo CD's source hydrator status; tollgate does
	// not hydrate.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	SourceHydrator *runtime.RawExtension `json:"sourceHydrator,omitempty"`
}

// SyncStatus is the result of comparing desired and live state.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncStatus struct {
	Status SyncStatusCode `json:"status"`
	// ComparedTo is the spec the comparison was made with.
	// +optional
	ComparedTo ComparedTo `json:"comparedTo,omitzero"`
	// Revision is the revision compared, for a single source.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Revisions are the revisions compared, one per source.
	// +optional
	Revisions []string `json:"revisions,omitempty"`
}

// ComparedTo is the part of the spec a comparison was made with.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ComparedTo struct {
	// +optional
	Source ApplicationSource `json:"source,omitzero"`
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// Destination is required by Argo CD's schema (it may be empty).
	Destination ApplicationDestination `json:"destination"`
	// +optional
	IgnoreDifferences []ResourceIgnoreDifferences `json:"ignoreDifferences,omitempty"`
}

// HealthStatus is the health of an Application or of one resource.
//
// +kubebuilder:pruning:PreserveUnknownFields
type HealthStatus struct {
	// +optional
	Status HealthStatusCode `json:"status,omitempty"`
	// Message explains the status, e.g. why a resource is degraded.
	// +optional
	Message string `json:"message,omitempty"`
	// LastTransitionTime is when Status last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ResourceStatus is the state of one resource of an Application.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ResourceStatus struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
	// Status is the resource's sync status.
	// +optional
	Status SyncStatusCode `json:"status,omitempty"`
	// +optional
	Health *HealthStatus `json:"health,omitempty"`
	// Hook is true for a hook resource.
	// +optional
	Hook bool `json:"hook,omitempty"`
	// RequiresPruning is true for a live resource no longer desired.
	// +optional
	RequiresPruning bool `json:"requiresPruning,omitempty"`
	// SyncWave is the resource's sync wave.
	// +optional
	SyncWave int64 `json:"syncWave,omitempty"`
	// RequiresDeletionConfirmation is set for a resource whose pruning
	// waits for a confirmation (Prune=confirm, Delete=confirm).
	// +optional
	RequiresDeletionConfirmation bool `json:"requiresDeletionConfirmation,omitempty"`
}

// ApplicationCondition is an error or warning about an Application.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationCondition struct {
	// Type is one of the ApplicationCondition* constants.
	Type string `json:"type"`
	// Message is human-readable.
	Message string `json:"message"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// OperationState is the state of an operation.
//
// +kubebuilder:pruning:PreserveUnknownFields
type OperationState struct {
	// Operation is the operation, as requested.
	Operation Operation `json:"operation"`
	// Phase is one of the Operation* phase constants.
	Phase OperationPhase `json:"phase"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	SyncResult *SyncOperationResult `json:"syncResult,omitempty"`
	StartedAt  metav1.Time          `json:"startedAt"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// RetryCount is how many times the operation was retried.
	// +optional
	RetryCount int64 `json:"retryCount,omitempty"`
}

// SyncOperationResult is the result of a sync.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncOperationResult struct {
	// +optional
	Resources []ResourceResult `json:"resources,omitempty"`
	// Revision is the revision synced, for a single source.
	Revision string `json:"revision"`
	// +optional
	Source ApplicationSource `json:"source,omitzero"`
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// +optional
	Revisions []string `json:"revisions,omitempty"`
	// ManagedNamespaceMetadata is the namespace metadata the sync managed.
	// +optional
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// ResourceResult is the result of syncing one resource.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ResourceResult struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// +optional
	Status ResultCode `json:"status,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// HookType is set for a hook.
	// +optional
	HookType HookType `json:"hookType,omitempty"`
	// HookPhase is the phase of a hook.
	// +optional
	HookPhase OperationPhase `json:"hookPhase,omitempty"`
	// SyncPhase is the phase the resource was synced in.
	// +optional
	SyncPhase SyncPhase `json:"syncPhase,omitempty"`
	// Images are the container images of the resource.
	// +optional
	Images []string `json:"images,omitempty"`
}

// RevisionHistory is one past sync.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RevisionHistory struct {
	// ID is unique within the Application and increases.
	ID int64 `json:"id"`
	// +optional
	Revision string `json:"revision,omitempty"`
	// +optional
	Revisions []string `json:"revisions,omitempty"`
	// DeployedAt is when the sync finished.
	DeployedAt metav1.Time `json:"deployedAt"`
	// +optional
	DeployStartedAt *metav1.Time `json:"deployStartedAt,omitempty"`
	// +optional
	Source ApplicationSource `json:"source,omitzero"`
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// +optional
	InitiatedBy OperationInitiator `json:"initiatedBy,omitzero"`
}

// ApplicationSummary lists URLs and images found in an Application's
// resources.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSummary struct {
	// +optional
	ExternalURLs []string `json:"externalURLs,omitempty"`
	// +optional
	Images []string `json:"images,omitempty"`
	// IsAppOfApps is set when a resource is an Application.
	// +optional
	IsAppOfApps bool `json:"isAppOfApps,omitempty"`
}
