package apply

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/engine/apply/plan"
)

// replaceRule ends the message of a Replace=true or Force=true object whose
// live object is not its Application's.
const replaceRule = "Replace=true and Force=true replace or force only an object that carries this application's tracking id"

// writeMode is how an object is written, chosen by modeOf.
type writeMode int

const (
	// writeApply is a server-side apply, which also creates a missing
	// object.
	writeApply writeMode = iota
	// writeReplace replaces the live object with a PUT of the whole
	// manifest, as kubectl replace does.
	writeReplace
	// writeRecreate deletes the live object, waits until it is gone and
	// creates the manifest, as kubectl replace --force does.
	writeRecreate
	// writeApplyOrRecreate is a server-side apply that deletes and
	// re-creates the object when the API server rejects the apply as
	// invalid (an immutable field) or conflicting, as kubectl apply
	// --force does.
	writeApplyOrRecreate
)

// recreates reports whether m may delete and re-create the object, so that
// a dry run rejected as invalid or conflicting does not fail the wave.
func (m writeMode) recreates() bool {
	return m == writeRecreate || m == writeApplyOrRecreate
}

// modeOf decides how obj is written over live (nil when it does not exist)
// with opts, as gitops-engine's syncContext.applyObject
// (pkg/sync/sync_context.go) and the kubectl commands it runs
// (pkg/utils/kube/resource_ops.go) do:
//
//   - Replace=true: kubectl replace, a PUT of the whole manifest; with
//     Force=true, kubectl replace --force, which deletes the object, waits
//     until it is gone and creates it. A CustomResourceDefinition or a
//     Namespace is only ever updated in place, whatever Force says:
//     deleting it would delete every custom resource of its kind, or
//     everything in it.
//   - Force=true without Replace=true: kubectl apply --force, which deletes
//     and re-creates the object when the apply is rejected as invalid or
//     conflicting. With ServerSideApply=true Argo CD applies server-side
//     with --force-conflicts and never deletes, and neither does tollgate.
//     Unlike kubectl, tollgate does not delete a CustomResourceDefinition or
//     a Namespace this way either.
//
// A missing object is created server-side whatever the options (Argo CD
// runs kubectl create with Replace=true), so that tollgate's field manager
// owns exactly the fields of the manifest, as after any server-side apply.
func modeOf(opts plan.SyncOptions, obj, live *unstructured.Unstructured) writeMode {
	if live == nil {
		return writeApply
	}
	kept := keptInPlace(obj)
	switch {
	case opts.Replace && opts.Force && !kept:
		return writeRecreate
	case opts.Replace:
		return writeReplace
	case opts.Force && !opts.ServerSideApply && !kept:
		return writeApplyOrRecreate
	}
	return writeApply
}

// keptInPlace reports whether obj is a CustomResourceDefinition or a
// Namespace, which Replace=true and Force=true never delete.
func keptInPlace(obj *unstructured.Unstructured) bool {
	switch obj.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}, schema.GroupKind{Kind: "Namespace"}:
		return true
	}
	return false
}

// mode is how the item is written now: a hook's predecessor deleted
// (BeforeHookCreation) leaves nothing to replace.
func (it *item) mode() writeMode {
	return modeOf(it.task.SyncOptions, it.obj, it.live)
}

// notOursError is an object that changed hands after it was judged.
type notOursError struct{ msg string }

func (e *notOursError) Error() string { return e.msg }

// rejected reports whether err is the API server's or tollgate's refusal of
// one object, which fails that object, rather than a failure to reach the
// API server.
func rejected(err error) bool {
	var status apierrors.APIStatus
	var notOurs *notOursError
	return errors.As(err, &status) || errors.As(err, &notOurs)
}

// rejectHint explains a rejection of it that an option would get past.
func rejectHint(err error, it *item) string {
	switch {
	case apierrors.IsConflict(err) && !it.force:
		return " (the live object is not tracked by this application, so fields another manager owns are not taken over)"
	case apierrors.IsInvalid(err) && it.mode() == writeReplace && !keptInPlace(it.obj):
		return " (Replace=true updates the object in place, as kubectl replace does: a field the API server does not let change needs Force=true as well, which deletes and re-creates the object)"
	}
	return ""
}

// dryRun asks the API server to check how it would be written, persisting
// nothing.
func (a *Applier) dryRun(ctx context.Context, it *item, app string) error {
	dry := it.obj.DeepCopy()
	validate := it.task.SyncOptions.Validate
	switch it.mode() {
	case writeReplace, writeRecreate:
		// The PUT checks the manifest as a whole; for writeRecreate its
		// rejection as invalid only means that the object must go first.
		_, err := a.replace(ctx, dry, app, true, validate)
		return err
	}
	return a.patch(ctx, dry, patchOptions{force: it.force, dryRun: true, validate: validate})
}

// write writes it as its mode says and returns the API server's answer and
// what was done ("created", "configured", "unchanged", "replaced", "deleted
// and re-created"). A rejected object fails it (the answer is nil then); the
// error is only for an API server that could not be reached.
func (a *Applier) write(ctx context.Context, it *item, app string) (*unstructured.Unstructured, string, error) {
	obj := it.obj.DeepCopy()
	validate := it.task.SyncOptions.Validate
	switch mode := it.mode(); mode {
	case writeReplace:
		created, err := a.replace(ctx, obj, app, false, validate)
		if err != nil {
			return nil, "", a.failed(it, "replace", err)
		}
		if created {
			return obj, "created", nil
		}
		if err := a.ownAsApplied(ctx, obj); err != nil {
			return nil, "", a.failed(it, "own replaced fields", err)
		}
		if keptInPlace(it.obj) && it.task.SyncOptions.Force {
			it.notes = append(it.notes, "Force=true does not delete a CustomResourceDefinition or a Namespace")
		}
		if obj.GetResourceVersion() == it.live.GetResourceVersion() {
			return obj, "unchanged", nil
		}
		return obj, "replaced", nil
	case writeRecreate:
		return a.recreate(ctx, it, obj, app)
	default:
		err := a.patch(ctx, obj, patchOptions{force: it.force, validate: validate})
		if err != nil && mode == writeApplyOrRecreate && (apierrors.IsInvalid(err) || apierrors.IsConflict(err)) {
			it.notes = append(it.notes, "Force=true: the apply was rejected ("+err.Error()+")")
			return a.recreate(ctx, it, it.obj.DeepCopy(), app)
		}
		if err != nil {
			return nil, "", a.failed(it, "apply", err)
		}
		switch {
		case it.live == nil:
			return obj, "created", nil
		case it.live.GetResourceVersion() == obj.GetResourceVersion():
			return obj, "unchanged", nil
		}
		return obj, "configured", nil
	}
}

// failed fails it with err when err is a rejection, and returns err
// otherwise.
func (a *Applier) failed(it *item, verb string, err error) error {
	if !rejected(err) {
		return fmt.Errorf("%s %s: %w", verb, it.ref, err)
	}
	it.fail("%s: %s%s", verb, err.Error(), rejectHint(err, it))
	return nil
}

// replace PUTs obj over its live object, as kubectl replace does, with the
// field manager and the live resourceVersion, read again just before (the
// object must still carry app's tracking id) and read again on a conflict.
// An object gone in between is created server-side instead (created). The
// API server's answer replaces obj.
func (a *Applier) replace(ctx context.Context, obj *unstructured.Unstructured, app string, dryRun, validate bool) (created bool, err error) {
	ref := RefOf(obj)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		f, err := a.get(ctx, ref)
		if err != nil {
			return err
		}
		if f.obj == nil {
			created = true
			return a.patch(ctx, obj, patchOptions{dryRun: dryRun, validate: validate})
		}
		if msg := notOursMessage(f.obj, app, a.opts.Tracking, replaceRule); msg != "" {
			return &notOursError{msg: msg}
		}
		put := &unstructured.Unstructured{Object: applyBody(obj)}
		put.SetResourceVersion(f.obj.GetResourceVersion())
		opts := []client.UpdateOption{client.FieldOwner(a.opts.FieldManager), fieldValidation(validate)}
		if dryRun {
			opts = append(opts, client.DryRunAll)
		}
		if err := a.client.Update(ctx, put, opts...); err != nil {
			return err
		}
		obj.Object = put.Object
		return nil
	})
	return created, err
}

// fieldValidation is Strict, or Ignore with Validate=false.
func fieldValidation(validate bool) client.FieldValidation {
	if validate {
		return client.FieldValidation(metav1.FieldValidationStrict)
	}
	return client.FieldValidation(metav1.FieldValidationIgnore)
}

// ownAsApplied gives the field manager's server-side apply the fields a PUT
// gave it. The API server records the fields a PUT changed under the field
// manager with operation Update, apart from those it owns by applying;
// a later server-side apply would then neither own nor remove them, and a
// field dropped from the manifest would stay. The Update entry of
// managedFields is merged into the Apply entry as kubectl does when an
// object moves from client-side to server-side apply
// (k8s.io/client-go/util/csaupgrade; see moveFields), with obj's
// resourceVersion as a precondition, read again on a conflict. obj is
// updated.
func (a *Applier) ownAsApplied(ctx context.Context, obj *unstructured.Unstructured) error {
	return a.moveFields(ctx, obj, sets.New(a.opts.FieldManager), nil)
}

// recreate deletes it's live object, waits until it is gone and creates obj
// server-side, as kubectl replace --force does. Only an object of app is
// deleted (see deleteLive). When the API server rejects the new object, the
// deleted one is created again, as kubectl apply --force does, and it
// fails.
func (a *Applier) recreate(ctx context.Context, it *item, obj *unstructured.Unstructured, app string) (*unstructured.Unstructured, string, error) {
	deleted, err := a.deleteLive(ctx, it.live, app, replaceRule)
	if err != nil {
		it.fail("delete before re-creating: %v", err)
		return nil, "", nil
	}
	err = a.patch(ctx, obj, patchOptions{validate: it.task.SyncOptions.Validate})
	if err == nil {
		return obj, "deleted and re-created", nil
	}
	if deleted == nil || !rejected(err) {
		return nil, "", a.failed(it, "create after deleting", err)
	}
	if rerr := a.restore(ctx, deleted); rerr != nil {
		it.fail("create after deleting: %v; restoring the deleted object failed too: %v", err, rerr)
	} else {
		it.fail("create after deleting: %v; the deleted object was created again", err)
	}
	return nil, "", nil
}

// restore creates deleted again, without its server-maintained metadata.
// Its managedFields are kept, so the record of who owns what survives.
func (a *Applier) restore(ctx context.Context, deleted *unstructured.Unstructured) error {
	obj := deleted.DeepCopy()
	for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", k)
	}
	return a.client.Create(ctx, obj, client.FieldOwner(a.opts.FieldManager))
}
