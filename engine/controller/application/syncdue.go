package application

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// syncRequest is a sync about to run: requested by a user (an operation on
// the Application) or by automated sync.
type syncRequest struct {
	// op is recorded in status.operationState.operation.
	op          v1alpha1.Operation
	user        bool
	prune       bool
	dryRun      bool
	syncOptions []string
	// resources limits a partial sync; empty means all.
	resources []v1alpha1.SyncOperationResource
	// noHooks is the apply sync strategy: hooks are not run.
	noHooks bool
	// sources are the sources synced: the spec's, or those the
	// operation names (a rollback), as recorded in the operation's result
	// and the history.
	sources []v1alpha1.ApplicationSource
}

// syncDue decides whether to sync now. A requested operation always runs.
// Automated sync (enabled) runs when the live state differs from the
// desired one and either the revision is not the one last synced, or
// selfHeal is on; it never retries a revision whose automated sync failed
// (selfHeal corrects drift of a revision that synced), and never syncs an
// empty desired state without allowEmpty. Objects tracked by another
// Application do not count as differences: they are never applied. A
// self-heal that is due later, after its backoff, returns the wait.
func (r *Reconciler) syncDue(app *v1alpha1.Application, op *v1alpha1.Operation, cmp *comparison, state *desiredState) (*syncRequest, time.Duration) {
	syncOptions := appSyncOptions(app)
	if op != nil {
		s := op.Sync
		req := &syncRequest{op: *op.DeepCopy(), user: true, prune: s.Prune, dryRun: s.DryRun, syncOptions: syncOptions, resources: s.Resources}
		if len(s.SyncOptions) > 0 {
			req.syncOptions = s.SyncOptions
		}
		req.noHooks = s.SyncStrategy != nil && s.SyncStrategy.Apply != nil && s.SyncStrategy.Hook == nil
		if st := s.SyncStrategy; st != nil && ((st.Apply != nil && st.Apply.Force) || (st.Hook != nil && st.Hook.Force)) {
			// argocd app sync --force: a forced apply of every object, as
			// the Force=true sync option makes it.
			req.syncOptions = append(slices.Clone(req.syncOptions), "Force=true")
		}
		return req, 0
	}
	var auto *v1alpha1.SyncPolicyAutomated
	if app.Spec.SyncPolicy != nil {
		auto = app.Spec.SyncPolicy.Automated
	}
	if !auto.IsEnabled() || cmp.status == v1alpha1.SyncStatusCodeSynced {
		return nil, 0
	}
	if !cmp.drift && (len(cmp.owned) == 0 || !auto.Prune) {
		return nil, 0
	}
	if len(state.NonHooks()) == 0 && !auto.AllowEmpty {
		return nil, 0
	}
	st := app.Status.OperationState
	if st != nil && st.Operation.InitiatedBy.Automated && st.Phase.Completed() && !st.Phase.Successful() &&
		st.SyncResult != nil && sameRevisions(syncedRevisions(st.SyncResult), state.Revisions) &&
		specSources(app, st.SyncResult.Source, st.SyncResult.Sources) {
		// This revision already failed, selfHeal or not (Argo CD's
		// alreadyAttemptedSync): a new commit or a manual sync is needed;
		// the SyncError condition of the failure stays.
		return nil, 0
	}
	var healed int64
	if syncedBefore(app, state.Revisions) {
		if !auto.SelfHeal {
			return nil, 0 // drift at the synced revision only shows as OutOfSync
		}
		now := r.opts.Now()
		healed = selfHealAttempts(st, now)
		if wait := selfHealWait(st, healed, now); wait > 0 {
			return nil, wait
		}
		healed++
	}
	op2 := v1alpha1.Operation{
		Sync:        &v1alpha1.SyncOperation{Prune: auto.Prune, SyncOptions: syncOptions, SelfHealAttemptsCount: healed},
		InitiatedBy: v1alpha1.OperationInitiator{Automated: true},
		Retry:       automatedRetry(app),
	}
	if healed > 0 {
		// As Argo CD: a self-heal syncs only what is out of sync (a
		// selective sync: no hooks, no history entry).
		op2.Sync.Resources = outOfSyncResources(cmp)
	}
	op2.Sync.SetRevisions(app.Spec.HasMultipleSources(), state.Revisions)
	return &syncRequest{op: op2, prune: auto.Prune, syncOptions: syncOptions, resources: op2.Sync.Resources}, 0
}

// outOfSyncResources names the resources of cmp that are not Synced, as a
// self-heal's selective sync does (group, kind and name).
func outOfSyncResources(cmp *comparison) []v1alpha1.SyncOperationResource {
	var out []v1alpha1.SyncOperationResource
	for _, rs := range cmp.resources {
		if rs.Status != v1alpha1.SyncStatusCodeSynced {
			out = append(out, v1alpha1.SyncOperationResource{Group: rs.Group, Kind: rs.Kind, Name: rs.Name})
		}
	}
	return out
}

// Argo CD's self-heal backoff (--self-heal-backoff-timeout-seconds,
// -factor, -cap-seconds and -cooldown-seconds at their defaults): the n-th
// self-heal in a row of one revision waits 2s×3^(n-2) after the previous
// operation finished, at most 5 minutes (the first runs at once); a count
// whose last operation finished longer than the cooldown ago starts again.
const (
	selfHealBackoff    = 2 * time.Second
	selfHealFactor     = 3
	selfHealBackoffCap = 5 * time.Minute
	selfHealCooldown   = 330 * time.Second
)

// selfHealAttempts is the number of self-heals in a row recorded by the
// last operation st, when it was an automated one that finished within
// the cooldown; else 0.
func selfHealAttempts(st *v1alpha1.OperationState, now time.Time) int64 {
	if st == nil || st.Operation.Sync == nil || !st.Operation.InitiatedBy.Automated || st.FinishedAt == nil ||
		now.Sub(st.FinishedAt.Time) > selfHealCooldown {
		return 0
	}
	return st.Operation.Sync.SelfHealAttemptsCount
}

// selfHealWait is how long the self-heal after n in a row still waits.
func selfHealWait(st *v1alpha1.OperationState, n int64, now time.Time) time.Duration {
	if n == 0 || st == nil || st.FinishedAt == nil {
		return 0
	}
	delay := selfHealBackoff
	for i := int64(1); i < n && delay < selfHealBackoffCap; i++ {
		delay *= selfHealFactor
	}
	return st.FinishedAt.Add(min(delay, selfHealBackoffCap)).Sub(now)
}

// appSyncOptions are the Application's spec.syncPolicy.syncOptions.
func appSyncOptions(app *v1alpha1.Application) []string {
	if sp := app.Spec.SyncPolicy; sp != nil {
		return sp.SyncOptions
	}
	return nil
}

// syncedBefore reports whether app's last sync (the last successful
// operation's result, else the newest deployment of its history) deployed
// revisions from the sources the spec has now. As Argo CD's
// alreadyAttemptedSync, both count: a source changed at the same revision
// (a parameter, a path, a name prefix) is synced again.
func syncedBefore(app *v1alpha1.Application, revisions []string) bool {
	if st := app.Status.OperationState; st != nil && st.Phase.Successful() && st.SyncResult != nil {
		return sameRevisions(syncedRevisions(st.SyncResult), revisions) && specSources(app, st.SyncResult.Source, st.SyncResult.Sources)
	}
	if n := len(app.Status.History); n > 0 {
		h := &app.Status.History[n-1]
		synced := h.Revisions
		if len(synced) == 0 {
			synced = []string{h.Revision}
		}
		return sameRevisions(synced, revisions) && specSources(app, h.Source, h.Sources)
	}
	return false
}

// specSources reports whether app's sources are those a sync recorded
// (source, or sources for several).
func specSources(app *v1alpha1.Application, source v1alpha1.ApplicationSource, sources []v1alpha1.ApplicationSource) bool {
	if len(sources) == 0 {
		sources = []v1alpha1.ApplicationSource{source}
	}
	spec := app.Sources()
	if len(spec) == 0 {
		spec = []v1alpha1.ApplicationSource{{}}
	}
	return equality.Semantic.DeepEqual(spec, sources)
}

func syncedRevisions(res *v1alpha1.SyncOperationResult) []string {
	if len(res.Revisions) > 0 {
		return res.Revisions
	}
	return []string{res.Revision}
}

func sameRevisions(a, b []string) bool {
	return len(a) > 0 && slices.Equal(a, b)
}

// syncedSources are the sources the sync ran with: req.sources, or app's
// when the caller did not say (a copy: the result and the history keep
// them).
func (req *syncRequest) syncedSources(app *v1alpha1.Application) []v1alpha1.ApplicationSource {
	if len(req.sources) > 0 {
		out := make([]v1alpha1.ApplicationSource, len(req.sources))
		for i := range req.sources {
			req.sources[i].DeepCopyInto(&out[i])
		}
		return out
	}
	return app.Sources()
}
