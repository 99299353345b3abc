package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
)

// deleteAttempts bounds how often a live object to delete (in a hook's
// place, or re-created by Force=true) is read and judged again when it
// changed between the read and the delete (a running Job's status, for
// one).
const deleteAttempts = 3

// hookRule ends the message of a hook whose predecessor is not its
// Application's.
const hookRule = "a hook deletes, replaces or forces only an object that carries this application's tracking id"

// takeoverMessage says why a hook of app must not touch live, the object
// already in its place, or returns "" when live carries app's tracking id
// for itself. A hook deletes (BeforeHookCreation, HookSucceeded,
// HookFailed), replaces or force-applies only an object of its own
// Application: a hook named like an object of another Application, or of a
// person, would otherwise take it over.
func takeoverMessage(live *unstructured.Unstructured, app string, method v1alpha1.TrackingMethod) string {
	return notOursMessage(live, app, method, hookRule)
}

// notOursMessage says why app must not delete, replace or force live, the
// object in the place of one of its own, ending with rule; "" when live is
// tracked by app under method (v1alpha1.OwnedBy).
func notOursMessage(live *unstructured.Unstructured, app string, method v1alpha1.TrackingMethod, rule string) string {
	if v1alpha1.OwnedBy(live, app, method) {
		return ""
	}
	ref := slashRef(live)
	raw, tracked := live.GetAnnotations()[v1alpha1.AnnotationKeyTrackingID]
	id, err := v1alpha1.TrackingOf(live)
	switch owner, byLabel := v1alpha1.OwnerOf(live, method, v1alpha1.OwnerOptions{}); {
	case byLabel:
		return fmt.Sprintf("%s exists and is tracked by application %q (label %s); %s", ref, owner, v1alpha1.LabelKeyAppInstance, rule)
	case !tracked && v1alpha1.ReadsLabel(method):
		return fmt.Sprintf("%s exists and is not tracked by any application (no %s annotation or %s label); %s", ref, v1alpha1.AnnotationKeyTrackingID, v1alpha1.LabelKeyAppInstance, rule)
	case !tracked:
		return fmt.Sprintf("%s exists and is not tracked by any application (no %s annotation); %s", ref, v1alpha1.AnnotationKeyTrackingID, rule)
	case err != nil:
		return fmt.Sprintf("%s exists with an unreadable tracking id %q; %s", ref, raw, rule)
	case id.App != app:
		return fmt.Sprintf("%s exists and is tracked by application %q (tracking id %s); %s", ref, id.App, raw, rule)
	}
	return fmt.Sprintf("%s exists with tracking id %s, which names another object; %s", ref, raw, rule)
}

// slashRef formats obj as `Kind/namespace/name` (`Kind/name` when cluster
// scoped), as policy violations name objects.
func slashRef(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + "/" + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + "/" + obj.GetName()
}

// deleteLive deletes live, the object in the place of one of app's (a
// hook's with BeforeHookCreation, one that Force=true re-creates), and waits
// until it is gone, up to Options.WaitTimeout. It deletes only what app
// owns, judged by notOursMessage with rule: the delete carries
// preconditions on the UID and resourceVersion that were judged, and an
// object that changed in between is read and judged again. An object that
// takes the place while the old one goes is judged too. It returns the
// object as it was deleted; nil when it was gone already.
func (a *Applier) deleteLive(ctx context.Context, live *unstructured.Unstructured, app, rule string) (*unstructured.Unstructured, error) {
	ref := RefOf(live)
	for attempt := 1; ; attempt++ {
		if msg := notOursMessage(live, app, a.opts.Tracking, rule); msg != "" {
			return nil, errors.New(msg)
		}
		uid, rv := live.GetUID(), live.GetResourceVersion()
		err := a.client.Delete(ctx, live,
			client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: &uid, ResourceVersion: &rv})
		if err == nil || apierrors.IsNotFound(err) {
			break
		}
		if !apierrors.IsConflict(err) || attempt == deleteAttempts {
			return nil, err
		}
		f, err := a.get(ctx, ref)
		if err != nil {
			return nil, err
		}
		if f.obj == nil {
			return nil, nil
		}
		live = f.obj
	}
	uid := live.GetUID()
	var next *unstructured.Unstructured
	waitCtx, cancel := a.bounded(ctx)
	defer cancel()
	err := wait.PollUntilContextCancel(waitCtx, a.shortPoll(), true, func(ctx context.Context) (bool, error) {
		f, err := a.get(ctx, ref)
		if err != nil {
			return false, err
		}
		next = f.obj
		return f.obj == nil || f.obj.GetUID() != uid, nil
	})
	if err != nil {
		return live, fmt.Errorf("wait for deletion of %s: %w", ref, err)
	}
	if next != nil {
		if msg := notOursMessage(next, app, a.opts.Tracking, rule); msg != "" {
			return live, errors.New(msg)
		}
	}
	return live, nil
}

// waitForKind waits until the API server serves gvk: its CRD was applied
// earlier in the same wave and is being established.
func (a *Applier) waitForKind(ctx context.Context, gvk schema.GroupVersionKind) error {
	waitCtx, cancel := a.bounded(ctx)
	defer cancel()
	err := wait.PollUntilContextCancel(waitCtx, a.shortPoll(), true, func(context.Context) (bool, error) {
		_, err := a.client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("wait for kind %s to be served: %w", gvk, err)
	}
	return nil
}

// finishHooks deletes completed hooks according to their delete policies.
// A failed deletion is noted in the hook's message; it does not fail the
// wave.
func (a *Applier) finishHooks(ctx context.Context, items []*item) {
	log := logr.FromContextOrDiscard(ctx)
	for _, it := range items {
		if !it.task.Hook {
			continue
		}
		del := (it.res.HookPhase == HookSucceeded && it.task.HasDeletePolicy(plan.HookSucceeded)) ||
			(it.res.HookPhase == HookFailed && it.task.HasDeletePolicy(plan.HookFailed))
		if !del {
			continue
		}
		uid := it.obj.GetUID()
		err := a.client.Delete(ctx, it.obj,
			client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: &uid})
		if err != nil && !apierrors.IsNotFound(err) {
			it.res.Message += fmt.Sprintf("; delete hook: %v", err)
			continue
		}
		log.V(1).Info("Deleted hook", "object", it.ref.String(), "hookPhase", it.res.HookPhase)
		it.res.Message += "; hook deleted"
	}
}

// bounded returns ctx bounded by Options.WaitTimeout, when set.
func (a *Applier) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if a.opts.WaitTimeout > 0 {
		return context.WithTimeout(ctx, a.opts.WaitTimeout)
	}
	return context.WithCancel(ctx)
}

// shortPoll is the interval for waits that end quickly (deletion, CRD
// establishment).
func (a *Applier) shortPoll() time.Duration {
	return max(a.opts.PollInterval/4, 10*time.Millisecond)
}
