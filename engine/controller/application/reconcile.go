package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/go-logr/logr"
	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/engine/metrics"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// pass is the state of one reconcile of one Application. The Application is
// changed in memory and written once at the end (plus once when a sync
// starts, so that watchers see it Running). Its conditions are not part of
// it: the steps return their outcomes, and finish sets the conditions from
// them (applyOutcomes).
type pass struct {
	app      *v1alpha1.Application
	orig     *v1alpha1.Application
	key      types.NamespacedName
	instance string
	now      metav1.Time
	// ranOp is the requested operation that this pass ran (or refused); it
	// is cleared from the Application when the status is written.
	ranOp *v1alpha1.Operation
	// events are recorded once the status is written.
	events []pendingEvent
	// requeueAfter, when positive and sooner than the resync, is when the
	// Application is due again (a sync retry).
	requeueAfter time.Duration
	// operation: the pass is the operation processors'; only they sync.
	operation bool
	// handOff: a sync is due, for the operation processors.
	handOff bool
	// fenced: the pass fenced the operation it ran
	// (AnnotationOperationReplica); its last write removes the fence.
	fenced bool
	// server is the API server URL of the destination, once resolved.
	server string
}

type pendingEvent struct {
	eventType, reason, note string
}

// Reconcile is the status processors' reconcile: it compares one
// Application with its destination and hands a sync that is due to the
// operation processors (see processors.go and the package documentation).
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	kl, ok := r.locks.tryLock(req.NamespacedName)
	if !ok {
		return reconcile.Result{}, nil // its operation runs; compared when it ends
	}
	defer r.unlock(req.NamespacedName, kl)
	return r.reconcile(ctx, req, false)
}

// reconcileOperation is the operation processors' reconcile: it runs the
// Application's operation, or the automated sync that is due, and compares
// again.
func (r *Reconciler) reconcileOperation(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.operationStarts(req.NamespacedName)
	kl := r.locks.lock(req.NamespacedName)
	defer r.unlock(req.NamespacedName, kl)
	return r.reconcile(ctx, req, true)
}

// unlock releases an Application's lock and queues the comparison asked
// for while it was held.
func (r *Reconciler) unlock(key types.NamespacedName, kl *keyLock) {
	if r.locks.unlock(key, kl) {
		r.statusQueue.add(key)
	}
}

// reconcile is one pass over one Application, by the operation processors
// when operation is set (only they sync), else by the status processors.
func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request, operation bool) (reconcile.Result, error) {
	start := time.Now()
	defer func() { r.metrics.Duration.Observe(time.Since(start).Seconds()) }()
	orig, res, err := r.read(ctx, req, operation)
	if orig == nil || err != nil {
		return res, err
	}
	var p *pass
	if !operation {
		defer func() { r.observeReconcile(orig, p, start) }()
	}
	ctx = metrics.WithApplication(ctx, orig) // its requests to the destination count as its
	app := orig.DeepCopy()
	if app.DeletionTimestamp != nil {
		return r.finalize(ctx, app)
	}
	p = &pass{
		app: app, orig: orig, key: req.NamespacedName, operation: operation,
		instance: app.InstanceName(r.opts.Namespace),
		now:      metav1.NewTime(r.opts.Now().UTC().Truncate(time.Second)),
	}
	// The pass has a deadline, so no Application holds a worker for
	// longer; its findings are still written with ctx.
	runCtx, cancel := context.WithTimeout(ctx, r.opts.ReconcileTimeout)
	outs, runErr := r.run(runCtx, p)
	cancel()
	if runErr != nil && errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		runErr = fmt.Errorf("reconcile passed its deadline (%s): %w", r.opts.ReconcileTimeout, runErr)
	}
	switch {
	case errors.Is(runErr, errFenceLost):
		// Another replica runs the operation: nothing of this pass is
		// written; the next pass finds its fence.
		return reconcile.Result{RequeueAfter: r.fenceRetry()}, nil
	case errors.Is(runErr, errNotStarted):
		return reconcile.Result{}, runErr
	}
	if err := r.finish(ctx, p, outs); err != nil {
		if errors.Is(err, errFenceLost) {
			return reconcile.Result{RequeueAfter: r.fenceRetry()}, runErr
		}
		return reconcile.Result{}, errors.Join(runErr, err)
	}
	if p.handOff {
		r.handOff(p.key)
	}
	if !operation {
		r.scheduleResync(p.key)
	}
	if runErr != nil {
		return reconcile.Result{}, runErr
	}
	// Only a wait of the pass (a retry, a sync window, self-heal's
	// backoff) is due here; the resync comes by its own schedule.
	return reconcile.Result{RequeueAfter: p.requeueAfter}, nil
}

// read returns the Application of req as this pass acts on it, or nil
// with the result to return: it is another replica's, it is gone, its
// operation is for the operation processors, or another replica runs it.
// The fence of a replica that is gone is taken over here.
func (r *Reconciler) read(ctx context.Context, req reconcile.Request, operation bool) (*v1alpha1.Application, reconcile.Result, error) {
	// The cached Application is read without a copy, as orig, which is
	// never modified (it shares its maps and slices with the cache); the
	// pass changes a deep copy of it.
	var orig v1alpha1.Application
	err := r.client.Get(ctx, req.NamespacedName, &orig, client.UnsafeDisableDeepCopy)
	if err == nil && r.shard != nil && !r.shard.Owns(req.String()) {
		r.forget(req.NamespacedName)
		return nil, reconcile.Result{}, nil // another replica's
	}
	if err == nil && orig.SkipReconcile() {
		// As Argo CD, nothing at all: no comparison, no operation, no
		// finalizer; removing the annotation brings it back.
		logr.FromContextOrDiscard(ctx).V(1).Info("Skipping the Application: annotated " + v1alpha1.AnnotationKeyAppSkipReconcile)
		r.forget(req.NamespacedName)
		return nil, reconcile.Result{}, nil
	}
	if err == nil && orig.Operation != nil {
		if !operation {
			r.handOff(req.NamespacedName)
			r.scheduleResync(req.NamespacedName)
			return nil, reconcile.Result{}, nil
		}
		// As Argo CD, an operation is acted on from the Application as the
		// API server has it: the cache may not hold yet what the pass that
		// ran the operation wrote, and the operation would run (or end)
		// a second time.
		orig = v1alpha1.Application{}
		err = r.apiReader.Get(ctx, req.NamespacedName, &orig)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return nil, reconcile.Result{}, nil
		}
		return nil, reconcile.Result{}, fmt.Errorf("get application %s: %w", req.Name, err)
	}
	if r.fencedByOther(&orig) {
		return nil, reconcile.Result{RequeueAfter: r.shard.RenewInterval()}, nil
	}
	if err := r.takeOver(ctx, &orig); err != nil {
		return nil, reconcile.Result{}, err
	}
	// A copying read sets the kind; this one leaves the cache's TypeMeta.
	orig.SetGroupVersionKind(v1alpha1.ApplicationGroupVersionKind)
	return &orig, reconcile.Result{}, nil
}

// fenceRetry is how soon to look again at an Application another replica
// runs the operation of.
func (r *Reconciler) fenceRetry() time.Duration {
	if r.shard == nil {
		return staleCacheRetry
	}
	return r.shard.RenewInterval()
}

// run is the data path: destination, sources, render, gate, compare, sync.
// It records its findings on p, and returns the outcomes of its steps in
// the order they ran, for finish to set the conditions from; an error asks
// for a retry with backoff.
func (r *Reconciler) run(ctx context.Context, p *pass) ([]outcome, error) {
	app := p.app
	tg, outs, err := r.target(ctx, p)
	if err != nil || tg == nil {
		return outs, err
	}
	allowed, judged, err := r.judgeBeforeFetch(ctx, p, tg)
	outs = append(outs, judged)
	if err != nil || !allowed {
		return outs, err
	}
	state, err := r.desiredState(ctx, p, tg)
	if unsigned := r.refuseUnsigned(ctx, p, tg, err); unsigned != nil {
		return append(outs, unsigned...), nil // not signed with a key the project allows; nothing rendered
	}
	if err != nil {
		outs = append(outs, failed(err))
		if tg.op != nil && !errors.Is(err, reposerver.ErrRepoUnreachable) {
			// The request cannot succeed by waiting: refuse it.
			outs = append(outs, r.refuseOperation(p, tg.op, "comparison failed: "+err.Error()))
		}
		return outs, err
	}
	if app.Spec.HasMultipleSources() {
		app.Status.SourceType, app.Status.SourceTypes = "", state.SourceTypes
	} else {
		app.Status.SourceType, app.Status.SourceTypes = state.SourceTypes[0], nil
	}
	cmp, fresh, found, err := r.comparison(ctx, p, tg, state)
	outs = append(outs, found...)
	if err != nil {
		return append(outs, failed(err)), err
	}
	if cmp == nil {
		return outs, nil // denied by policy, or outside the cluster's managed namespaces
	}
	outs = append(outs, r.recordComparison(p, cmp, state, tg.sources))
	if state.Built() {
		deleteHookFinalizers(app, state.Objects)
	}
	if cmp.status != v1alpha1.SyncStatusCodeSynced {
		// A sync may be due: it needs the objects (a reused comparison
		// did not build them).
		if err := state.Build(ctx); err != nil {
			return append(outs, failed(err)), err
		}
		if !fresh {
			// The gate allowed these very objects when the comparison was
			// made: same spec, project version, revisions and render.
			tg.door.Admit(gated(app, tg.op, state.Objects))
		}
	}

	req, healAfter := r.syncDue(app, tg.op, cmp, state)
	if healAfter > 0 {
		p.requeueAfter = healAfter
		ctrl.LoggerFrom(ctx).V(1).Info("Self-heal waits for its backoff", "after", healAfter)
	}
	if req != nil && !req.user {
		// An automated sync is decided from the cached Application; the
		// cache may not hold yet what the last pass wrote (its operation's
		// result), and the revision would sync a second time, drift
		// included, selfHeal or not. Decide again from a cache that caught
		// up.
		if stale, err := r.staleCache(ctx, p); err != nil || stale {
			p.requeueAfter = staleCacheRetry
			return outs, err
		}
	}
	if req != nil {
		runs, windows := r.mayRunNow(p, tg, req)
		outs = append(outs, windows)
		if !runs {
			req = nil
		}
	}
	if req == nil {
		ctrl.LoggerFrom(ctx).V(1).Info("Compared", "sync", cmp.status, "health", cmp.health.Status, "reused", !fresh)
		return outs, nil
	}
	if !p.operation {
		ctrl.LoggerFrom(ctx).V(1).Info("Sync due, for the operation processors", "sync", cmp.status)
		p.handOff = true
		return outs, nil
	}
	req.sources = tg.sources
	synced, syncErr := r.sync(ctx, p, tg.door, req, state, cmp)
	outs = append(outs, synced)
	if errors.Is(syncErr, errFenceLost) || errors.Is(syncErr, errNotStarted) {
		return outs, syncErr
	}
	// The cluster changed: compare again so the status shows the result.
	after, err := r.compareAndRemember(ctx, p, tg, state)
	if err != nil {
		return outs, errors.Join(syncErr, err)
	}
	return append(outs, r.recordComparison(p, after, state, tg.sources)), syncErr
}

// staleCacheRetry is how soon a pass whose cached Application lagged
// behind the API server runs again.
const staleCacheRetry = time.Second

// staleCache reports whether the Application of p, as the pass read it
// (and wrote it since, which updates its resourceVersion), is older than
// the API server's.
func (r *Reconciler) staleCache(ctx context.Context, p *pass) (bool, error) {
	var fresh metav1.PartialObjectMetadata
	fresh.SetGroupVersionKind(v1alpha1.ApplicationGroupVersionKind)
	if err := r.apiReader.Get(ctx, p.key, &fresh); err != nil {
		return false, fmt.Errorf("get application %s: %w", p.key.Name, err)
	}
	return fresh.ResourceVersion != p.app.ResourceVersion, nil
}

// mayRunNow reports whether the sync req runs in this pass, with the
// outcome of the sync windows when it looked at them. A requested
// operation asked to terminate (tollgate or argocd app terminate-op) ends
// here, one waiting for its next retry waits, and the AppProject's sync
// windows may hold any sync back.
func (r *Reconciler) mayRunNow(p *pass, tg *target, req *syncRequest) (bool, outcome) {
	st := p.app.Status.OperationState
	if req.user && terminating(p.app) {
		st.Phase, st.Message, st.FinishedAt = v1alpha1.OperationFailed, "Operation terminated", &p.now
		p.ranOp = tg.op.DeepCopy()
		return false, outcome{}
	}
	if req.user {
		if wait := retryWait(st, &req.op, r.opts.Now()); wait > 0 {
			p.requeueAfter = wait
			return false, outcome{}
		}
	}
	return r.windowsAllow(p, tg, req)
}

// blockedByWindow starts the messages of a sync the project's sync windows
// hold back.
const blockedByWindow = "sync blocked by the AppProject's sync windows: "

// windowsAllow reports whether the AppProject's sync windows let req run
// now, with their outcome (stepWindows). A requested operation they block
// waits, Running with the reason, and is looked at again every minute; a
// blocked automated sync shows the reason in a SyncError condition, cleared
// once the windows allow syncs.
func (r *Reconciler) windowsAllow(p *pass, tg *target, req *syncRequest) (bool, outcome) {
	if req.dryRun {
		return true, outcome{}
	}
	app := p.app
	manual := req.user && !req.op.InitiatedBy.Automated
	// An operation already running (a retry, or one resumed) started when
	// its first attempt did: syncOverrun may let it go on.
	var started time.Time
	if st := app.Status.OperationState; req.user && st != nil && st.Phase == v1alpha1.OperationRunning && equalOperations(&st.Operation, &req.op) {
		started = st.StartedAt.Time
	}
	v, err := syncWindowsAllow(tg.project, app, r.opts.Now(), manual, started)
	if err == nil && v.allowed {
		return true, outcome{step: stepWindows}
	}
	reason := v.reason
	if err != nil {
		reason = err.Error()
	}
	msg := blockedByWindow + reason
	p.requeueAfter = time.Minute
	if req.user {
		if st := app.Status.OperationState; st == nil || st.Message != msg || !equalOperations(&st.Operation, &req.op) {
			app.Status.OperationState = &v1alpha1.OperationState{Operation: req.op, Phase: v1alpha1.OperationRunning, Message: msg, StartedAt: p.now}
		}
	}
	return false, raise(stepWindows, v1alpha1.ApplicationConditionSyncError, msg)
}

// target is what one reconcile works towards: where, from what, under which
// project, and the requested operation if any.
type target struct {
	cluster *cluster
	// door is the authority bound to app and project: every write of the
	// reconcile, and the gate's judging.
	door *authority.Door
	// app is the Application as it is fetched and judged: the pass's own,
	// or for a sync operation a copy with the operation's sources and
	// revisions in its spec (see requestedApplication). Its sources are the
	// only ones fetched.
	app *v1alpha1.Application
	// sources are app's sources.
	sources []v1alpha1.ApplicationSource
	secrets []corev1.Secret
	project *v1alpha1.AppProject
	op      *v1alpha1.Operation
	// refresh is a refresh request (the annotation); hard a hard one:
	// render again even when cached.
	refresh, hard bool
}

// target consumes the refresh annotation, resolves the destination and the
// sources, and reads the project, and returns the outcomes of these
// checks. A nil target without error means the spec is invalid; the
// outcomes say why.
func (r *Reconciler) target(ctx context.Context, p *pass) (*target, []outcome, error) {
	app := p.app
	tg := &target{op: app.Operation}
	if refresh := app.Annotations[v1alpha1.AnnotationKeyRefresh]; refresh != "" {
		// Consume the request first, guarded by the resourceVersion, so a
		// refresh requested while this reconcile runs is not lost.
		if err := clearRefresh(ctx, r.client, app); err != nil {
			return nil, nil, err
		}
		p.orig = app.DeepCopy()
		r.forget(p.key)
		tg.refresh, tg.hard = true, refresh == v1alpha1.RefreshTypeHard
	}
	var outs []outcome
	if tg.op != nil && tg.op.Sync == nil {
		outs = append(outs, r.refuseOperation(p, tg.op, "only sync operations are supported"))
		tg.op = nil
	}
	if tg.op != nil && len(tg.op.Sync.Manifests) > 0 {
		outs = append(outs, r.refuseOperation(p, tg.op, "operation.sync.manifests is not supported: local manifests are not synced"))
		tg.op = nil
	}
	if tg.op != nil && tg.op.Retry.Refresh {
		outs = append(outs, r.refuseOperation(p, tg.op, "operation.retry.refresh is not supported: a retry syncs the revision of the first attempt"))
		tg.op = nil
	}
	invalid := func(msg string) (*target, []outcome, error) {
		outs = append(outs, raise(stepSpec, v1alpha1.ApplicationConditionInvalidSpecError, msg))
		if tg.op != nil {
			outs = append(outs, r.refuseOperation(p, tg.op, msg))
		}
		return nil, outs, nil
	}
	var err error
	if tg.project, err = r.project(ctx, app); err != nil {
		return nil, outs, err
	}
	if tg.project != nil && !tg.project.IsAppNamespacePermitted(app, r.opts.Namespace) {
		// As Argo CD (getAppProj): nothing of the Application is read,
		// rendered or synced from outside its project's source namespaces.
		msg := v1alpha1.ErrProjectNotPermitted(app).Error()
		outs = append(outs, raise(stepSpec, v1alpha1.ApplicationConditionUnknownError, msg))
		if tg.op != nil {
			outs = append(outs, r.refuseOperation(p, tg.op, "failed to load application project: "+msg))
		}
		return nil, outs, nil
	}
	if tg.secrets, err = r.argoSecrets(ctx); err != nil {
		return nil, outs, err
	}
	tg.cluster, err = r.clusters.resolve(ctx, app.Spec.Destination, tg.secrets)
	if errors.Is(err, errInvalidDestination) {
		return invalid(err.Error())
	}
	if err != nil {
		return nil, append(outs, failed(err)), err
	}
	p.server = tg.cluster.server
	tg.app = app
	if tg.op != nil {
		tg.app = requestedApplication(app, tg.op.Sync)
	}
	tg.sources = tg.app.Sources()
	if len(tg.sources) == 0 {
		return invalid("spec.source or spec.sources must be set")
	}
	if field, why := app.Spec.UnsupportedField(); field != "" {
		return invalid(field + " is not supported: " + why)
	}
	outs = append(outs, outcome{step: stepSpec}) // namespace, destination and sources valid
	if msg := projectScopedCluster(tg.project, app.Spec.Destination, tg.cluster.server, tg.secrets); msg != "" {
		return invalid(msg)
	}
	if tg.project != nil && tg.project.Spec.SourceIntegrity != nil {
		// Argo CD checks its sources against this policy; syncing them
		// unchecked would leave the project silently open.
		return invalid(fmt.Sprintf("AppProject %s: spec.sourceIntegrity is not supported: use spec.signatureKeys", tg.project.Name))
	}
	tg.door = r.door(tg.cluster, tg.app, tg.project)
	return tg, outs, nil
}

// door returns the authority of cl bound to app and project, impersonating
// as argocd-cm says.
func (r *Reconciler) door(cl *cluster, app *v1alpha1.Application, project *v1alpha1.AppProject) *authority.Door {
	imp := authority.Impersonation{Server: cl.server}
	if s := r.settings.Load(); s != nil {
		imp.Enabled = s.SyncImpersonation
	}
	return cl.auth.For(app, project, imp)
}

// project returns the AppProject app uses, nil when it does not exist. It
// is read without a copy: it shares its maps and slices with the cache, and
// the engine only reads it. A project the cache does not hold is looked up
// in the API server before it is called missing: an AppProject applied
// together with its Application may reach the cache after it, and a sync
// refused as project-not-found is not retried for that revision.
func (r *Reconciler) project(ctx context.Context, app *v1alpha1.Application) (*v1alpha1.AppProject, error) {
	return argocd.Project(ctx, r.opts.Namespace, app.ProjectName(), []client.Reader{r.client, r.apiReader}, client.UnsafeDisableDeepCopy)
}

// finish sets the conditions from the outcomes of the pass's steps, writes
// the status and records the events of the pass.
func (r *Reconciler) finish(ctx context.Context, p *pass, outs []outcome) error {
	app := p.app
	var changed []string
	app.Status.Conditions, changed = applyOutcomes(app.Status.Conditions, outs, p.now)
	app.Status.ReconciledAt = &p.now
	app.Status.ControllerNamespace = r.opts.Namespace
	fence := ""
	if p.fenced {
		fence = r.identity()
		delete(app.Annotations, AnnotationOperationReplica)
	}
	ended := operationEnded(p.orig, app)
	if err := writeApplication(ctx, r.client, p.orig, app, p.ranOp, fence); err != nil {
		return err
	}
	if ended {
		r.metrics.AppSynced(app, passServer(app, p), app.Status.OperationState)
	}
	if r.recorder == nil {
		return nil
	}
	if slices.Contains(changed, v1alpha1.ApplicationConditionPolicyViolation) {
		for _, c := range app.Status.Conditions {
			if c.Type == v1alpha1.ApplicationConditionPolicyViolation {
				r.recorder.Eventf(app, nil, corev1.EventTypeWarning, v1alpha1.ApplicationConditionPolicyViolation, "Sync",
					"sync refused, nothing applied:\n%s", c.Message)
			}
		}
	}
	for _, e := range p.events {
		r.recorder.Eventf(app, nil, e.eventType, e.reason, "Sync", "%s", e.note)
	}
	return nil
}
