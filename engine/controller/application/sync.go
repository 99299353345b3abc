package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/engine/metrics"
)

// sync runs one sync: plan, waves (with hooks and SyncFail hooks), prune,
// and records the operation state, history and event; it returns its
// outcome (stepSync), none when it did not end (not started, waiting for a
// deletion confirmation). A failure its operation's retry strategy allows
// to retry keeps the operation Running and due again after the backoff
// (nil error); any other failure is an error, for a retry of the reconcile
// with backoff.
func (r *Reconciler) sync(ctx context.Context, p *pass, door *authority.Door, req *syncRequest, state *desiredState, cmp *comparison) (outcome, error) {
	app := p.app
	log := ctrl.LoggerFrom(ctx)
	started := metav1.NewTime(r.opts.Now().UTC().Truncate(time.Second))
	if req.user {
		p.ranOp = app.Operation.DeepCopy()
	}
	// The same operation, resumed (a retry, or after waiting for a sync
	// window or a pruning confirmation), keeps its retry count and start.
	var retries int64
	if prev := app.Status.OperationState; prev != nil && prev.Phase == v1alpha1.OperationRunning && equalOperations(&prev.Operation, &req.op) {
		retries, started = prev.RetryCount, prev.StartedAt
	}
	app.Status.OperationState = &v1alpha1.OperationState{
		Operation: req.op, Phase: v1alpha1.OperationRunning, Message: "syncing", StartedAt: started, RetryCount: retries,
	}
	if err := r.recordRunning(ctx, p); err != nil {
		return outcome{}, err
	}
	opCtx, stop := r.operationContext(ctx, p.key, started.Time)
	results, runErr := r.runSync(opCtx, p, door, req, state, cmp)
	terminated := context.Cause(opCtx)
	stop()
	if errors.Is(terminated, errFenceLost) {
		// This replica's membership lapsed: it stopped applying, and the
		// replica that owns the Application next resumes the operation.
		return outcome{}, fmt.Errorf("%w: this replica's shard membership lapsed during the operation", errFenceLost)
	}
	finished := metav1.NewTime(r.opts.Now().UTC().Truncate(time.Second))
	st := app.Status.OperationState
	st.FinishedAt = &finished
	st.SyncResult = &v1alpha1.SyncOperationResult{Resources: results}
	if app.Spec.HasMultipleSources() {
		st.SyncResult.Revisions = state.Revisions
		st.SyncResult.Sources = req.syncedSources(app)
	} else {
		st.SyncResult.Revision = state.Revisions[0]
		if srcs := req.syncedSources(app); len(srcs) > 0 {
			st.SyncResult.Source = srcs[0]
		}
	}
	if runErr != nil && errors.Is(terminated, apply.ErrTerminated) {
		// As Argo CD: a terminated operation fails and is not retried;
		// its running hooks were deleted.
		st.Phase, st.Message = v1alpha1.OperationFailed, "Operation terminated"
		if msg := terminated.Error(); msg != apply.ErrTerminated.Error() {
			st.Message += strings.TrimPrefix(msg, apply.ErrTerminated.Error())
		}
		p.events = append(p.events, pendingEvent{corev1.EventTypeWarning, "OperationTerminated", st.Message})
		r.metrics.Syncs.WithLabelValues(metrics.SyncResultFailed).Inc()
		return raise(stepSync, v1alpha1.ApplicationConditionSyncError, st.Message), nil
	}
	if confirm := (*apply.ConfirmationError)(nil); errors.As(runErr, &confirm) && !req.dryRun {
		// As Argo CD: the operation stays Running until the deletion is
		// approved (tollgate app confirm-deletion), which reconciles.
		st.Phase, st.Message, st.FinishedAt = v1alpha1.OperationRunning, confirm.Error(), nil
		p.ranOp = nil
		app.Operation = req.op.DeepCopy()
		return outcome{}, nil
	}
	if runErr != nil {
		st.Phase, st.Message = v1alpha1.OperationFailed, "sync failed: "+runErr.Error()
		retry := !req.dryRun && retryAllowed(req.op.Retry, retries) && !authority.IsRefused(runErr)
		wait, backoffErr := retryDelay(req.op.Retry, retries+1)
		if retry && backoffErr != nil {
			// As Argo CD: a backoff that does not parse ends the operation.
			st.Phase = v1alpha1.OperationError
			st.Message = fmt.Sprintf("%s (failed to retry: %v)", st.Message, backoffErr)
		}
		if retry && backoffErr == nil {
			// As Argo CD: the operation stays Running and runs again
			// after the backoff; the next reconcile is due then.
			st.RetryCount = retries + 1
			st.Phase = v1alpha1.OperationRunning
			st.Message = fmt.Sprintf("%s. Retrying attempt #%d at %s.", st.Message, st.RetryCount, finished.Add(wait).Format(time.Kitchen))
			p.ranOp, p.requeueAfter = nil, wait
			app.Operation = req.op.DeepCopy()
			p.events = append(p.events, pendingEvent{corev1.EventTypeWarning, "SyncFailed", st.Message})
			r.metrics.Syncs.WithLabelValues(metrics.SyncResultFailed).Inc()
			return raise(stepSync, v1alpha1.ApplicationConditionSyncError, st.Message), nil
		}
		if retries > 0 {
			st.Message += fmt.Sprintf(" (retried %d times).", retries)
		}
		p.events = append(p.events, pendingEvent{corev1.EventTypeWarning, "SyncFailed", st.Message})
		r.metrics.Syncs.WithLabelValues(metrics.SyncResultFailed).Inc()
		return raise(stepSync, v1alpha1.ApplicationConditionSyncError, st.Message), fmt.Errorf("sync: %w", runErr)
	}
	st.Phase = v1alpha1.OperationSucceeded
	st.Message = fmt.Sprintf("successfully synced (%d resources)", countApplied(results))
	switch {
	case req.dryRun:
		st.Message = fmt.Sprintf("dry run: %d resources would be applied; nothing was changed", len(results))
	case len(req.resources) == 0:
		// As Argo CD: a selective sync is not recorded in the history
		// (it cannot be rolled back to).
		r.appendHistory(app, req, state, started, finished)
	}
	p.events = append(p.events, pendingEvent{corev1.EventTypeNormal, "SyncSucceeded", st.Message + " at " + strings.Join(shortSHAs(state.Revisions), ",")})
	r.metrics.Syncs.WithLabelValues(metrics.SyncResultSucceeded).Inc()
	log.Info("Synced", "revisions", state.Revisions, "resources", len(results))
	return outcome{step: stepSync}, nil
}

// recordRunning writes the Running operation state, so that watchers see
// the sync. With sharding it is the operation's fence: written with this
// replica's name under the Application's resourceVersion, it fails with
// errFenceLost when the Application changed since the pass read it
// (another replica may have started), and nothing is applied. Without
// sharding a failure to write does not stop the sync.
func (r *Reconciler) recordRunning(ctx context.Context, p *pass) error {
	app := p.app
	if r.shard == nil {
		if err := writeApplication(ctx, r.client, p.orig, app, nil, ""); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "record running sync")
		} else {
			p.orig = app.DeepCopy()
		}
		return nil
	}
	if app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	app.Annotations[AnnotationOperationReplica] = r.shard.Identity()
	if err := patchIfChanged(ctx, r.client, p.orig, app, true); err != nil {
		if apierrors.IsConflict(err) {
			return errFenceLost
		}
		return fmt.Errorf("%w: record running sync: %w", errNotStarted, err)
	}
	p.orig, p.fenced = app.DeepCopy(), true
	return nil
}

// terminatePoll is how often a running operation looks whether it was
// asked to terminate; fencePoll how often, with sharding, whether this
// replica still holds its membership (it stops applying at once when not).
const (
	terminatePoll = time.Second
	fencePoll     = 200 * time.Millisecond
)

// operationContext returns the context one operation runs in. It ends, with
// a cause wrapping apply.ErrTerminated, when the operation is asked to
// terminate (tollgate or argocd app terminate-op turn the cached
// Application's operation phase to Terminating) or has run for
// Options.SyncTimeout since started. With sharding, it ends with
// errFenceLost as soon as this replica no longer holds its membership, a
// third of the lease duration before another replica may take the
// operation over. stop releases it.
func (r *Reconciler) operationContext(ctx context.Context, key types.NamespacedName, started time.Time) (opCtx context.Context, stop func()) {
	opCtx, cancel := context.WithCancelCause(ctx)
	var timer *time.Timer
	if d := r.opts.SyncTimeout; d > 0 {
		timer = time.AfterFunc(max(started.Add(d).Sub(r.opts.Now()), 0), func() {
			cancel(fmt.Errorf("%w: it ran longer than the sync timeout (%s)", apply.ErrTerminated, d))
		})
	}
	go func() {
		tick := time.NewTicker(fencePoll)
		defer tick.Stop()
		var lastPoll time.Time
		for {
			select {
			case <-opCtx.Done():
				return
			case now := <-tick.C:
				if r.shard != nil && !r.shard.Holding() {
					cancel(errFenceLost)
					return
				}
				if now.Sub(lastPoll) < terminatePoll {
					continue
				}
				lastPoll = now
			}
			var app v1alpha1.Application
			if err := r.client.Get(opCtx, key, &app, client.UnsafeDisableDeepCopy); err == nil && terminating(&app) {
				cancel(apply.ErrTerminated)
				return
			}
		}
	}()
	return opCtx, func() {
		if timer != nil {
			timer.Stop()
		}
		cancel(nil)
	}
}

// runSync applies the plan and prunes, through the Application's door to
// the cluster: nothing is written unless its project permits every object
// the sync touches. Failures of objects are in the results and the error.
func (r *Reconciler) runSync(ctx context.Context, p *pass, door *authority.Door, req *syncRequest, state *desiredState, cmp *comparison) ([]v1alpha1.ResourceResult, error) {
	opts, err := plan.ParseSyncOptions(req.syncOptions...)
	if err != nil {
		return nil, err
	}
	if opts.FailOnSharedResource && len(cmp.shared) > 0 {
		// As Argo CD: the whole sync fails, before anything is applied.
		return nil, fmt.Errorf("shared resource found (FailOnSharedResource=true): %s", strings.ReplaceAll(cmp.sharedMessage(), "\n", "; "))
	}
	var objs []*unstructured.Unstructured
	for _, o := range state.Objects {
		switch {
		case cmp.isShared(o):
		case req.noHooks && plan.IsHook(o):
		case len(req.resources) > 0 && !selected(o, req.resources):
		default:
			objs = append(objs, o)
		}
	}
	waves, err := plan.Build(objs, req.syncOptions...)
	if err != nil {
		return nil, err
	}
	if req.dryRun {
		var out []v1alpha1.ResourceResult
		for _, w := range waves {
			for _, t := range w.Tasks {
				out = append(out, resourceResult(apply.ResourceResult{Ref: apply.RefOf(t.Object), Phase: t.Phase, Hook: t.Hook, Status: apply.ResultSynced, Message: "dry run"}))
			}
		}
		return out, nil
	}
	progress := &syncProgress{ctx: ctx, r: r, p: p}
	s := authority.Sync{Waves: waves, Options: apply.WaveOptions{
		App: p.instance, SyncID: fmt.Sprint(p.now.Unix()), Diffs: cmp.diffs, Ignore: r.ignoreDifferences(p.app),
		MigrationManager: p.app.Annotations[apply.AnnotationMigrationManager], Progress: progress.report,
	}}
	s.Namespace = managedNamespace(p.app, opts)
	skipped, err := r.pruning(p, req, state, cmp, &s)
	if err != nil {
		return nil, err
	}
	res, runErr := door.Sync(ctx, s)
	var out []v1alpha1.ResourceResult
	for _, w := range res.Waves {
		for _, rr := range w.Results {
			if rr.Status == apply.ResultSynced && !strings.HasPrefix(rr.Message, "in sync, not applied") {
				r.metrics.ApplyCalls.Inc()
			}
			out = append(out, resourceResult(rr))
		}
	}
	for _, rr := range res.Pruned {
		rr.Phase = plan.PhaseSync
		out = append(out, resourceResult(rr))
	}
	return append(out, skipped...), runErr
}

// managedNamespace is the destination Namespace a sync of app with opts
// creates (CreateNamespace=true) and labels (managedNamespaceMetadata); nil
// when there is none.
func managedNamespace(app *v1alpha1.Application, opts plan.SyncOptions) *authority.Namespace {
	ns := app.Spec.Destination.Namespace
	if !opts.CreateNamespace || ns == "" {
		return nil
	}
	out := &authority.Namespace{Name: ns}
	if sp := app.Spec.SyncPolicy; sp != nil && sp.ManagedNamespaceMetadata != nil {
		out.Labels, out.Annotations = sp.ManagedNamespaceMetadata.Labels, sp.ManagedNamespaceMetadata.Annotations
	}
	return out
}

// gated are the objects the gate judges for a sync of app (with op, the
// requested operation, if any): the desired objects and the Namespace the
// sync would create or label, so that every object a sync writes is
// judged before it starts.
func gated(app *v1alpha1.Application, op *v1alpha1.Operation, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	syncOptions := appSyncOptions(app)
	if op != nil && op.Sync != nil && len(op.Sync.SyncOptions) > 0 {
		syncOptions = op.Sync.SyncOptions
	}
	opts, err := plan.ParseSyncOptions(syncOptions...)
	if err != nil {
		return objs // the sync fails on them before anything is written
	}
	if ns := managedNamespace(app, opts); ns != nil {
		return append(slices.Clip(objs), ns.Object())
	}
	return objs
}

// pruning adds to s the pruning of what the Application owns and no longer
// renders, when pruning is on, the sync is complete (not partial) and the
// desired state is not empty without allowEmpty. Otherwise the objects
// awaiting pruning are returned as PruneSkipped.
func (r *Reconciler) pruning(p *pass, req *syncRequest, state *desiredState, cmp *comparison, s *authority.Sync) ([]v1alpha1.ResourceResult, error) {
	allowEmpty := false
	if sp := p.app.Spec.SyncPolicy; sp != nil && sp.Automated != nil {
		allowEmpty = sp.Automated.AllowEmpty
	}
	owned := cmp.owned
	if len(req.resources) > 0 {
		// A selective sync prunes only the selected objects, as Argo CD.
		owned = slices.DeleteFunc(slices.Clone(owned), func(o *unstructured.Unstructured) bool { return !selected(o, req.resources) })
	}
	reason := ""
	switch {
	case len(owned) == 0:
		return nil, nil
	case !req.prune:
		reason = "pruning is disabled for this sync"
	case len(state.NonHooks()) == 0 && !allowEmpty:
		reason = "the desired state is empty and allowEmpty is false: nothing is pruned"
	}
	if reason != "" {
		var out []v1alpha1.ResourceResult
		for _, rs := range p.app.Status.Resources {
			if rs.RequiresPruning && (len(req.resources) == 0 || selectedStatus(rs, req.resources)) {
				out = append(out, v1alpha1.ResourceResult{Group: rs.Group, Version: rs.Version, Kind: rs.Kind, Namespace: rs.Namespace, Name: rs.Name,
					Status: v1alpha1.ResultCodePruneSkipped, Message: reason, SyncPhase: v1alpha1.SyncPhaseSync})
			}
		}
		return out, nil
	}
	opts, err := plan.ParseSyncOptions(req.syncOptions...)
	if err != nil {
		return nil, err
	}
	// Every desired object counts as wanted, including those shared with
	// another Application: they are not ours to delete.
	s.Prune = &authority.Prune{Owned: owned, Desired: state.Objects, Options: apply.PruneOptions{
		App: p.instance, PropagationPolicy: opts.PrunePropagationPolicy, AppSyncOptions: req.syncOptions,
		Confirmed: p.app.IsDeletionConfirmed(p.app.Status.OperationState.StartedAt.Time),
	}}
	return nil, nil
}

// selected reports whether a partial sync of resources syncs obj
// (v1alpha1.IncludeResource: wildcards and exclusions as in Argo CD).
func selected(obj *unstructured.Unstructured, resources []v1alpha1.SyncOperationResource) bool {
	gvk := obj.GroupVersionKind()
	return v1alpha1.IncludeResource(obj.GetName(), obj.GetNamespace(), gvk.Group, gvk.Kind, resources)
}

// selectedStatus reports whether a partial sync of resources syncs rs.
func selectedStatus(rs v1alpha1.ResourceStatus, resources []v1alpha1.SyncOperationResource) bool {
	return v1alpha1.IncludeResource(rs.Name, rs.Namespace, rs.Group, rs.Kind, resources)
}

// resourceResult converts an apply result to Argo CD's.
func resourceResult(res apply.ResourceResult) v1alpha1.ResourceResult {
	out := v1alpha1.ResourceResult{
		Group: res.Ref.Group, Version: res.Ref.Version, Kind: res.Ref.Kind,
		Namespace: res.Ref.Namespace, Name: res.Ref.Name,
		Status: v1alpha1.ResultCode(res.Status), Message: res.Message,
		SyncPhase: v1alpha1.SyncPhase(res.Phase),
	}
	if res.Hook {
		out.HookType = v1alpha1.HookType(res.Phase)
		out.HookPhase = v1alpha1.OperationPhase(res.HookPhase)
	}
	return out
}

func countApplied(results []v1alpha1.ResourceResult) int {
	n := 0
	for _, r := range results {
		if r.Status == v1alpha1.ResultCodeSynced || r.Status == v1alpha1.ResultCodePruned {
			n++
		}
	}
	return n
}

func shortSHAs(revs []string) []string {
	out := make([]string, len(revs))
	for i, r := range revs {
		out[i] = v1alpha1.ShortRevision(r)
	}
	return out
}

// appendHistory records a successful sync, keeping at most
// spec.revisionHistoryLimit entries (default 10).
func (r *Reconciler) appendHistory(app *v1alpha1.Application, req *syncRequest, state *desiredState, started, finished metav1.Time) {
	var id int64
	for _, h := range app.Status.History {
		id = max(id, h.ID+1)
	}
	h := v1alpha1.RevisionHistory{
		ID: id, DeployedAt: finished, DeployStartedAt: &started, InitiatedBy: req.op.InitiatedBy,
	}
	if app.Spec.HasMultipleSources() {
		h.Revisions, h.Sources = state.Revisions, req.syncedSources(app)
	} else {
		h.Revision = state.Revisions[0]
		if srcs := req.syncedSources(app); len(srcs) > 0 {
			h.Source = srcs[0]
		}
	}
	limit := int64(DefaultHistoryLimit)
	if app.Spec.RevisionHistoryLimit != nil {
		limit = max(*app.Spec.RevisionHistoryLimit, 1)
	}
	hist := append(app.Status.History, h)
	if int64(len(hist)) > limit {
		hist = hist[int64(len(hist))-limit:]
	}
	app.Status.History = hist
}

// policyViolationMessage is the PolicyViolation condition's message: the
// refused revisions, when known, on a line of their own, then one line per
// denial. A new revision refused for the same reasons is a new message (the
// notification trigger on-policy-violation fires once per message).
func policyViolationMessage(v authority.Verdict, revisions []string) string {
	if len(revisions) == 0 {
		return v.Message()
	}
	return "revision " + strings.Join(revisions, ", ") + " refused:\n" + v.Message()
}

// refusedByPolicy starts the SyncError message of a refusal by the gate.
const refusedByPolicy = "sync refused by policy"

// deny records a refusal by the policy gate: a Failed operation state when
// a sync was requested or an automated sync would have run at revisions
// (written once per refusal), and nothing applied. It returns the outcome
// (stepGate): conditions PolicyViolation and SyncError.
func (r *Reconciler) deny(p *pass, v authority.Verdict, revisions []string) outcome {
	app := p.app
	msg := refusedByPolicy + ", nothing was applied:\n" + v.Message()
	denied := outcome{step: stepGate, raised: map[string]string{
		v1alpha1.ApplicationConditionPolicyViolation: policyViolationMessage(v, revisions),
		v1alpha1.ApplicationConditionSyncError:       msg,
	}}
	op := app.Operation
	if op == nil {
		var auto *v1alpha1.SyncPolicyAutomated
		if app.Spec.SyncPolicy != nil {
			auto = app.Spec.SyncPolicy.Automated
		}
		if !auto.IsEnabled() || syncedBefore(app, revisions) {
			return denied
		}
		op = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}}
		op.Sync.SetRevisions(app.Spec.HasMultipleSources(), revisions)
	} else {
		p.ranOp = op.DeepCopy()
	}
	if st := app.Status.OperationState; st != nil && st.Phase == v1alpha1.OperationFailed && st.Message == msg &&
		equalOperations(&st.Operation, op) && p.ranOp == nil {
		return denied // already recorded
	}
	app.Status.OperationState = &v1alpha1.OperationState{
		Operation: *op.DeepCopy(), Phase: v1alpha1.OperationFailed, Message: msg,
		StartedAt: p.now, FinishedAt: &p.now,
	}
	r.metrics.Syncs.WithLabelValues(metrics.SyncResultDenied).Inc()
	return denied
}

// refuseOperation ends a requested operation that cannot run, and returns
// the outcome (stepRefused): a SyncError condition with msg.
func (r *Reconciler) refuseOperation(p *pass, op *v1alpha1.Operation, msg string) outcome {
	p.ranOp = op.DeepCopy()
	p.app.Status.OperationState = &v1alpha1.OperationState{
		Operation: *op.DeepCopy(), Phase: v1alpha1.OperationError, Message: msg,
		StartedAt: p.now, FinishedAt: &p.now,
	}
	r.metrics.Syncs.WithLabelValues(metrics.SyncResultFailed).Inc()
	return raise(stepRefused, v1alpha1.ApplicationConditionSyncError, msg)
}

func equalOperations(a, b *v1alpha1.Operation) bool {
	return equality.Semantic.DeepEqual(a, b)
}
