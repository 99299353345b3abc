package application

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
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
// cleared too, and when fence is set the pass ran an operation under that
// replica's fence (AnnotationOperationReplica), which app no longer has.
// Either write carries an optimistic lock: if the Application changed since
// it was read, it is read again; a different operation there (a new
// request) is kept, and a fence taken by another replica meanwhile drops
// the write (errFenceLost). app's metadata is updated from the answer.
func writeApplication(ctx context.Context, c client.Client, orig, app *v1alpha1.Application, ranOp *v1alpha1.Operation, fence string) error {
	if ranOp == nil && fence == "" {
		return patchIfChanged(ctx, c, orig, app, false)
	}
	if ranOp != nil {
		app.Operation = nil
	}
	err := patchIfChanged(ctx, c, orig, app, true)
	if !apierrors.IsConflict(err) {
		return err
	}
	// Someone wrote the Application meanwhile: read it again and clear
	// the operation only if it is still the one that ran; a new request
	// stays.
	var fresh v1alpha1.Application
	if err := c.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, &fresh); err != nil {
		return fmt.Errorf("read application again: %w", err)
	}
	if fence != "" && fresh.Annotations[AnnotationOperationReplica] != fence {
		return errFenceLost
	}
	base := fresh.DeepCopy()
	fresh.Status = app.Status
	if fence != "" {
		delete(fresh.Annotations, AnnotationOperationReplica)
	}
	switch {
	case ranOp != nil && equality.Semantic.DeepEqual(fresh.Operation, ranOp):
		fresh.Operation = nil
	case fresh.Operation == nil:
		fresh.Operation = app.Operation // a retry the pass set, or none
	}
	if err := patchIfChanged(ctx, c, base, &fresh, true); err != nil {
		return err
	}
	*app = fresh
	return nil
}

// patchIfChanged writes the changes made to app since orig, skipping the
// call when nothing changed, and takes app's metadata (resourceVersion)
// from the answer, read as metadata only (appops.Patch). With lock, the
// patch carries orig's resourceVersion, so it fails with a conflict when
// the Application changed meanwhile.
func patchIfChanged(ctx context.Context, c client.Client, orig, app *v1alpha1.Application, lock bool) error {
	if err := appops.Patch(ctx, c, orig, app, appops.PatchOptions{Lock: lock, MetadataOnly: true}); err != nil {
		return fmt.Errorf("patch application %s: %w", app.Name, err)
	}
	return nil
}

// clearRefresh removes the refresh annotation from app with a merge patch
// guarded by its resourceVersion; app is updated from the answer.
func clearRefresh(ctx context.Context, c client.Client, app *v1alpha1.Application) error {
	orig := app.DeepCopy()
	delete(app.Annotations, v1alpha1.AnnotationKeyRefresh)
	if err := appops.Patch(ctx, c, orig, app, appops.PatchOptions{Lock: true}); err != nil {
		return fmt.Errorf("clear refresh annotation of application %s: %w", app.Name, err)
	}
	return nil
}
