// Package plan decides in which order the objects of one sync are applied. It
// is pure: it reads annotations and returns data, and it never talks to a
// cluster. The Application controller builds the plan and engine/apply,
// the package above this one, executes it behind engine/authority.
//
// # Phases
//
// A sync runs in phases. Ordinary manifests are applied in the Sync phase.
// Hooks are manifests that run in another phase, chosen with the
// `argocd.argoproj.io/hook` annotation (a comma-separated list, so one hook
// may run in several phases):
//
//   - PreSync runs before anything else is applied: database migrations,
//     backups, checks.
//   - Sync runs together with the ordinary manifests.
//   - PostSync runs once every Sync task has been applied and every object
//     is healthy: smoke tests, notifications.
//   - SyncFail runs only when the sync failed: clean-up, alerting.
//   - PostDelete runs after the Application and its resources were deleted.
//   - Skip is not a phase: the manifest is left out of the sync entirely.
//
// Helm chart hooks are understood too, the way Argo CD maps them, and only
// when the object has no Argo CD hook annotation: `helm.sh/hook`
// pre-install and pre-upgrade run in PreSync, post-install and
// post-upgrade in PostSync; other Helm hook types (test, pre-delete,
// rollback...) have no phase and are left out. `crd-install` is not a hook
// at all: such objects are ordinary manifests. `helm.sh/hook-weight` gives the
// wave when `argocd.argoproj.io/sync-wave` is absent.
//
// Hooks are re-run on every sync. A hook with only metadata.generateName gets
// a fresh name each sync; a named hook is replaced according to its delete
// policy (`argocd.argoproj.io/hook-delete-policy`, or Helm's
// `helm.sh/hook-delete-policy`: before-hook-creation, hook-succeeded,
// hook-failed):
//
//   - BeforeHookCreation deletes an existing object of the same name before
//     the hook is created. It is the default when no policy is given.
//   - HookSucceeded deletes the hook once it succeeded.
//   - HookFailed deletes the hook once it failed.
//
// # Waves
//
// Within a phase, tasks are grouped into waves by the integer annotation
// `argocd.argoproj.io/sync-wave` (default 0, may be negative). A wave is
// applied, then waited on until every object in it is healthy (and every hook
// in it completed), before the next wave starts. A value that is not an
// integer is an error naming the object: silently running something in the
// wrong order is worse than not running it.
//
// # Order
//
// [Build] orders tasks by phase (PreSync, Sync, PostSync, then SyncFail and
// PostDelete which only run on their own occasions), then wave, then kind
// (Argo CD's order: namespaces, policies and quotas, service accounts,
// secrets and config maps, storage, CRDs, RBAC, services, workloads,
// ingresses, API services, then every other kind), then namespace and name.
// Two adjustments keep dependencies working when waves disagree with them,
// as in Argo CD: a Namespace is moved into the earliest phase and wave of any
// task in that namespace, and a CustomResourceDefinition into the earliest
// phase and wave of any custom resource of its kind.
//
// # Sync options
//
// [SyncOptions] are Argo CD's `Key=value` options, from the Application's
// spec.syncPolicy.syncOptions, overridden per object by the comma-separated
// `argocd.argoproj.io/sync-options` annotation.
package plan
