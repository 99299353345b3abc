package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
)

// PruneOptions configure Prune.
type PruneOptions struct {
	// App is the application instance name; required. Only objects
	// tracked by App (v1alpha1.OwnedBy with Options.Tracking) are deleted.
	App string
	// PropagationPolicy is the Application's PrunePropagationPolicy;
	// default foreground.
	PropagationPolicy plan.PropagationPolicy
	// DryRun reports what would be pruned without deleting anything.
	DryRun bool
	// AppSyncOptions are the sync operation's options (the Application's
	// spec.syncPolicy.syncOptions): Prune=false, Prune=confirm and
	// PruneLast=true there apply to every object, and an object's own
	// argocd.argoproj.io/sync-options annotation overrides them, as in
	// Argo CD.
	AppSyncOptions []string
	// Confirmed is the approval of Prune=confirm objects (Argo CD's
	// argocd.argoproj.io/deletion-approved on the Application, set after
	// the operation started). Without it, a Prune that has such an object
	// to delete deletes nothing and returns a *ConfirmationError.
	Confirmed bool
}

// ConfirmationError is returned by Prune when objects marked Prune=confirm
// are to be deleted and the deletion is not confirmed: nothing was
// pruned.
type ConfirmationError struct {
	// Refs are the objects waiting for confirmation.
	Refs []Ref
}

// Error says, as Argo CD's operation message does, what waits.
func (e *ConfirmationError) Error() string {
	first := e.Refs[0]
	msg := "waiting for pruning confirmation of " + first.Group + "/" + first.Kind + "/" + first.Name
	if n := len(e.Refs) - 1; n > 0 {
		msg += fmt.Sprintf(" and %d more resources", n)
	}
	return msg
}

// pruneCandidate is one object to delete.
type pruneCandidate struct {
	obj       *unstructured.Unstructured
	ref       Ref
	wave      int
	pruneLast bool
}

// Prune deletes the objects of owned (live objects carrying the
// Application's tracking id, from ListOwned) that are not in desired. It
// deletes in reverse order of application: PruneLast=true objects last, then
// higher waves first and, within a wave, kinds in reverse apply order. It
// skips (PruneSkipped) objects with Prune=false or Delete=false, and objects
// whose tracking id names another Application or another object; objects
// with Prune=confirm hold the whole pruning until PruneOptions.Confirmed. Hooks are never pruned. Each object is read again just
// before deletion, re-checked, and deleted with a precondition on its UID
// and resourceVersion, so an object that changed in between is left alone
// (SyncFailed). Per-object failures are results; the error is non-nil when
// any object could not be deleted.
func (a *Applier) Prune(ctx context.Context, owned, desired []*unstructured.Unstructured, opts PruneOptions) ([]ResourceResult, error) {
	if opts.App == "" {
		return nil, errors.New("prune: PruneOptions.App is empty")
	}
	policy, err := propagation(opts.PropagationPolicy)
	if err != nil {
		return nil, fmt.Errorf("prune: %w", err)
	}
	want := map[Ref]bool{}
	for _, d := range desired {
		want[RefOf(d).key()] = true
	}
	var results []ResourceResult
	var candidates []pruneCandidate
	var unconfirmed []Ref
	for _, obj := range owned {
		ref := RefOf(obj)
		if want[ref.key()] || plan.IsHook(obj) {
			continue
		}
		if reason := pruneSkipReason(obj, opts.App, a.opts.Tracking, opts.AppSyncOptions, true); reason != "" {
			results = append(results, ResourceResult{Ref: ref, Status: ResultPruneSkipped, Message: reason})
			continue
		}
		wave, _ := plan.WaveOf(obj) // a bad wave only changes the order
		o, _ := plan.SyncOptionsFor(obj, opts.AppSyncOptions...)
		if o.PruneConfirm && !opts.Confirmed {
			unconfirmed = append(unconfirmed, ref)
		}
		candidates = append(candidates, pruneCandidate{obj: obj, ref: ref, wave: wave, pruneLast: o.PruneLast})
	}
	if len(unconfirmed) > 0 {
		// As Argo CD: the pruning waits, whole, for the confirmation.
		return results, &ConfirmationError{Refs: unconfirmed}
	}
	slices.SortStableFunc(candidates, comparePrune)
	var failed []string
	for _, c := range candidates {
		res, err := a.pruneOne(ctx, c, opts, policy)
		if err != nil {
			return results, fmt.Errorf("prune %s: %w", c.ref, err)
		}
		if res.Status == ResultSyncFailed {
			failed = append(failed, c.ref.String()+": "+res.Message)
		}
		results = append(results, res)
	}
	if len(failed) > 0 {
		return results, fmt.Errorf("prune: %d of %d objects not deleted: %s", len(failed), len(candidates), strings.Join(failed, "; "))
	}
	return results, nil
}

// comparePrune orders PruneLast objects last, then waves and kinds in
// reverse apply order, then by namespace and name.
func comparePrune(x, y pruneCandidate) int {
	if x.pruneLast != y.pruneLast {
		if x.pruneLast {
			return 1
		}
		return -1
	}
	return cmp.Or(
		cmp.Compare(y.wave, x.wave),
		cmp.Compare(plan.KindRank(y.ref.Kind), plan.KindRank(x.ref.Kind)),
		cmp.Compare(x.ref.Namespace, y.ref.Namespace),
		cmp.Compare(x.ref.Name, y.ref.Name),
	)
}

// pruneSkipReason says why obj must not be pruned by app, which tracks
// with method and whose sync options are appOpts, or "". Prune=confirm is a
// reason unless confirmed.
func pruneSkipReason(obj *unstructured.Unstructured, app string, method v1alpha1.TrackingMethod, appOpts []string, confirmed bool) string {
	id, err := v1alpha1.TrackingOf(obj)
	switch owner, byLabel := v1alpha1.OwnerOf(obj, method, v1alpha1.OwnerOptions{}); {
	case byLabel && !v1alpha1.OwnedBy(obj, app, method):
		return fmt.Sprintf("tracked by application %q (label %s)", owner, v1alpha1.LabelKeyAppInstance)
	case byLabel:
		// ours by the instance label
	case errors.Is(err, v1alpha1.ErrNotTracked):
		return "not tracked by this application"
	case err != nil:
		return fmt.Sprintf("unreadable tracking annotation: %v", err)
	case id.App != app:
		return fmt.Sprintf("tracked by application %q", id.App)
	case !v1alpha1.Describes(id, obj):
		return fmt.Sprintf("tracking id %q names another object (copied?)", id.String())
	}
	o, err := plan.SyncOptionsFor(obj, appOpts...)
	switch {
	case err != nil:
		return fmt.Sprintf("unreadable sync options: %v", err)
	case !o.Prune:
		return "Prune=false"
	case !o.Delete:
		return "Delete=false"
	case o.PruneConfirm && !confirmed:
		return "Prune=confirm: needs confirmation"
	}
	return ""
}

// pruneOne re-reads, re-checks and deletes one object.
func (a *Applier) pruneOne(ctx context.Context, c pruneCandidate, opts PruneOptions, policy metav1.DeletionPropagation) (ResourceResult, error) {
	res := ResourceResult{Ref: c.ref, Wave: c.wave}
	if opts.DryRun {
		res.Status, res.Message = ResultPruned, "pruned (dry run)"
		return res, nil
	}
	f, err := a.get(ctx, c.ref)
	if err != nil {
		return res, err
	}
	switch {
	case f.unknownKind || f.obj == nil:
		res.Status, res.Message = ResultPruned, "already deleted"
		return res, nil
	case f.obj.GetDeletionTimestamp() != nil:
		res.Status, res.Message = ResultPruned, "being deleted"
		return res, nil
	}
	if reason := pruneSkipReason(f.obj, opts.App, a.opts.Tracking, opts.AppSyncOptions, opts.Confirmed); reason != "" {
		res.Status, res.Message = ResultPruneSkipped, reason
		return res, nil
	}
	uid, rv := f.obj.GetUID(), f.obj.GetResourceVersion()
	err = a.client.Delete(ctx, f.obj,
		client.PropagationPolicy(policy),
		client.Preconditions{UID: &uid, ResourceVersion: &rv})
	var status apierrors.APIStatus
	switch {
	case err == nil:
		logr.FromContextOrDiscard(ctx).V(1).Info("Pruned", "object", c.ref.String(), "propagation", policy)
		res.Status, res.Message = ResultPruned, "pruned"
	case apierrors.IsNotFound(err):
		res.Status, res.Message = ResultPruned, "already deleted"
	case apierrors.IsConflict(err):
		res.Status, res.Message = ResultSyncFailed, "changed since it was read; not deleted (retried next sync)"
	case errors.As(err, &status):
		res.Status, res.Message = ResultSyncFailed, fmt.Sprintf("delete: %v", err)
	default:
		return res, err
	}
	return res, nil
}

func propagation(p plan.PropagationPolicy) (metav1.DeletionPropagation, error) {
	switch p {
	case "", plan.PropagationForeground:
		return metav1.DeletePropagationForeground, nil
	case plan.PropagationBackground:
		return metav1.DeletePropagationBackground, nil
	case plan.PropagationOrphan:
		return metav1.DeletePropagationOrphan, nil
	}
	return "", fmt.Errorf("unknown propagation policy %q", p)
}
