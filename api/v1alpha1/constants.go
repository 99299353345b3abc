package v1alpha1

// SyncStatusCode is whether live state matches desired state.
type SyncStatusCode string

// Sync status codes, as in Argo CD.
const (
	SyncStatusCodeUnknown   SyncStatusCode = "Unknown"
	SyncStatusCodeSynced    SyncStatusCode = "Synced"
	SyncStatusCodeOutOfSync SyncStatusCode = "OutOfSync"
)

// HealthStatusCode is the health of a resource or an Application.
type HealthStatusCode string

// Health status codes, as in Argo CD.
const (
	HealthStatusHealthy     HealthStatusCode = "Healthy"
	HealthStatusProgressing HealthStatusCode = "Progressing"
	HealthStatusDegraded    HealthStatusCode = "Degraded"
	HealthStatusSuspended   HealthStatusCode = "Suspended"
	HealthStatusMissing     HealthStatusCode = "Missing"
	HealthStatusUnknown     HealthStatusCode = "Unknown"
)

// OperationPhase is the phase of an operation or of a hook.
type OperationPhase string

// Operation phases, as in Argo CD.
const (
	OperationRunning     OperationPhase = "Running"
	OperationTerminating OperationPhase = "Terminating"
	OperationFailed      OperationPhase = "Failed"
	OperationError       OperationPhase = "Error"
	OperationSucceeded   OperationPhase = "Succeeded"
)

// Completed reports whether the phase is final.
func (p OperationPhase) Completed() bool {
	switch p {
	case OperationFailed, OperationError, OperationSucceeded:
		return true
	}
	return false
}

// Successful reports whether the phase is Succeeded.
func (p OperationPhase) Successful() bool { return p == OperationSucceeded }

// SyncPhase is a phase of a sync: hooks run in PreSync, Sync, PostSync, or
// SyncFail when the sync failed.
type SyncPhase string

// Sync phases, as in Argo CD.
const (
	SyncPhasePreSync  SyncPhase = "PreSync"
	SyncPhaseSync     SyncPhase = "Sync"
	SyncPhasePostSync SyncPhase = "PostSync"
	SyncPhaseSyncFail SyncPhase = "SyncFail"
)

// HookType is the value of the argocd.argoproj.io/hook annotation.
type HookType string

// Hook types, as in Argo CD. HookTypeSkip marks a resource the sync does not
// apply.
const (
	HookTypePreSync    HookType = "PreSync"
	HookTypeSync       HookType = "Sync"
	HookTypePostSync   HookType = "PostSync"
	HookTypeSyncFail   HookType = "SyncFail"
	HookTypePostDelete HookType = "PostDelete"
	HookTypeSkip       HookType = "Skip"
)

// ResultCode is the result of syncing one resource.
type ResultCode string

// Resource result codes, as in Argo CD.
const (
	ResultCodeSynced       ResultCode = "Synced"
	ResultCodeSyncFailed   ResultCode = "SyncFailed"
	ResultCodePruned       ResultCode = "Pruned"
	ResultCodePruneSkipped ResultCode = "PruneSkipped"
)

// ApplicationSourceType is how a source was rendered.
type ApplicationSourceType string

// Source types, as in Argo CD.
const (
	ApplicationSourceTypeHelm      ApplicationSourceType = "Helm"
	ApplicationSourceTypeKustomize ApplicationSourceType = "Kustomize"
	ApplicationSourceTypeDirectory ApplicationSourceType = "Directory"
	ApplicationSourceTypePlugin    ApplicationSourceType = "Plugin"
)

// Application condition types. Argo CD's, plus tollgate's PolicyViolation.
// Types ending in Error are errors; the others are warnings.
const (
	ApplicationConditionSyncError               = "SyncError"
	ApplicationConditionComparisonError         = "ComparisonError"
	ApplicationConditionInvalidSpecError        = "InvalidSpecError"
	ApplicationConditionSharedResourceWarning   = "SharedResourceWarning"
	ApplicationConditionOrphanedResourceWarning = "OrphanedResourceWarning"
	ApplicationConditionRepeatedResourceWarning = "RepeatedResourceWarning"
	ApplicationConditionExcludedResourceWarning = "ExcludedResourceWarning"
	// ApplicationConditionUnknownError is Argo CD's condition for an error
	// reading the project: an Application whose namespace its project does
	// not permit (ErrProjectNotPermitted).
	ApplicationConditionUnknownError = "UnknownError"
	// ApplicationConditionDeletionError says why the deletion of an
	// Application is stuck (a PreDelete or PostDelete hook failed or was
	// refused).
	ApplicationConditionDeletionError = "DeletionError"
	// ApplicationConditionUnknownHookWarning (tollgate's) names hook types
	// and hook delete policies Argo CD does not know; like Argo CD, the
	// engine ignores them (an object left with no known hook type is
	// neither applied nor compared).
	ApplicationConditionUnknownHookWarning = "UnknownHookWarning"
	// ApplicationConditionPolicyViolation is set by tollgate's sync engine
	// when policies deny the desired state; nothing is applied.
	ApplicationConditionPolicyViolation = "PolicyViolation"
)

// ResourcesFinalizerName is the finalizer that makes deleting an Application
// delete (cascade) its resources first.
const ResourcesFinalizerName = "resources-finalizer.argocd.argoproj.io"

// The finalizers of a cascaded deletion's propagation policy, Argo CD's
// (the bare ResourcesFinalizerName deletes in the foreground too).
const (
	ForegroundPropagationPolicyFinalizer = ResourcesFinalizerName + "/foreground"
	BackgroundPropagationPolicyFinalizer = ResourcesFinalizerName + "/background"
)

// Finalizers of Applications with delete hooks, as Argo CD names them: the
// controller adds PreDeleteFinalizerName and PostDeleteFinalizerName while
// the desired state has PreDelete or PostDelete hooks, runs the hooks when
// the Application is deleted, and removes the hooks it ran (the cleanup
// finalizers) last.
const (
	PreDeleteFinalizerName         = "pre-delete-finalizer.argocd.argoproj.io"
	PostDeleteFinalizerName        = "post-delete-finalizer.argocd.argoproj.io"
	PreDeleteCleanupFinalizerName  = PreDeleteFinalizerName + "/cleanup"
	PostDeleteCleanupFinalizerName = PostDeleteFinalizerName + "/cleanup"
)

// Annotations and labels Argo CD reads on Applications and on the resources
// they manage.
const (
	// AnnotationKeyRefresh on an Application requests a refresh; the value
	// is RefreshTypeNormal or RefreshTypeHard. The controller removes it.
	AnnotationKeyRefresh = "argocd.argoproj.io/refresh"
	// AnnotationApplicationSetRefresh on an ApplicationSet asks for its
	// generation now, with the Git revisions resolved afresh; the
	// controller removes it once done, as Argo CD's does (its Git webhook
	// sets it).
	AnnotationApplicationSetRefresh = "argocd.argoproj.io/application-set-refresh"
	// AnnotationKeyDeletionApproved on an Application approves, from the
	// RFC 3339 time it holds on, the deletion of its resources marked
	// Delete=confirm (argocd app confirm-deletion sets it).
	AnnotationKeyDeletionApproved = "argocd.argoproj.io/deletion-approved"
	// AnnotationKeySyncWave orders resources: lower waves are synced (and
	// healthy) first. An integer, default 0.
	AnnotationKeySyncWave = "argocd.argoproj.io/sync-wave"
	// AnnotationKeyHook makes a resource a hook; comma-separated HookType
	// values.
	AnnotationKeyHook = "argocd.argoproj.io/hook"
	// AnnotationKeyHookDeletePolicy is when a hook is deleted:
	// HookSucceeded, HookFailed, BeforeHookCreation (comma-separated).
	AnnotationKeyHookDeletePolicy = "argocd.argoproj.io/hook-delete-policy"
	// AnnotationKeySyncOptions holds per-resource sync options, e.g.
	// "Prune=false,ServerSideApply=true".
	AnnotationKeySyncOptions = "argocd.argoproj.io/sync-options"
	// AnnotationKeyTrackingID is annotation-based resource tracking:
	// "<app>:<group>/<kind>:<namespace>/<name>".
	AnnotationKeyTrackingID = "argocd.argoproj.io/tracking-id"
	// AnnotationKeyAppSkipReconcile set to a true value (strconv.ParseBool)
	// on an Application makes the application controller leave it alone:
	// no comparison, no operation, no finalizer (Application.SkipReconcile).
	AnnotationKeyAppSkipReconcile = "argocd.argoproj.io/skip-reconcile"
	// AnnotationKeyCompareOptions holds per-resource compare options, e.g.
	// "IgnoreExtraneous".
	AnnotationKeyCompareOptions = "argocd.argoproj.io/compare-options"
	// LabelKeyAppInstance is label-based resource tracking (Argo CD's
	// default before 3.0): the Application name.
	LabelKeyAppInstance = "app.kubernetes.io/instance"
)

// Values of AnnotationKeyRefresh.
const (
	RefreshTypeNormal = "normal"
	RefreshTypeHard   = "hard"
)
