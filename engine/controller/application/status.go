package application

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

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
