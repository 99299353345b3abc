package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// AppProject groups Applications and restricts what they may deploy, from
// where and to where, as defined by Argo CD.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=appprojects,singular=appproject,shortName={appproj,appprojs},scope=Namespaced
type AppProject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec AppProjectSpec `json:"spec"`
	// +optional
	Status AppProjectStatus `json:"status,omitzero"`
}

// AppProjectList is a list of AppProjects.
//
// +kubebuilder:object:root=true
type AppProjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []AppProject `json:"items"`
}

// AppProjectSpec is what the Applications of a project may do.
//
// +kubebuilder:pruning:PreserveUnknownFields
type AppProjectSpec struct {
	// SourceRepos are the repository URLs (globs) Applications may use;
	// "*" allows any.
	// +optional
	SourceRepos []string `json:"sourceRepos,omitempty"`
	// Destinations are the clusters and namespaces (globs, "!" negates)
	// Applications may deploy to.
	// +optional
	Destinations []ApplicationDestination `json:"destinations,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// Roles are the project's RBAC roles.
	// +optional
	Roles []ProjectRole `json:"roles,omitempty"`

	// The four resource lists are omitzero, not omitempty: a nil list is
	// left out and an empty one kept as [], so converting a typed project
	// (encoding/json, runtime.DefaultUnstructuredConverter) keeps what the
	// API server stored. For NamespaceResourceWhitelist that is the
	// verdict: Argo CD permits every namespaced kind without the list and
	// none with [].

	// ClusterResourceWhitelist lists the cluster-scoped kinds (and names)
	// Applications may deploy; missing or empty allows none.
	// +optional
	ClusterResourceWhitelist []ClusterResourceRestrictionItem `json:"clusterResourceWhitelist,omitzero"`
	// NamespaceResourceBlacklist lists namespaced kinds Applications may not
	// deploy.
	// +optional
	NamespaceResourceBlacklist []metav1.GroupKind `json:"namespaceResourceBlacklist,omitzero"`
	// OrphanedResources configures monitoring of resources no Application
	// owns in the project's destination namespaces.
	// +optional
	OrphanedResources *OrphanedResourcesMonitorSettings `json:"orphanedResources,omitempty"`
	// SyncWindows allow or deny syncs by schedule.
	// +optional
	SyncWindows []SyncWindow `json:"syncWindows,omitempty"`
	// NamespaceResourceWhitelist lists the namespaced kinds Applications
	// may deploy; missing (nil) allows all, empty ([]) allows none.
	// +optional
	NamespaceResourceWhitelist []metav1.GroupKind `json:"namespaceResourceWhitelist,omitzero"`
	// SignatureKeys are the GnuPG key IDs commits must be signed with.
	// +optional
	SignatureKeys []SignatureKey `json:"signatureKeys,omitempty"`
	// ClusterResourceBlacklist lists cluster-scoped kinds Applications may
	// not deploy.
	// +optional
	ClusterResourceBlacklist []ClusterResourceRestrictionItem `json:"clusterResourceBlacklist,omitzero"`
	// SourceNamespaces are the namespaces, other than Argo CD's, where
	// Applications of this project may live.
	// +optional
	SourceNamespaces []string `json:"sourceNamespaces,omitempty"`
	// PermitOnlyProjectScopedClusters restricts destinations to clusters
	// scoped to this project.
	// +optional
	PermitOnlyProjectScopedClusters bool `json:"permitOnlyProjectScopedClusters,omitempty"`
	// SourceIntegrity is Argo CD's constraint on the integrity of
	// sources (signed commits by policy); tollgate refuses the
	// Applications of a project that sets it rather than sync them
	// unchecked. signatureKeys is honoured.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	SourceIntegrity *runtime.RawExtension `json:"sourceIntegrity,omitempty"`
	// DestinationServiceAccounts are the service accounts syncs impersonate,
	// per destination.
	// +optional
	DestinationServiceAccounts []ApplicationDestinationServiceAccount `json:"destinationServiceAccounts,omitempty"`
}

// ClusterResourceRestrictionItem is a cluster-scoped kind, optionally
// restricted to object names. Group, Kind and Name are Go filepath.Match
// patterns ("*", "?", "[...]"; no "{a,b}"); an empty Name matches every
// name. Argo CD 3.x added Name, and only to the cluster lists: the
// namespaced lists hold metav1.GroupKind.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ClusterResourceRestrictionItem struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	// +optional
	Name string `json:"name,omitempty"`
}

// ProjectRole is a project RBAC role.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ProjectRole struct {
	Name string `json:"name"`
	// +optional
	Description string `json:"description,omitempty"`
	// Policies are Casbin policy lines.
	// +optional
	Policies []string `json:"policies,omitempty"`
	// +optional
	JWTTokens []JWTToken `json:"jwtTokens,omitempty"`
	// Groups are OIDC group claims bound to the role.
	// +optional
	Groups []string `json:"groups,omitempty"`
}

// JWTToken records a token issued for a project role (never the token).
//
// +kubebuilder:pruning:PreserveUnknownFields
type JWTToken struct {
	IssuedAt int64 `json:"iat"`
	// +optional
	ExpiresAt int64 `json:"exp,omitempty"`
	// +optional
	ID string `json:"id,omitempty"`
}

// JWTTokens is the list of tokens of one role.
//
// +kubebuilder:pruning:PreserveUnknownFields
type JWTTokens struct {
	// +optional
	Items []JWTToken `json:"items,omitempty"`
}

// OrphanedResourcesMonitorSettings configures orphaned resource monitoring.
//
// +kubebuilder:pruning:PreserveUnknownFields
type OrphanedResourcesMonitorSettings struct {
	// Warn adds a warning condition to Applications with orphans.
	// +optional
	Warn *bool `json:"warn,omitempty"`
	// Ignore lists resources that are never orphans.
	// +optional
	Ignore []OrphanedResourceKey `json:"ignore,omitempty"`
}

// OrphanedResourceKey selects resources by group, kind and name (globs).
//
// +kubebuilder:pruning:PreserveUnknownFields
type OrphanedResourceKey struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
}

// SyncWindow allows or denies syncs during a cron schedule.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncWindow struct {
	// Kind is "allow" or "deny".
	// +optional
	Kind string `json:"kind,omitempty"`
	// Schedule is a cron expression for the window's start.
	// +optional
	Schedule string `json:"schedule,omitempty"`
	// Duration is how long the window is open, e.g. "1h".
	// +optional
	Duration string `json:"duration,omitempty"`
	// +optional
	Applications []string `json:"applications,omitempty"`
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
	// +optional
	Clusters []string `json:"clusters,omitempty"`
	// ManualSync allows manual syncs while the window denies.
	// +optional
	ManualSync bool `json:"manualSync,omitempty"`
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
	// +optional
	AndOperator bool `json:"andOperator,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// SyncOverrun lets a sync that started while the windows allowed it
	// go on: into a deny window that became active since, or past the end
	// of its allow window (every window that denies must have it).
	// +optional
	SyncOverrun bool `json:"syncOverrun,omitempty"`
}

// SignatureKey is a GnuPG key ID.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SignatureKey struct {
	KeyID string `json:"keyID"`
}

// ApplicationDestinationServiceAccount is the service account a sync to a
// destination impersonates.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationDestinationServiceAccount struct {
	Server string `json:"server"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// DefaultServiceAccount is "name" or "namespace:name".
	DefaultServiceAccount string `json:"defaultServiceAccount"`
}

// AppProjectStatus is the observed state of an AppProject.
//
// +kubebuilder:pruning:PreserveUnknownFields
type AppProjectStatus struct {
	// JWTTokensByRole are the tokens issued per role.
	// +optional
	JWTTokensByRole map[string]JWTTokens `json:"jwtTokensByRole,omitempty"`
}
