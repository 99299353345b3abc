package appops

import (
	"bytes"
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// PatchOptions say how Patch writes. The zero value writes without a lock
// and reads the whole Application back.
type PatchOptions struct {
	// Lock guards the write with base's resourceVersion (an optimistic
	// lock): it fails with a conflict when the Application changed since
	// base was read. Without it, a field the patch does not name keeps
	// the value it has on the server.
	Lock bool
	// MetadataOnly reads the answer as metadata only, into app.ObjectMeta:
	// decoding the whole Application back (its status lists every
	// resource) costs more than the patch, and app already holds what was
	// written. The controller writes this way on every reconcile.
	MetadataOnly bool
}

// Patch writes the changes made to app since base, which is app as it was
// read, as one JSON merge patch computed by client.MergeFrom: only the
// fields that changed are sent, so fields tollgate's types do not know,
// and fields others changed meanwhile, are never dropped. Nothing is sent
// when nothing changed. app is updated from the answer. The API server's
// error is returned as it is (apierrors.IsConflict and IsNotFound hold on
// it): callers say what they were writing.
//
// The patch is computed from the fields of metadata, spec and status that
// changed only (see changedFields), so that a write that changes a
// timestamp of the status does not encode and diff the whole resource
// list and history twice.
func Patch(ctx context.Context, c client.Writer, base, app *v1alpha1.Application, o PatchOptions) error {
	data, err := patchData(base, app, o.Lock)
	if err != nil || data == nil {
		return err
	}
	if !o.MetadataOnly {
		return c.Patch(ctx, app, client.RawPatch(types.MergePatchType, data))
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(v1alpha1.ApplicationGroupVersionKind)
	meta.SetNamespace(app.Namespace)
	meta.SetName(app.Name)
	if err := c.Patch(ctx, meta, client.RawPatch(types.MergePatchType, data)); err != nil {
		return err
	}
	app.ObjectMeta = meta.ObjectMeta
	return nil
}

// Edit makes a change a person asked for: edit is applied to app, as read,
// and the change written with Patch under the lock, so that a request
// made on what the person saw is not applied to something else. verb names
// the action in errors ("request sync of"); a lost race says to try again.
func Edit(ctx context.Context, c client.Writer, app *v1alpha1.Application, verb string, edit func(*v1alpha1.Application)) error {
	base := app.DeepCopy()
	edit(app)
	if err := Patch(ctx, c, base, app, PatchOptions{Lock: true}); err != nil {
		if apierrors.IsConflict(err) {
			return fmt.Errorf("%s %s: the application changed meanwhile, try again: %w", verb, app.Name, err)
		}
		return fmt.Errorf("%s %s: %w", verb, app.Name, err)
	}
	return nil
}

// patchData returns the merge patch from base to app, as
// client.MergeFrom(base).Data(app) computes it (with lock,
// client.MergeFromWithOptimisticLock), or nil when nothing changed.
func patchData(base, app *v1alpha1.Application, lock bool) ([]byte, error) {
	b, a, changed := changedFields(base, app)
	if !changed {
		return nil, nil
	}
	var opts []client.MergeFromOption
	if lock {
		opts = append(opts, client.MergeFromWithOptimisticLock{})
	}
	data, err := client.MergeFromWithOptions(b, opts...).Data(a)
	if err != nil {
		return nil, fmt.Errorf("compute application patch: %w", err)
	}
	// Fields that differ only as nil and empty encode alike: the patch may
	// still change nothing.
	none := []byte("{}")
	if lock {
		stub := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{ResourceVersion: b.ResourceVersion}}
		if none, err = client.MergeFromWithOptions(stub, opts...).Data(stub); err != nil {
			return nil, fmt.Errorf("compute application patch: %w", err)
		}
	}
	if bytes.Equal(data, none) {
		return nil, nil
	}
	return data, nil
}

// changedFields returns shallow copies of base and app in which the
// fields of metadata, spec and status, and the operation, that are deeply
// equal in both are zero, and whether any is not. The merge patch between
// the copies is the one between base and app: a member equal in both
// documents has no place in a merge patch, and left out of both it has
// none either. The resourceVersions stay, for the optimistic lock.
func changedFields(base, app *v1alpha1.Application) (b, a *v1alpha1.Application, changed bool) {
	bc, ac := *base, *app
	changed = zeroUnchanged(reflect.ValueOf(&bc.ObjectMeta).Elem(), reflect.ValueOf(&ac.ObjectMeta).Elem(), reflect.ValueOf(&app.ObjectMeta).Elem())
	changed = zeroUnchanged(reflect.ValueOf(&bc.Spec).Elem(), reflect.ValueOf(&ac.Spec).Elem(), reflect.ValueOf(&app.Spec).Elem()) || changed
	changed = zeroUnchanged(reflect.ValueOf(&bc.Status).Elem(), reflect.ValueOf(&ac.Status).Elem(), reflect.ValueOf(&app.Status).Elem()) || changed
	if reflect.DeepEqual(bc.Operation, ac.Operation) {
		bc.Operation, ac.Operation = nil, nil
	} else {
		changed = true
	}
	bc.ResourceVersion, ac.ResourceVersion = base.ResourceVersion, app.ResourceVersion
	return &bc, &ac, changed
}

// zeroUnchanged zeroes the fields of the structs b and a (addressable,
// copies of base's and app's orig) that are deeply equal in both, and
// reports whether any is not. It does not leave a zero while b is not,
// though: the status is omitzero, and a status left out of a's document
// only would make the patch remove it whole. The last unchanged field that
// is not zero then stays in both.
func zeroUnchanged(b, a, orig reflect.Value) (changed bool) {
	keep := -1
	for i := range a.NumField() {
		fb, fa := b.Field(i), a.Field(i)
		if !fa.CanSet() {
			continue
		}
		if !reflect.DeepEqual(fb.Interface(), fa.Interface()) {
			changed = true
			continue
		}
		if !fa.IsZero() {
			keep = i
		}
		fb.SetZero()
		fa.SetZero()
	}
	if keep >= 0 && a.IsZero() && !b.IsZero() {
		b.Field(keep).Set(orig.Field(keep))
		a.Field(keep).Set(orig.Field(keep))
	}
	return changed
}
