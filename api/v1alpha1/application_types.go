package v1alpha1

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Application is a group of Kubernetes resources rendered from one or more
// sources and synced to a destination, as defined by Argo CD.
//
// No status subresource, as in Argo CD: status is written with the object.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=applications,singular=application,shortName={app,apps},scope=Namespaced
// +kubebuilder:printcolumn:name="Sync Status",type=string,JSONPath=`.status.sync.status`
// +kubebuilder:printcolumn:name="Health Status",type=string,JSONPath=`.status.health.status`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.sync.revision`,priority=10
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.project`,priority=10
type Application struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec ApplicationSpec `json:"spec"`
	// +optional
	Status ApplicationStatus `json:"status,omitzero"`
	// Operation is a sync requested by a user or by automated sync, picked up
	// and cleared by the controller.
	// +optional
	Operation *Operation `json:"operation,omitempty"`
}

// ApplicationList is a list of Applications.
//
// +kubebuilder:object:root=true
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []Application `json:"items"`
}

// ApplicationSpec is what an Application deploys, where, and how it is synced.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSpec struct {
	// Source is the single source of the Application. Ignored when Sources
	// is set.
	// +optional
	Source *ApplicationSource `json:"source,omitempty"`
	// Destination is the cluster and namespace to deploy to.
	Destination ApplicationDestination `json:"destination"`
	// Project is the AppProject the Application belongs to; "default" is
	// Argo CD's implicit project.
	Project string `json:"project"`
	// SyncPolicy controls when and how a sync is performed.
	// +optional
	SyncPolicy *SyncPolicy `json:"syncPolicy,omitempty"`
	// IgnoreDifferences lists fields ignored when comparing live and desired
	// state.
	// +optional
	IgnoreDifferences []ResourceIgnoreDifferences `json:"ignoreDifferences,omitempty"`
	// Info is extra information shown in the Argo CD UI.
	// +optional
	Info []Info `json:"info,omitempty"`
	// RevisionHistoryLimit is how many entries status.history keeps; Argo CD
	// defaults to 10.
	// +optional
	RevisionHistoryLimit *int64 `json:"revisionHistoryLimit,omitempty"`
	// Sources are the sources of a multi-source Application. When set,
	// Source is ignored.
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// SourceHydrator is Argo CD's source hydrator (dry source, sync source,
	// hydrateTo); tollgate refuses an Application that sets it
	// (UnsupportedField).
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	SourceHydrator *runtime.RawExtension `json:"sourceHydrator,omitempty"`
}

// ApplicationDestination is a cluster, by API server URL or by name, and a
// namespace. Server and Name are mutually exclusive.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationDestination struct {
	// Server is the API server URL of the cluster,
	// https://kubernetes.default.svc for the cluster Argo CD runs in.
	// +optional
	Server string `json:"server,omitempty"`
	// Namespace is the default namespace of namespaced resources without one.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name is the name of a cluster registered with Argo CD; "in-cluster" for
	// the cluster Argo CD runs in.
	// +optional
	Name string `json:"name,omitempty"`
}

// ResourceIgnoreDifferences selects resources and the fields of them to
// ignore when diffing.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ResourceIgnoreDifferences struct {
	// +optional
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// JSONPointers are RFC 6901 pointers to the ignored fields.
	// +optional
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// JQPathExpressions are jq path expressions selecting ignored fields.
	// +optional
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
	// ManagedFieldsManagers are field managers whose fields are ignored.
	// +optional
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// Info is a name and value shown with an Application or an operation.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Info struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// InstanceName is the name Argo CD gives the Application in its
// repo-server requests and tracking: the name in the control-plane
// namespace, else "<namespace>_<name>". ARGOCD_APP_NAME and the
// per-Application override file use it; Helm's release name is the name
// alone.
func (a *Application) InstanceName(controlPlaneNamespace string) string {
	if a.Namespace == "" || a.Namespace == controlPlaneNamespace {
		return a.Name
	}
	return a.Namespace + "_" + a.Name
}

// CascadedDeletion reports whether deleting the Application deletes its
// resources: it carries one of the cascade finalizers.
func (a *Application) CascadedDeletion() bool {
	return slices.ContainsFunc(a.Finalizers, IsCascadeFinalizer)
}

// IsCascadeFinalizer reports whether f is one of the cascade finalizers.
func IsCascadeFinalizer(f string) bool {
	return f == ResourcesFinalizerName || f == ForegroundPropagationPolicyFinalizer || f == BackgroundPropagationPolicyFinalizer
}
