package applicationset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

// RollingSyncUser is who the syncs a RollingSync requests are initiated
// by (operation.initiatedBy.username), as Argo CD records them.
const RollingSyncUser = "applicationset-controller"

// rollingSyncReason is the Reason info item of those syncs.
const rollingSyncReason = "ApplicationSet RollingSync triggered a sync of this Application resource"

// reverseDeletionRequeue is how soon a deletion in reverse order looks
// again whether the Application it deleted is gone.
const reverseDeletionRequeue = 10 * time.Second

// rollingSync reports whether set's Applications are synced step by
// step: the controller runs progressive syncs, and set has a RollingSync
// strategy with steps (Argo CD's RollingSyncStrategyEnabled).
func (r *Reconciler) rollingSync(set *v1alpha1.ApplicationSet) bool {
	return r.opts.ProgressiveSyncs && len(set.Spec.Strategy.RollingSyncSteps()) > 0
}

// disableAutomated turns automated sync off on a generated Application of
// a RollingSync (enabled: false, as Argo CD), before it is judged and
// written, and returns whether it was on with prune, which the syncs the
// rollout requests then use.
func disableAutomated(app map[string]any) (prune bool) {
	spec, _ := app["spec"].(map[string]any)
	sp, _ := spec["syncPolicy"].(map[string]any)
	auto, ok := sp["automated"].(map[string]any)
	if !ok {
		return false
	}
	enabled, set := auto["enabled"].(bool)
	prune, _ = auto["prune"].(bool)
	auto["enabled"] = false
	return prune && (!set || enabled)
}

// progress runs the RollingSync of the pass's ApplicationSet before its
// Applications are written: each live Application's state and which may
// sync (pass.rollout). With progressive syncs on it also adds the
// resources finalizer a Reverse deletion order needs, and refuses a
// RollingSync without steps (nothing is written then, as in Argo CD).
func (r *Reconciler) progress(ctx context.Context, p *appSetPass) error {
	strategy := p.set.Spec.Strategy
	if !r.opts.ProgressiveSyncs || !strategy.IsRollingSync() {
		return nil
	}
	if len(strategy.RollingSync.Steps) == 0 {
		return p.fail(v1alpha1.ApplicationSetReasonApplicationSetRolloutError, errors.New(msgNoSteps))
	}
	if strings.EqualFold(strategy.DeletionOrder, v1alpha1.DeletionOrderReverse) && !slices.Contains(p.set.Finalizers, v1alpha1.ResourcesFinalizerName) {
		patch := client.MergeFromWithOptions(p.set.DeepCopy(), client.MergeFromWithOptimisticLock{})
		p.set.Finalizers = append(p.set.Finalizers, v1alpha1.ResourcesFinalizerName)
		if err := r.deps.Client.Patch(ctx, p.set, patch); err != nil {
			return fmt.Errorf("add applicationset finalizer: %w", err)
		}
	}
	live, err := r.owned(ctx, p.set)
	if err != nil {
		return p.fail(v1alpha1.ApplicationSetReasonErrorOccurred, err)
	}
	desired := map[string]*v1alpha1.Application{}
	for _, a := range p.admitted {
		desired[a.Name] = a
	}
	var cmpErr error
	specChanged := func(app *v1alpha1.Application) bool {
		changed, err := r.specChanged(ctx, p.set, desired[app.Name], app)
		cmpErr = errors.Join(cmpErr, err)
		return changed
	}
	now := metav1.NewTime(p.now.Truncate(time.Second))
	ro := newRollout(strategy.RollingSync.Steps, p.admitted)
	ro.updateStatuses(p.set.Status.ApplicationStatus, live, specChanged, now)
	if cmpErr != nil {
		// A persistent error (a bad ignoreApplicationDifferences rule):
		// write reports it too.
		return p.fail(v1alpha1.ApplicationSetReasonErrorOccurred, cmpErr)
	}
	ro.allowSync(live)
	ro.promote(now)
	p.rollout = ro
	return nil
}

// specChanged reports whether writing desired would change live's spec,
// as createOrUpdate computes it (ignoreApplicationDifferences applied);
// false when nothing generates live.
func (r *Reconciler) specChanged(ctx context.Context, set *v1alpha1.ApplicationSet, desired, live *v1alpha1.Application) (bool, error) {
	if desired == nil {
		return false, nil
	}
	want := live.DeepCopy()
	want.Spec = *desired.Spec.DeepCopy()
	if err := keepIgnoredAppFields(ctx, set, want, live); err != nil {
		return false, err
	}
	return !equality.Semantic.DeepEqual(want.Spec, live.Spec), nil
}

// syncPending requests the sync of each Pending Application of the
// rollout, after the Applications are written, through appops.Sync (the
// request a person's sync makes): initiated by applicationset-controller,
// automated, with the Application's sync options and retry strategy (5
// retries without one) and prune as its automated policy had it, as Argo
// CD's RollingSync. An Application with an operation already, or whose
// sync started since it became Pending, is left alone.
func (r *Reconciler) syncPending(ctx context.Context, p *appSetPass) error {
	if p.rollout == nil {
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	var errs []error
	for _, s := range p.rollout.pending() {
		key := client.ObjectKey{Namespace: p.set.Namespace, Name: s.Application}
		var app v1alpha1.Application
		if err := r.deps.Client.Get(ctx, key, &app); err != nil {
			errs = append(errs, client.IgnoreNotFound(err))
			continue
		}
		if op := app.Status.OperationState; app.Operation != nil || (op != nil && notBefore(&op.StartedAt, s.LastTransitionTime)) {
			continue
		}
		o := appops.SyncOptions{Prune: p.autoPrune[app.Name], Automated: true, Retry: &v1alpha1.RetryStrategy{Limit: 5},
			Info: []v1alpha1.Info{{Name: "Reason", Value: rollingSyncReason}}}
		if sp := app.Spec.SyncPolicy; sp != nil {
			o.SyncOptions = slices.Clone(sp.SyncOptions)
			if sp.Retry != nil {
				o.Retry = sp.Retry.DeepCopy()
			}
		}
		err := appops.Sync(ctx, r.deps.Client, key, o, RollingSyncUser)
		var refused *appops.RefusedError
		switch {
		case err == nil:
			log.V(1).Info("RollingSync requested a sync", "application", app.Name, "step", s.Step)
		case errors.As(err, &refused):
			// Another operation.
		case apierrors.IsConflict(err):
			// The Application changed since the cache read it (its
			// status, say, which need not requeue this ApplicationSet):
			// ask again in a second rather than at the next poll.
			p.rollout.again = true
		default:
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// rolloutStatus is the status.applicationStatus and the rollout
// conditions to write: the pass's rollout, or, for a RollingSync this
// pass did not get to (its generation failed), what is live; none
// otherwise (Argo CD clears them).
func (r *Reconciler) rolloutStatus(p *appSetPass, live *v1alpha1.ApplicationSet) ([]v1alpha1.ApplicationSetApplicationStatus, []v1alpha1.ApplicationSetCondition) {
	if p.rollout != nil {
		return p.rollout.statuses, p.rollout.conditions()
	}
	if !r.opts.ProgressiveSyncs || !p.set.Spec.Strategy.IsRollingSync() {
		return nil, nil
	}
	var conds []v1alpha1.ApplicationSetCondition
	for _, c := range live.Status.Conditions {
		if c.Type == v1alpha1.ApplicationSetConditionInvalidRolloutConfig || c.Type == v1alpha1.ApplicationSetConditionRolloutProgressing {
			conds = append(conds, c)
		}
	}
	return live.Status.ApplicationStatus, conds
}

// deleteInReverse deletes, when set is being deleted with a RollingSync
// whose deletionOrder is Reverse, its Applications one at a time from
// the last step to the first, each once the one before is gone, as Argo
// CD's reverse deletion; it returns how soon to look again, 0 when every
// Application a step selects is gone (the garbage collector takes the
// others). Existence is read past the cache.
func (r *Reconciler) deleteInReverse(ctx context.Context, set *v1alpha1.ApplicationSet) (time.Duration, error) {
	steps := set.Spec.Strategy.RollingSyncSteps()
	if len(steps) == 0 || !strings.EqualFold(set.Spec.Strategy.DeletionOrder, v1alpha1.DeletionOrderReverse) {
		return 0, nil
	}
	owned, err := r.owned(ctx, set)
	if err != nil {
		return 0, err
	}
	apps := make([]*v1alpha1.Application, len(owned))
	for i := range owned {
		apps[i] = &owned[i]
	}
	ro := newRollout(steps, apps)
	var order []string
	for name := range ro.stepOf {
		order = append(order, name)
	}
	slices.SortFunc(order, func(a, b string) int {
		if d := ro.stepOf[b] - ro.stepOf[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	for _, name := range order {
		var app v1alpha1.Application
		err := r.deps.APIReader.Get(ctx, client.ObjectKey{Namespace: set.Namespace, Name: name}, &app)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return 0, fmt.Errorf("get application %s: %w", name, err)
		case app.DeletionTimestamp != nil:
			return reverseDeletionRequeue, nil
		}
		switch err := r.deps.Client.Delete(ctx, &app); {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return 0, fmt.Errorf("delete application %s: %w", name, err)
		}
		return reverseDeletionRequeue, nil
	}
	return 0, nil
}

// operationChanged reports whether an operation started or changed phase.
func operationChanged(o, n *v1alpha1.OperationState) bool {
	if o == nil || n == nil {
		return (o == nil) != (n == nil)
	}
	return o.Phase != n.Phase || !o.StartedAt.Equal(&n.StartedAt)
}
