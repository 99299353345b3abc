package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
	"github.com/tollgate-dev/tollgate/engine/authority"
)

// deleteHookFinalizers keeps app's PreDelete and PostDelete finalizers,
// and their cleanup finalizers, in step with its desired objects, as Argo
// CD does on each refresh: present while a hook of that phase is desired,
// so that deleting the Application runs it (no finalizer can be added once
// the deletion started).
func deleteHookFinalizers(app *v1alpha1.Application, objs []*unstructured.Unstructured) {
	for _, f := range []struct {
		names []string
		phase plan.Phase
	}{
		{[]string{v1alpha1.PreDeleteFinalizerName, v1alpha1.PreDeleteCleanupFinalizerName}, plan.PhasePreDelete},
		{[]string{v1alpha1.PostDeleteFinalizerName, v1alpha1.PostDeleteCleanupFinalizerName}, plan.PhasePostDelete},
	} {
		want := slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool { return plan.HasPhase(o, f.phase) })
		for _, name := range f.names {
			has := slices.Contains(app.Finalizers, name)
			switch {
			case want && !has:
				app.Finalizers = append(slices.Clone(app.Finalizers), name)
			case !want && has:
				app.Finalizers = slices.DeleteFunc(slices.Clone(app.Finalizers), func(s string) bool { return s == name })
			}
		}
	}
}

// runDeleteHooks runs the hooks of phase (PreDelete or PostDelete) of the
// deleted Application app on cl and waits for them, as Argo CD does: the
// hooks are rendered from the Application's sources at their target
// revisions, judged by the gate like any object the engine applies, and
// applied wave by wave. A hook that fails, or a refusal, is an error; the
// deletion stops there and is tried again.
func (r *Reconciler) runDeleteHooks(ctx context.Context, app *v1alpha1.Application, phase plan.Phase) error {
	p := &pass{
		app: app.DeepCopy(), orig: app, key: types.NamespacedName{Namespace: app.Namespace, Name: app.Name},
		instance: app.InstanceName(r.opts.Namespace),
		now:      metav1.NewTime(r.opts.Now().UTC()),
	}
	tg, found, err := r.target(ctx, p)
	if err != nil {
		return err
	}
	if tg == nil {
		return errors.New(raisedMessage(found, v1alpha1.ApplicationConditionInvalidSpecError))
	}
	if allowed, judged, err := r.judgeBeforeFetch(ctx, p, tg); err != nil || !allowed {
		return errors.Join(err, refusal(judged))
	}
	state, err := r.desiredState(ctx, p, tg)
	if err == nil {
		err = state.Build(ctx)
	}
	if err != nil {
		return fmt.Errorf("render the hooks: %w", err)
	}
	var hooks []*unstructured.Unstructured
	for _, o := range state.Objects {
		if plan.HasPhase(o, phase) {
			hooks = append(hooks, o)
		}
	}
	if len(hooks) == 0 {
		return nil
	}
	v, err := r.gate(ctx, tg.door, hooks)
	if err != nil {
		return err
	}
	if !v.Allowed() {
		return errors.New(refusedByPolicy + ", nothing was applied:\n" + v.Message())
	}
	waves, err := plan.Build(hooks, appSyncOptions(app)...)
	if err != nil {
		return err
	}
	// One name suffix per deletion, so hooks with only a generateName
	// are the same objects when the deletion is tried again.
	syncID := fmt.Sprint(app.DeletionTimestamp.Unix())
	for _, w := range plan.Select(waves, phase) {
		res, err := tg.door.ApplyWave(ctx, w, apply.WaveOptions{App: p.instance, SyncID: syncID})
		var werr *apply.WaveError
		if errors.As(err, &werr) {
			var failed []string
			for _, rr := range res.Results {
				if rr.Status == apply.ResultSyncFailed {
					failed = append(failed, rr.Ref.Namespace+"/"+rr.Ref.Name+": "+rr.Message)
				}
			}
			return fmt.Errorf("%s hook(s) failed: %s", phase, strings.Join(failed, "; "))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// refusal is the error of a spec judgeBeforeFetch refused, with its
// outcome.
func refusal(denied outcome) error {
	return errors.New(refusedByPolicy + ":\n" + raisedMessage([]outcome{denied}, v1alpha1.ApplicationConditionPolicyViolation))
}

// cleanupDeleteHooks deletes the delete hooks app left behind, as Argo CD's
// cleanup does: those without a delete policy annotation (a hook whose
// policy matched its outcome was deleted when it ended; one whose policy
// did not, or BeforeHookCreation, stays).
func (r *Reconciler) cleanupDeleteHooks(ctx context.Context, cl *cluster, door *authority.Door, instance string) error {
	owned, err := cl.auth.ListOwned(ctx, instance, nil)
	if err != nil {
		return fmt.Errorf("list delete hooks: %w", err)
	}
	var hooks []*unstructured.Unstructured
	for _, o := range owned {
		if plan.IsDeleteHook(o) && !plan.HasDeletePolicyAnnotation(o) && o.GetDeletionTimestamp() == nil {
			hooks = append(hooks, o)
		}
	}
	if err := door.Delete(ctx, hooks, metav1.DeletePropagationBackground); err != nil {
		return fmt.Errorf("delete hooks: %w", err)
	}
	return nil
}

// deletionFailed records why app's deletion is stuck: condition
// DeletionError and a warning event, as Argo CD; it returns cause for a
// retry with backoff.
func (r *Reconciler) deletionFailed(ctx context.Context, app *v1alpha1.Application, msg string, cause error) error {
	orig := app.DeepCopy()
	stuck := raise(stepDeletion, v1alpha1.ApplicationConditionDeletionError, msg)
	app.Status.Conditions, _ = applyOutcomes(app.Status.Conditions, []outcome{stuck}, metav1.NewTime(r.opts.Now().UTC()))
	err := patchIfChanged(ctx, r.client, orig, app, false)
	if r.recorder != nil {
		r.recorder.Eventf(app, nil, corev1.EventTypeWarning, v1alpha1.ApplicationConditionDeletionError, "Delete", "Unable to delete application resources: %s", msg)
	}
	return errors.Join(cause, err)
}
