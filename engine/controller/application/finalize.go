package application

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
	"github.com/tollgate-dev/tollgate/engine/authority"
)

// deletionPoll is how soon a deleting Application is looked at again while
// its resources go away.
const deletionPoll = 2 * time.Second

// resourcesFinalizer returns the resources finalizer of app and the
// propagation policy it asks for; "" when it has none.
func resourcesFinalizer(app *v1alpha1.Application) (string, metav1.DeletionPropagation) {
	for _, f := range app.Finalizers {
		switch f {
		case v1alpha1.ResourcesFinalizerName, v1alpha1.ForegroundPropagationPolicyFinalizer:
			return f, metav1.DeletePropagationForeground
		case v1alpha1.BackgroundPropagationPolicyFinalizer:
			return f, metav1.DeletePropagationBackground
		}
	}
	return "", ""
}

// finalize handles a deleted Application, one step per pass, each step
// removing its finalizer (which reconciles again), in Argo CD's order:
//
//  1. PreDelete hooks (pre-delete finalizer): run and waited for; a failure
//     stops the deletion (DeletionError) and is retried.
//  2. The resources (resources finalizer): the objects it tracks are deleted
//     in reverse wave order (higher waves first, each wave gone before the
//     next starts), except what keptOnDelete keeps and the delete hooks;
//     Delete=confirm objects wait for the approval.
//  3. PostDelete hooks (post-delete finalizer), as PreDelete.
//  4. The cleanup finalizers: delete hooks without a delete policy are
//     deleted.
//
// Without any of these finalizers its resources are left alone. An
// Application whose destination is not a known cluster has nothing the
// controller can delete or run: its finalizers are removed.
func (r *Reconciler) finalize(ctx context.Context, app *v1alpha1.Application) (reconcile.Result, error) {
	key := client.ObjectKeyFromObject(app)
	r.forget(key)
	fin, policy := resourcesFinalizer(app)
	ours := slices.DeleteFunc([]string{fin, v1alpha1.PreDeleteFinalizerName, v1alpha1.PostDeleteFinalizerName,
		v1alpha1.PreDeleteCleanupFinalizerName, v1alpha1.PostDeleteCleanupFinalizerName},
		func(f string) bool { return f == "" || !slices.Contains(app.Finalizers, f) })
	if len(ours) == 0 {
		return reconcile.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	secrets, err := r.argoSecrets(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	cl, err := r.clusters.resolve(ctx, app.Spec.Destination, secrets)
	if errors.Is(err, errInvalidDestination) {
		log.Info("Destination unknown, removing finalizers without deleting resources or running hooks", "reason", err.Error())
		return reconcile.Result{}, removeFinalizer(ctx, r.client, app, ours...)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	project, err := r.project(ctx, app)
	if err != nil {
		return reconcile.Result{}, err
	}
	if project != nil && !project.IsAppNamespacePermitted(app, r.opts.Namespace) {
		// As Argo CD: nothing is deleted for it, and its finalizers stay.
		return reconcile.Result{}, v1alpha1.ErrProjectNotPermitted(app)
	}
	door := r.door(cl, app, project)
	ctx, cancel := context.WithTimeout(ctx, r.opts.ReconcileTimeout)
	defer cancel()
	instance := app.InstanceName(r.opts.Namespace)
	for _, h := range []struct {
		finalizer string
		phase     plan.Phase
		after     bool
	}{
		{v1alpha1.PreDeleteFinalizerName, plan.PhasePreDelete, false},
		{v1alpha1.PostDeleteFinalizerName, plan.PhasePostDelete, true},
	} {
		if !slices.Contains(app.Finalizers, h.finalizer) || (h.after && fin != "") {
			continue
		}
		// The hooks run once: the cache may still show the finalizer of
		// hooks that ran a moment ago, and running them again would wait
		// for a hook no one ends.
		if done, err := r.finalizerGone(ctx, app, h.finalizer); done || err != nil {
			return reconcile.Result{}, err
		}
		log.Info("Running delete hooks", "phase", h.phase)
		if err := r.runDeleteHooks(ctx, app, h.phase); err != nil {
			what := strings.ToLower(string(h.phase[:len(h.phase)-len("Delete")])) + "-delete"
			return reconcile.Result{}, r.deletionFailed(ctx, app, fmt.Sprintf("error executing %s hooks: %v", what, err), err)
		}
		return reconcile.Result{}, removeFinalizer(ctx, r.client, app, h.finalizer)
	}
	if fin != "" {
		return r.deleteResources(ctx, cl, door, app, instance, fin, policy)
	}
	if err := r.cleanupDeleteHooks(ctx, cl, door, instance); err != nil {
		return reconcile.Result{}, err
	}
	log.Info("Delete hooks cleaned up, removing finalizers")
	return reconcile.Result{}, removeFinalizer(ctx, r.client, app, v1alpha1.PreDeleteCleanupFinalizerName, v1alpha1.PostDeleteCleanupFinalizerName)
}

// finalizerGone reports whether the API server's Application app no
// longer holds finalizer (removed since the cache was read), or is gone;
// the removal's event reconciles it again.
func (r *Reconciler) finalizerGone(ctx context.Context, app *v1alpha1.Application, finalizer string) (bool, error) {
	var current v1alpha1.Application
	err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(app), &current)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("get application %s: %w", app.Name, err)
	}
	return !slices.Contains(current.Finalizers, finalizer), nil
}

// deleteResources is the cascade step of finalize: it deletes one wave of
// what instance tracks, or removes the resources finalizer fin when nothing
// is left.
func (r *Reconciler) deleteResources(ctx context.Context, cl *cluster, door *authority.Door, app *v1alpha1.Application, instance, fin string, policy metav1.DeletionPropagation) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	// The kinds recorded in the status first; a full search over every
	// listable kind before the finalizer goes.
	var kinds []schema.GroupVersionKind
	for _, rs := range app.Status.Resources {
		kinds = append(kinds, schema.GroupVersionKind{Group: rs.Group, Version: rs.Version, Kind: rs.Kind})
	}
	remaining, err := r.deletable(ctx, cl, app, instance, kinds)
	if err != nil {
		return reconcile.Result{}, err
	}
	if len(remaining) == 0 && len(kinds) > 0 {
		if remaining, err = r.deletable(ctx, cl, app, instance, nil); err != nil {
			return reconcile.Result{}, err
		}
	}
	if len(remaining) == 0 {
		log.Info("Resources deleted, removing finalizer")
		return reconcile.Result{}, removeFinalizer(ctx, r.client, app, fin)
	}
	if waiting := unconfirmed(remaining, app); waiting != "" {
		// As Argo CD: nothing is deleted until the deletion is approved.
		log.Info("Waiting for deletion confirmation", "resources", waiting)
		if r.recorder != nil {
			r.recorder.Eventf(app, nil, corev1.EventTypeNormal, "DeletionAwaitingConfirmation", "Delete",
				"waiting for deletion confirmation of %s: run tollgate app confirm-deletion %s (or argocd app confirm-deletion)", waiting, app.Name)
		}
		return reconcile.Result{RequeueAfter: confirmationPoll}, nil
	}
	// Nothing is deleted unless the project permits every object left:
	// a tracking id or an instance label is a claim, not a permission.
	if err := door.Permit(ctx, "delete", remaining); err != nil {
		return reconcile.Result{}, r.deletionFailed(ctx, app, err.Error(), err)
	}
	if err := door.Delete(ctx, topWave(remaining), policy); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: deletionPoll}, nil
}

// deletable lists the objects instance (the Application app) tracks that
// a cascade deletes (see keptOnDelete), sorted for deletion: highest wave
// first, then kinds in reverse apply order.
func (r *Reconciler) deletable(ctx context.Context, cl *cluster, app *v1alpha1.Application, instance string, kinds []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	owned, err := cl.auth.ListOwned(ctx, instance, kinds)
	if err != nil {
		return nil, fmt.Errorf("list resources to delete: %w", err)
	}
	appOpts := appSyncOptions(app)
	var out []*unstructured.Unstructured
	for _, o := range owned {
		if !keptOnDelete(o, app, appOpts) && !plan.IsDeleteHook(o) {
			out = append(out, o)
		}
	}
	slices.SortStableFunc(out, func(a, b *unstructured.Unstructured) int {
		wa, _ := plan.WaveOf(a)
		wb, _ := plan.WaveOf(b)
		return cmp.Or(cmp.Compare(wb, wa), cmp.Compare(plan.KindRank(b.GetKind()), plan.KindRank(a.GetKind())))
	})
	return out, nil
}

// confirmationPoll is how soon a deletion that waits for approval is looked
// at again (an approval is also an update, which requeues at once).
const confirmationPoll = 30 * time.Second

// unconfirmed names the objects among remaining whose Delete option is
// confirm (their annotation, else the Application's syncOptions) while the
// Application's deletion is not approved (argocd.argoproj.io/
// deletion-approved at or after its deletion), as "Kind/namespace/name[ and
// N more]"; "" when nothing waits.
func unconfirmed(remaining []*unstructured.Unstructured, app *v1alpha1.Application) string {
	if app.DeletionTimestamp != nil && app.IsDeletionConfirmed(app.DeletionTimestamp.Time) {
		return ""
	}
	appOpts := appSyncOptions(app)
	var names []string
	for _, o := range remaining {
		if opts, err := plan.SyncOptionsFor(o, appOpts...); err == nil && opts.DeleteConfirm {
			names = append(names, plan.Describe(o))
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return fmt.Sprintf("%s and %d more", names[0], len(names)-1)
}

// annotationResourcePolicy is Helm's resource policy; "keep" keeps an
// object when its release, here its Application, is deleted.
const annotationResourcePolicy = "helm.sh/resource-policy"

// keptOnDelete reports whether the cascade deletion of app leaves obj in
// place, as Argo CD's shouldBeDeleted decides: a CustomResourceDefinition
// (deleting it would delete every custom resource of its kind in the
// cluster, whoever owns them), the Application itself, an object annotated
// helm.sh/resource-policy: keep, and an object whose Delete option is false
// (its sync-options annotation, else the Application's syncOptions,
// appOpts).
func keptOnDelete(obj *unstructured.Unstructured, app *v1alpha1.Application, appOpts []string) bool {
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition":
		return true
	case gvk.Group == v1alpha1.GroupVersion.Group && gvk.Kind == v1alpha1.ApplicationKind &&
		obj.GetName() == app.Name && obj.GetNamespace() == app.Namespace:
		return true
	case strings.TrimSpace(obj.GetAnnotations()[annotationResourcePolicy]) == "keep":
		return true
	}
	opts, err := plan.SyncOptionsFor(obj, appOpts...)
	return err == nil && !opts.Delete
}

// topWave returns the objects of the highest wave among objs (sorted by
// deletable). While any object of that wave is still being deleted, lower
// waves wait.
func topWave(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	top, _ := plan.WaveOf(objs[0])
	for i, o := range objs {
		if w, _ := plan.WaveOf(o); w != top {
			return objs[:i]
		}
	}
	return objs
}

// removeFinalizer removes fins from app with a merge patch guarded by the
// resourceVersion, so a finalizer added meanwhile is not lost.
func removeFinalizer(ctx context.Context, c client.Client, app *v1alpha1.Application, fins ...string) error {
	// A conflict (another write since app was read) is retried on the
	// Application as it is now: the work the finalizer stood for is done,
	// and returning the conflict would run it again (a delete hook twice).
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		orig := app.DeepCopy()
		app.Finalizers = slices.DeleteFunc(slices.Clone(app.Finalizers), func(f string) bool { return slices.Contains(fins, f) })
		err := c.Patch(ctx, app, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) {
			var latest v1alpha1.Application
			if gerr := c.Get(ctx, client.ObjectKeyFromObject(app), &latest); gerr != nil {
				return gerr
			}
			*app = latest
		}
		return err
	})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("remove finalizer %s: %w", strings.Join(fins, ", "), err)
	}
	return nil
}
