// Package appops holds the writes made to an Application: those a person
// makes, as `tollgate app` makes them and as the web UI does (request a
// sync, a rollback or a refresh), and the one every write goes through,
// the controllers' too (Patch: a JSON merge patch computed by
// client.MergeFrom from the Application as read and as changed). Each
// request is the API call Argo CD's API server makes for the same action
// (a merge patch of operation, or of the refresh annotation, guarded by
// the resourceVersion where a lost race would matter), made with the
// caller's client, so Kubernetes RBAC decides whether the person may.
package appops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// RefusedError is a request that cannot be made as asked: the Application
// does not exist, an operation is in progress, rollback with automated
// sync on, no such deployment. The CLI exits 2 on it.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

func refused(format string, args ...any) error {
	return &RefusedError{Err: fmt.Errorf(format, args...)}
}

// Get reads the Application key; a missing one is refused.
func Get(ctx context.Context, c client.Reader, key types.NamespacedName) (*v1alpha1.Application, error) {
	var app v1alpha1.Application
	if err := c.Get(ctx, key, &app); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, refused("application %s not found in namespace %s", key.Name, key.Namespace)
		}
		return nil, fmt.Errorf("get application %s: %w", key.Name, err)
	}
	return &app, nil
}

// SyncOptions are the choices of a sync request.
type SyncOptions struct {
	// Prune deletes what the revision no longer renders.
	Prune bool
	// Revision, when set, syncs it instead of the target revision (the
	// first source's, for a multi-source Application).
	Revision string
	// DryRun applies nothing (server-side dry runs only).
	DryRun bool
	// Resources, when set, sync these resources only (a partial sync).
	Resources []v1alpha1.SyncOperationResource
	// Strategy is apply (no hooks) or hook, each maybe forced; nil is the
	// Application's.
	Strategy *v1alpha1.SyncStrategy
	// SyncOptions replace the Application's for this sync.
	SyncOptions []string
	// Retry retries a failed sync; nil is the Application's retry
	// strategy.
	Retry *v1alpha1.RetryStrategy
	// Automated marks the operation as started by a controller
	// (initiatedBy.automated), as the ApplicationSet controller's
	// RollingSync marks the syncs it requests.
	Automated bool
	// Info are the operation's info items (name and value), shown with it.
	Info []v1alpha1.Info
}

// Sync sets operation.sync on the Application key, initiated by user.
func Sync(ctx context.Context, c client.Client, key types.NamespacedName, o SyncOptions, user string) error {
	app, err := Get(ctx, c, key)
	if err != nil {
		return err
	}
	if app.Operation != nil {
		return refused("application %s already has an operation in progress", key.Name)
	}
	sync := &v1alpha1.SyncOperation{Prune: o.Prune, DryRun: o.DryRun, Resources: o.Resources, SyncStrategy: o.Strategy, SyncOptions: o.SyncOptions}
	if o.Revision != "" {
		if app.Spec.HasMultipleSources() {
			sync.Revisions = make([]string, len(app.Spec.Sources))
			for i, s := range app.Spec.Sources {
				sync.Revisions[i] = s.TargetRevision
			}
			sync.Revisions[0] = o.Revision
		} else {
			sync.Revision = o.Revision
		}
	}
	op := &v1alpha1.Operation{Sync: sync, InitiatedBy: v1alpha1.OperationInitiator{Username: user, Automated: o.Automated}, Info: o.Info}
	if sp := app.Spec.SyncPolicy; o.Retry != nil {
		op.Retry = *o.Retry
	} else if sp != nil && sp.Retry != nil {
		// As Argo CD's API server: the spec's retry strategy retries the
		// requested sync too.
		op.Retry = *sp.Retry.DeepCopy()
	}
	return Edit(ctx, c, app, "request sync of", func(a *v1alpha1.Application) {
		a.Operation = op
	})
}

// ErrAutomatedRollback is why a rollback is refused while automated sync
// is on: the next automated sync would undo it (Argo CD refuses it too).
var ErrAutomatedRollback = errors.New("rollback cannot be initiated when auto-sync is enabled")

// Rollback sets operation.sync to the sources and revisions of the
// deployment id of the history ("" is the one before the last), initiated
// by user, and returns that deployment.
func Rollback(ctx context.Context, c client.Client, key types.NamespacedName, id string, prune bool, user string) (*v1alpha1.RevisionHistory, error) {
	app, err := Get(ctx, c, key)
	if err != nil {
		return nil, err
	}
	if sp := app.Spec.SyncPolicy; sp != nil && sp.Automated.IsEnabled() {
		return nil, &RefusedError{Err: fmt.Errorf("%w: turn it off first with tollgate app set %s --sync-policy none", ErrAutomatedRollback, key.Name)}
	}
	if app.Operation != nil {
		return nil, refused("application %s already has an operation in progress", key.Name)
	}
	h, err := HistoryEntry(app.Status.History, id)
	if err != nil {
		return nil, err
	}
	sync := &v1alpha1.SyncOperation{Prune: prune}
	if len(h.Sources) > 0 {
		sync.Sources, sync.Revisions = slices.Clone(h.Sources), slices.Clone(h.Revisions)
	} else {
		src := h.Source
		sync.Source, sync.Revision = &src, h.Revision
	}
	return h, Edit(ctx, c, app, "request rollback of", func(a *v1alpha1.Application) {
		a.Operation = &v1alpha1.Operation{Sync: sync, InitiatedBy: v1alpha1.OperationInitiator{Username: user}}
	})
}

// HistoryEntry finds the deployment id of history; "" is the one before
// the last.
func HistoryEntry(history []v1alpha1.RevisionHistory, id string) (*v1alpha1.RevisionHistory, error) {
	if id == "" {
		if len(history) < 2 {
			return nil, refused("no earlier deployment to roll back to (%d in the history)", len(history))
		}
		return &history[len(history)-2], nil
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil, refused("invalid deployment ID %q: want a number from tollgate app history", id)
	}
	for i := range history {
		if history[i].ID == n {
			return &history[i], nil
		}
	}
	return nil, refused("no deployment %d in the history (see tollgate app history)", n)
}

// RequestRefresh sets the refresh annotation of the Application key to typ
// (normal or hard) without waiting for the controller. It writes without
// reading the Application first, and without a lock: the patch names that
// annotation only.
func RequestRefresh(ctx context.Context, c client.Client, key types.NamespacedName, typ string) error {
	base := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	app := base.DeepCopy()
	app.Annotations = map[string]string{v1alpha1.AnnotationKeyRefresh: typ}
	if err := Patch(ctx, c, base, app, PatchOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return refused("application %s not found in namespace %s", key.Name, key.Namespace)
		}
		return fmt.Errorf("refresh application %s: %w", key.Name, err)
	}
	return nil
}

// RefreshPoll is how often Refresh looks whether the controller compared.
const RefreshPoll = 250 * time.Millisecond

// Refresh asks the controller to compare the Application key with Git
// (the annotation argocd.argoproj.io/refresh set to typ, normal or hard,
// as Argo CD's API server sets it) and waits, up to timeout, until the
// controller has, which it says by removing the annotation.
func Refresh(ctx context.Context, c client.Client, key types.NamespacedName, typ string, timeout time.Duration) error {
	if err := RequestRefresh(ctx, c, key, typ); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, RefreshPoll, timeout, true, func(ctx context.Context) (bool, error) {
		var cur v1alpha1.Application
		if err := c.Get(ctx, key, &cur); err != nil {
			return false, err
		}
		_, pending := cur.Annotations[v1alpha1.AnnotationKeyRefresh]
		return !pending, nil
	})
	if err != nil {
		return fmt.Errorf("refresh application %s: the controller did not compare it within %s (is tollgate controller running for namespace %s?): %w", key.Name, timeout, key.Namespace, err)
	}
	return nil
}

// Initiator is who started an operation, for people to read.
func Initiator(i v1alpha1.OperationInitiator) string {
	switch {
	case i.Username != "":
		return i.Username
	case i.Automated:
		return "automated sync"
	}
	return "unknown"
}

// Propagation policies of a cascaded deletion (argocd app delete
// --propagation-policy).
const (
	PropagationForeground = "foreground"
	PropagationBackground = "background"
)

// Delete deletes the Application key as Argo CD's API server does for
// `argocd app delete`: a cascaded deletion (cascade nil or true) first adds
// the finalizer of policy ("foreground", "background", or "" for the bare
// resources finalizer) unless the Application carries it or is being
// deleted, so that the controller deletes what it deployed; cascade false
// first removes every cascade finalizer, so that its resources stay. Both
// writes go through the API server (and its admission webhooks) under the
// Application's resourceVersion.
func Delete(ctx context.Context, c client.Client, key types.NamespacedName, cascade *bool, policy string) error {
	if cascade != nil && !*cascade && policy != "" {
		return refused("cannot set propagation policy when cascading is disabled")
	}
	var fin string
	if cascade == nil || *cascade {
		switch strings.ToLower(policy) {
		case PropagationForeground:
			fin = v1alpha1.ForegroundPropagationPolicyFinalizer
		case PropagationBackground:
			fin = v1alpha1.BackgroundPropagationPolicyFinalizer
		case "":
			fin = v1alpha1.ResourcesFinalizerName
		default:
			return refused("invalid propagation policy: %s", policy)
		}
	}
	app, err := Get(ctx, c, key)
	if err != nil {
		return err
	}
	switch {
	case fin != "" && !slices.Contains(app.Finalizers, fin) && app.DeletionTimestamp == nil:
		err = Edit(ctx, c, app, "delete", func(a *v1alpha1.Application) { a.Finalizers = append(slices.Clone(a.Finalizers), fin) })
	case fin == "" && app.CascadedDeletion():
		err = Edit(ctx, c, app, "delete", func(a *v1alpha1.Application) {
			a.Finalizers = slices.DeleteFunc(slices.Clone(a.Finalizers), v1alpha1.IsCascadeFinalizer)
		})
	}
	if err != nil {
		return err
	}
	if err := c.Delete(ctx, app); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s: %w", key.Name, err)
	}
	return nil
}
