package v1alpha1

// SyncPolicy controls when and how an Application is synced.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncPolicy struct {
	// Automated syncs the Application whenever the desired state changes.
	// +optional
	Automated *SyncPolicyAutomated `json:"automated,omitempty"`
	// SyncOptions are Argo CD sync options such as "CreateNamespace=true"
	// or "ServerSideApply=true".
	// +optional
	SyncOptions []string `json:"syncOptions,omitempty"`
	// Retry controls retries of a failed sync.
	// +optional
	Retry *RetryStrategy `json:"retry,omitempty"`
	// ManagedNamespaceMetadata is set on the destination namespace when
	// CreateNamespace=true.
	// +optional
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// SyncPolicyAutomated configures automated sync.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncPolicyAutomated struct {
	// Prune deletes live resources no longer in the desired state.
	// +optional
	Prune bool `json:"prune,omitempty"`
	// SelfHeal syncs again when the live state drifts.
	// +optional
	SelfHeal bool `json:"selfHeal,omitempty"`
	// AllowEmpty allows a sync that would delete every resource.
	// +optional
	AllowEmpty bool `json:"allowEmpty,omitempty"`
	// Enabled turns automated sync off when false; nil means enabled.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// IsEnabled reports whether automated sync is on: Automated is set and
// Enabled is nil or true. It is safe on a nil receiver.
func (a *SyncPolicyAutomated) IsEnabled() bool {
	return a != nil && (a.Enabled == nil || *a.Enabled)
}

// RetryStrategy controls retries of a failed sync.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RetryStrategy struct {
	// Limit is the number of retries; 0 means none, negative means no limit.
	// +optional
	Limit int64 `json:"limit,omitempty"`
	// Backoff is the delay between retries.
	// +optional
	Backoff *Backoff `json:"backoff,omitempty"`
	// Refresh retries with the latest revision instead of the first
	// attempt's; tollgate refuses it.
	// +optional
	Refresh bool `json:"refresh,omitempty"`
}

// Backoff is an exponential backoff.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Backoff struct {
	// Duration is the first delay, a Go duration or a number of seconds.
	// +optional
	Duration string `json:"duration,omitempty"`
	// Factor multiplies the delay after each retry.
	// +optional
	Factor *int64 `json:"factor,omitempty"`
	// MaxDuration caps the delay.
	// +optional
	MaxDuration string `json:"maxDuration,omitempty"`
}

// ManagedNamespaceMetadata is metadata for a namespace created by a sync.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ManagedNamespaceMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Operation is a requested or running operation on an Application. Sync is
// the only kind.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Operation struct {
	// +optional
	Sync *SyncOperation `json:"sync,omitempty"`
	// +optional
	InitiatedBy OperationInitiator `json:"initiatedBy,omitzero"`
	// +optional
	Info []Info `json:"info,omitempty"`
	// Retry controls retries of this operation.
	// +optional
	Retry RetryStrategy `json:"retry,omitzero"`
}

// SyncOperation is a sync request.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncOperation struct {
	// Revision is the revision to sync to; default spec.source.targetRevision.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Prune deletes live resources no longer in the desired state.
	// +optional
	Prune bool `json:"prune,omitempty"`
	// DryRun syncs with a server-side dry run only.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
	// SyncStrategy is apply or hook.
	// +optional
	SyncStrategy *SyncStrategy `json:"syncStrategy,omitempty"`
	// Resources limits the sync to these resources (a partial sync).
	// +optional
	Resources []SyncOperationResource `json:"resources,omitempty"`
	// Source overrides spec.source, for a rollback.
	// +optional
	Source *ApplicationSource `json:"source,omitempty"`
	// SyncOptions override spec.syncPolicy.syncOptions.
	// +optional
	SyncOptions []string `json:"syncOptions,omitempty"`
	// Sources overrides spec.sources, for a rollback.
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// Revisions are the revisions of a multi-source sync, one per source.
	// +optional
	Revisions []string `json:"revisions,omitempty"`
	// Manifests are local manifests to sync instead of the sources
	// (argocd app sync --local); tollgate refuses such an operation.
	// +optional
	Manifests []string `json:"manifests,omitempty"`
	// SelfHealAttemptsCount counts the automated syncs in a row that
	// corrected drift at the same revision; the next one waits for the
	// self-heal backoff of this count.
	// +optional
	SelfHealAttemptsCount int64 `json:"autoHealAttemptsCount,omitempty"`
}

// SyncOperationResource names one resource of a partial sync.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncOperationResource struct {
	// +optional
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Exclude makes the entry an exclusion (argocd app sync --resource
	// '!GROUP:KIND:NAME'): a matching resource is not synced.
	// +optional
	Exclude bool `json:"exclude,omitempty"`
}

// Compare reports whether the resource name in namespace of kind gvk
// matches r, each of r's fields "*" matching anything and an empty
// namespace any namespace (Argo CD's SyncOperationResource.Compare).
func (r SyncOperationResource) Compare(name, namespace, group, kind string) bool {
	return (r.Group == "*" || group == r.Group) && (r.Kind == "*" || kind == r.Kind) &&
		(r.Name == "*" || name == r.Name) && (r.Namespace == "*" || r.Namespace == "" || namespace == r.Namespace)
}

// IncludeResource reports whether a partial sync of resources syncs the
// resource name in namespace of group and kind, as Argo CD's
// argo.IncludeResource decides: it must match an entry that is not an
// exclusion (any resource does when there are none), and no exclusion.
func IncludeResource(name, namespace, group, kind string, resources []SyncOperationResource) bool {
	included, includes := false, false
	for _, r := range resources {
		if r.Exclude {
			continue
		}
		includes = true
		if r.Compare(name, namespace, group, kind) {
			included = true
			break
		}
	}
	if includes && !included {
		return false
	}
	for _, r := range resources {
		if r.Exclude && r.Compare(name, namespace, group, kind) {
			return false
		}
	}
	return true
}

// SyncStrategy is how resources are synced: apply only, or apply with hooks.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncStrategy struct {
	// +optional
	Apply *SyncStrategyApply `json:"apply,omitempty"`
	// +optional
	Hook *SyncStrategyHook `json:"hook,omitempty"`
}

// SyncStrategyApply syncs with apply and runs no hooks.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncStrategyApply struct {
	// Force deletes and recreates resources that cannot be patched.
	// +optional
	Force bool `json:"force,omitempty"`
}

// SyncStrategyHook syncs with apply and runs hooks (the default).
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncStrategyHook struct {
	SyncStrategyApply `json:",inline"`
}

// OperationInitiator is who started an operation.
//
// +kubebuilder:pruning:PreserveUnknownFields
type OperationInitiator struct {
	// +optional
	Username string `json:"username,omitempty"`
	// Automated is true when the controller started it (automated sync).
	// +optional
	Automated bool `json:"automated,omitempty"`
}

// RevisionsFor returns the revisions the operation syncs, one per source,
// as Argo CD reads them: revisions for an Application of several sources
// (multiple: spec.sources), revision for one of a single source; nil when
// the operation names none.
func (s *SyncOperation) RevisionsFor(multiple bool) []string {
	switch {
	case multiple:
		return s.Revisions
	case s.Revision != "":
		return []string{s.Revision}
	}
	return nil
}

// SetRevisions sets the revisions the operation syncs where Argo CD reads
// them (see RevisionsFor).
func (s *SyncOperation) SetRevisions(multiple bool, revisions []string) {
	switch {
	case multiple:
		s.Revisions = revisions
	case len(revisions) > 0:
		s.Revision = revisions[0]
	}
}
