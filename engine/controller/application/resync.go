package application

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// The periodic comparison (--resync) is not a requeue of the pass that
// scheduled it: an Application is compared by events too (its spec, its
// project, its live objects, a refresh, the end of its operation), and a
// requeue kept the earliest of its due times, so one compared seconds ago
// was compared, and its reconciledAt written, again. As Argo CD's status
// refresh (needRefreshAppStatus: reconciledAt older than
// timeout.reconciliation), a resync that comes due looks at when the
// Application was last compared and waits for the rest of the period from
// then; one whose operation pass is queued waits a period too, as that
// pass compares it. Events still queue their comparison at once.

// scheduleResync asks for key's periodic comparison after the resync
// period (±jitter).
func (r *Reconciler) scheduleResync(key types.NamespacedName) {
	if r.resyncs != nil {
		r.resyncs.AddAfter(key, r.opts.requeueAfter())
	}
}

// runResyncs hands the Applications whose resync came due to the status
// processors, until ctx ends.
func (r *Reconciler) runResyncs(ctx context.Context) {
	go func() {
		<-ctx.Done()
		r.resyncs.ShutDown()
	}()
	for {
		key, shutdown := r.resyncs.Get()
		if shutdown {
			return
		}
		r.resyncDue(ctx, key)
		r.resyncs.Done(key)
	}
}

// resyncDue queues key's comparison, or schedules its resync again when
// it was compared within the period or its operation pass is queued. An
// Application that is gone is dropped.
func (r *Reconciler) resyncDue(ctx context.Context, key types.NamespacedName) {
	var app v1alpha1.Application
	err := r.client.Get(ctx, key, &app, client.UnsafeDisableDeepCopy)
	switch {
	case apierrors.IsNotFound(err):
		return
	case err != nil:
		ctrl.LoggerFrom(ctx).Error(err, "read application for its resync", "application", key.String())
	case r.operationQueued(key):
		r.scheduleResync(key)
		return
	case app.Status.ReconciledAt != nil:
		if wait := r.opts.requeueAfter() - r.opts.Now().Sub(app.Status.ReconciledAt.Time); wait > time.Second {
			r.resyncs.AddAfter(key, wait)
			return
		}
	}
	r.statusQueue.add(key)
}

// handOff queues key's operation pass.
func (r *Reconciler) handOff(key types.NamespacedName) {
	r.mu.Lock()
	r.opQueued[key] = struct{}{}
	r.mu.Unlock()
	r.operations.add(key)
}

// operationStarts records that key's operation pass started.
func (r *Reconciler) operationStarts(key types.NamespacedName) {
	r.mu.Lock()
	delete(r.opQueued, key)
	r.mu.Unlock()
}

// operationQueued reports whether key's operation pass is queued and has
// not started.
func (r *Reconciler) operationQueued(key types.NamespacedName) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.opQueued[key]
	return ok
}
