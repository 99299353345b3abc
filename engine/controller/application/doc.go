// Package application is the Application controller of tollgate's GitOps
// engine: a controller-runtime reconciler for Argo CD Applications
// (argoproj.io/v1alpha1) that puts the policy evaluator between Git and the
// cluster. The step packages do the work; this package chains them and owns
// the Application's status. Differ compares an Application with its
// destination the same way, for tollgate app diff and the web UI.
//
// # Data path
//
// One reconcile of one Application:
//
//	destination  spec.destination -> a cluster: https://kubernetes.default.svc
//	             or "in-cluster" is the controller's own; others come from Argo
//	             CD cluster Secrets. Unknown -> InvalidSpecError.
//	operation    a sync operation's source(s) and revision(s) replace spec's
//	             in a copy of the Application (a rollback, --revision); the
//	             gate's evaluator judges that copy (or, without an operation,
//	             the Application) with the AppProject before anything is
//	             fetched. Any deny of an operation, or project-source-denied:
//	             nothing is fetched; an operation's state is Failed. The
//	             copy's sources are the ones fetched, and the gate judges its
//	             objects with it.
//	source       reposerver/source: each source -> commit SHA + checkout,
//	             credentials from Argo CD repository Secrets.
//	render       reposerver/render, the very code `tollgate test` runs. Sources
//	             with a ref only provide `$ref/path` Helm value files. Output
//	             is cached as compact JSON per (repository, commit, path,
//	             options) in an LRU. When a comparison needs them, objects
//	             are decoded; namespaced ones get the destination namespace
//	             and every object the tracking annotation.
//	gate         policies.BuildInputs over the Application and every
//	             rendered object, with the cluster's AppProject only and the
//	             destination's REST mapper placing kinds, then EvaluateAll.
//	             Any deny: nothing is applied; conditions PolicyViolation and
//	             SyncError list `[rule] Kind/ns/name: message`, an Event is
//	             recorded, and the operation state is Failed. The reconcile
//	             stops there.
//	compare      engine/apply.Diff: server-side dry run per object with
//	             spec.ignoreDifferences; ListOwned finds what the Application
//	             tracks that is no longer rendered (requiresPruning).
//	             status.sync, status.resources, status.health.
//	sync         when requested (operation.sync, e.g. `tollgate app sync`) or
//	             due (automated): engine/apply/plan orders phases and waves,
//	             apply.Run applies wave by wave with server-side apply (field
//	             manager "tollgate"), waits for health between waves and runs
//	             SyncFail hooks on failure; then apply.Prune when pruning is on.
//	             Objects tracked by another Application are never applied
//	             (SharedResourceWarning). Status: operationState, history.
//
// Automated sync runs when the live state differs from the desired one and
// the revision is not the one last synced, or selfHeal is on; without
// selfHeal, drift at the synced revision only shows as OutOfSync. It never
// retries an automated sync that failed at the same revision, selfHeal or
// not (as Argo CD), and never syncs an empty desired state without
// allowEmpty. A self-heal (selfHeal, at the synced revision) is Argo CD's
// selective sync of the resources out of sync, without hooks or a history
// entry, and waits for Argo CD's self-heal backoff (2s, ×3, at most 5m)
// after the previous one. Changes of tracked live objects (metadata
// informers per kind; a generation, tracking or deletion change) request a
// comparison within a second, so drift is healed without waiting for the
// resync. Pruning never happens after a failed wave, in a partial sync
// beyond the selected objects, or when the desired state is empty and
// allowEmpty is false; a render error stops the reconcile before any of
// this.
//
// Errors (repository unreachable, revision not found, render error, API
// rejection) set ComparisonError or SyncError with the message, keep the
// last synced state, and return the error so controller-runtime retries with
// backoff. The status is written with JSON merge patches of the fields that
// changed, never with Update: tollgate's types drop fields they do not know,
// and a patch leaves those alone.
//
// # Conditions
//
// No step writes a condition. Each returns its outcome beside what it
// produced (the target, the comparison, the sync's operation state): the
// conditions it raises, and the step it is (conditions.go). The pass keeps
// the outcomes in the order the steps ran, and sets the Application's
// conditions from them in one place when it writes the status
// (applyOutcomes): every outcome raises its conditions and clears the types
// its step owns and did not raise, as one table (clears) says; a later
// outcome overrides an earlier one. So ComparisonError is cleared by a
// comparison only, InvalidSpecError by a valid spec, PolicyViolation by the
// gate allowing the rendered objects, and SyncError by a successful sync,
// or by the gate or the sync windows when it was their refusal.
//
// # Idle resyncs
//
// Every Application is reconciled again --resync (±10% jitter) after it was
// last compared (status.reconciledAt, as Argo CD's status refresh; one
// whose operation pass is queued waits for it: see resync.go), on a
// change of its spec, operation or finalizers, on a change of its AppProject,
// and at once when the argocd.argoproj.io/refresh annotation is set (the Git
// push webhook sets it; the controller removes it). Most of these find
// nothing new, and a server-side dry run per object would make an idle
// controller cost one API call per object per resync. So a full comparison
// is remembered with:
//
//   - its identity: the Application spec, the AppProject's resourceVersion,
//     the destination's cluster Secret's resourceVersion, the resolved
//     revisions and the render keys; and
//   - a fingerprint: the resourceVersions of every desired and every
//     recorded object, read from a metadata-only informer cache of the
//     destination cluster (started per kind on first use), taken just
//     before the comparison.
//
// A later reconcile whose identity and fingerprint are equal reuses the
// comparison: no render (cache hit), no decoding of the rendered objects,
// no gate, no dry run, no apply, no list; its only API call is the status
// patch of reconciledAt (whose answer is read as metadata only). Any change
// to a live object changes its resourceVersion, so drift is seen at the
// next resync as before. A refresh annotation, an operation, a sync, or
// Options.CompareMaxAge (default 1h) force a full comparison. The remaining
// cost of an idle resync is resolving branch names: one reference listing
// per repository per Options.ListingMaxAge (a tenth of the resync period),
// shared by every Application of the repository; a refresh or an operation
// lists again, and a full commit SHA as targetRevision needs none.
//
// # Processors and replicas
//
// Comparisons and operations have separate workers, as Argo CD's status and
// operation processors (Options.StatusProcessors, OperationProcessors): a
// comparison that finds a sync due hands the Application to the operation
// processors, which sync and compare again, so a wave waiting for health
// holds up no other comparison. A per-Application lock keeps the two apart
// (processors.go).
//
// With a Sharder (engine/shard), several replicas share the Applications:
// each reconciles only those it owns, and an operation is fenced by the
// annotation AnnotationOperationReplica, written with the Running state
// under the Application's resourceVersion. A replica leaves an Application
// whose operation another live replica runs alone, takes over the fence of
// one that is gone (fence.go), and stops applying as soon as its own
// membership lapses.
//
// # Deletion
//
// An Application with the finalizer resources-finalizer.argocd.argoproj.io
// (or its /foreground or /background variants) has its tracked resources
// deleted, highest wave first, each wave gone before the next, before the
// finalizer is removed; objects marked Delete=false stay. Without the
// finalizer, deleting the Application leaves its resources.
//
// # Git push webhook
//
// PushHandler serves /api/webhook for GitHub `push` and GitLab `Push Hook`
// events: every Application with a source in the pushed repository gets the
// refresh annotation, so it is compared (and synced, when automated) at once.
package application
