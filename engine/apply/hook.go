package apply

import (
	"context"
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

	"github.com/tollgate-dev/tollgate/engine/plan"
)

// deleteAndWait deletes obj (background propagation, precondition on its
// UID) and waits until it is gone, up to Options.WaitTimeout.
func (a *Applier) deleteAndWait(ctx context.Context, obj *unstructured.Unstructured) error {
	uid := obj.GetUID()
	err := a.client.Delete(ctx, obj,
		client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	ref := RefOf(obj)
	err = wait.PollUntilContextTimeout(ctx, a.shortPoll(), a.opts.WaitTimeout, true, func(ctx context.Context) (bool, error) {
		f, err := a.get(ctx, ref)
		if err != nil {
			return false, err
		}
		return f.obj == nil || f.obj.GetUID() != uid, nil
	})
	if err != nil {
		return fmt.Errorf("wait for deletion of %s: %w", ref, err)
	}
	return nil
}

// waitForKind waits until the API server serves gvk: its CRD was applied
// earlier in the same wave and is being established.
func (a *Applier) waitForKind(ctx context.Context, gvk schema.GroupVersionKind) error {
	err := wait.PollUntilContextTimeout(ctx, a.shortPoll(), a.opts.WaitTimeout, true, func(context.Context) (bool, error) {
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

// shortPoll is the interval for waits that end quickly (deletion, CRD
// establishment).
func (a *Applier) shortPoll() time.Duration {
	return max(a.opts.PollInterval/4, 10*time.Millisecond)
}
