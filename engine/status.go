package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// maxConditionMessage bounds a condition message; long lists are cut.
const maxConditionMessage = 8 << 10

// conditionEdits are the condition changes one reconcile decided: a type
// mapped to its message, or to nil to remove it. Types not mentioned are
// left as they are.
type conditionEdits map[string]*string

func (e conditionEdits) set(typ, msg string) {
	if len(msg) > maxConditionMessage {
		msg = msg[:maxConditionMessage] + "\n... (truncated)"
	}
	e[typ] = &msg
}

func (e conditionEdits) clear(typ string) { e[typ] = nil }

// apply merges the edits into conds. A condition whose message did not
// change keeps its lastTransitionTime. The result is sorted by type. It
// also returns the types that were added or whose message changed.
func (e conditionEdits) apply(conds []v1alpha1.ApplicationCondition, now metav1.Time) ([]v1alpha1.ApplicationCondition, []string) {
	var out []v1alpha1.ApplicationCondition
	var changed []string
	seen := map[string]bool{}
	for _, c := range conds {
		edit, ok := e[c.Type]
		seen[c.Type] = true
		switch {
		case !ok:
			out = append(out, c)
		case edit == nil:
		case *edit == c.Message:
			out = append(out, c)
		default:
			out = append(out, v1alpha1.ApplicationCondition{Type: c.Type, Message: *edit, LastTransitionTime: &now})
			changed = append(changed, c.Type)
		}
	}
	for typ, edit := range e {
		if seen[typ] || edit == nil {
			continue
		}
		out = append(out, v1alpha1.ApplicationCondition{Type: typ, Message: *edit, LastTransitionTime: &now})
		changed = append(changed, typ)
	}
	slices.SortStableFunc(out, func(a, b v1alpha1.ApplicationCondition) int {
		switch {
		case a.Type < b.Type:
			return -1
		case a.Type > b.Type:
			return 1
		}
		return 0
	})
	slices.Sort(changed)
	return out, changed
}

// conditionMessage returns the message of app's condition of type typ.
func conditionMessage(app *v1alpha1.Application, typ string) (string, bool) {
	for _, c := range app.Status.Conditions {
		if c.Type == typ {
			return c.Message, true
		}
	}
	return "", false
}

// writeApplication sends the changes made to app since orig as one JSON
// merge patch: only the fields that changed are sent, so fields tollgate's
// types do not know are never dropped. When ranOp is set the operation is
// cleared too, with an optimistic lock: if the Application changed since it
// was read and now holds a different operation (a new request), that one
// is kept. app is updated from the answer.
func writeApplication(ctx context.Context, c client.Client, orig, app *v1alpha1.Application, ranOp *v1alpha1.Operation) error {
	if ranOp != nil {
		app.Operation = nil
		err := patchIfChanged(ctx, c, orig, app, true)
		if !apierrors.IsConflict(err) {
			return err
		}
		// Someone wrote the Application meanwhile: read it again and clear
		// the operation only if it is still the one that ran.
		var fresh v1alpha1.Application
		if err := c.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, &fresh); err != nil {
			return fmt.Errorf("read application again: %w", err)
		}
		base := fresh.DeepCopy()
		fresh.Status = app.Status
		if !equality.Semantic.DeepEqual(fresh.Operation, ranOp) {
			fresh.Operation = base.Operation
		} else {
			fresh.Operation = nil
		}
		if err := patchIfChanged(ctx, c, base, &fresh, true); err != nil {
			return err
		}
		*app = fresh
		return nil
	}
	return patchIfChanged(ctx, c, orig, app, false)
}

// patchIfChanged merge-patches app from orig, skipping the call when
// nothing changed.
func patchIfChanged(ctx context.Context, c client.Client, orig, app *v1alpha1.Application, lock bool) error {
	var patch client.Patch = client.MergeFrom(orig)
	if lock {
		patch = client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
	}
	data, err := patch.Data(app)
	if err != nil {
		return fmt.Errorf("compute application patch: %w", err)
	}
	if isEmptyPatch(data) {
		return nil
	}
	if err := c.Patch(ctx, app, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("patch application %s: %w", app.Name, err)
	}
	return nil
}

// isEmptyPatch reports whether a merge patch changes nothing: "{}" or only
// the optimistic lock's resourceVersion.
func isEmptyPatch(data []byte) bool {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return false
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "resourceVersion")
		if len(md) == 0 {
			delete(m, "metadata")
		}
	}
	return len(m) == 0
}

// clearRefresh removes the refresh annotation from app with a merge patch
// guarded by its resourceVersion; app is updated from the answer.
func clearRefresh(ctx context.Context, c client.Client, app *v1alpha1.Application) error {
	patch := map[string]any{"metadata": map[string]any{
		"resourceVersion": app.ResourceVersion,
		"annotations":     map[string]any{v1alpha1.AnnotationKeyRefresh: nil},
	}}
	data, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("encode refresh patch: %w", err)
	}
	if err := c.Patch(ctx, app, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("clear refresh annotation of application %s: %w", app.Name, err)
	}
	return nil
}

// requestRefresh sets the refresh annotation on app with a merge patch.
func requestRefresh(ctx context.Context, c client.Client, app *v1alpha1.Application) error {
	patch := map[string]any{"metadata": map[string]any{"annotations": map[string]any{v1alpha1.AnnotationKeyRefresh: v1alpha1.RefreshTypeNormal}}}
	data, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("encode refresh patch: %w", err)
	}
	if err := c.Patch(ctx, app, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("request refresh of application %s: %w", app.Name, err)
	}
	return nil
}
