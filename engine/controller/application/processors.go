package application

import (
	"context"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Two processors work on an Application, as Argo CD's status and operation
// processors: the status processors (the controller of ControllerName)
// compare it and write its sync and health; when a comparison finds a sync
// due (requested, or automated), it hands the Application to the operation
// processors (OperationsControllerName), which run the operation, waves
// and waits for health included, and compare again. A long sync so holds
// an operation processor only, and the other Applications of the replica
// keep being compared. A per-Application lock keeps the two from working
// on one Application at once: a comparison asked for while the operation
// runs is made when it ends.

// OperationsControllerName names the operation processors' controller.
const OperationsControllerName = ControllerName + "-operations"

// queueRef holds a controller's queue once it has started, so that the
// engine can add to it.
type queueRef struct {
	q atomic.Pointer[workqueue.TypedRateLimitingInterface[reconcile.Request]]
}

// source is the controller source that captures the queue.
func (r *queueRef) source() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		r.q.Store(&q)
		return nil
	})
}

// add queues key, if the controller has started (before, its initial list
// queues every Application anyway).
func (r *queueRef) add(key types.NamespacedName) {
	if q := r.q.Load(); q != nil {
		(*q).Add(reconcile.Request{NamespacedName: key})
	}
}

// keyLocks are the per-Application locks of the two processors.
type keyLocks struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*keyLock
}

type keyLock struct {
	sync.Mutex
	refs int
	// dirty: a comparison was asked for while the lock was held.
	dirty bool
}

// entry returns key's lock, counted as used; l.mu is held.
func (l *keyLocks) entry(key types.NamespacedName) *keyLock {
	if l.m == nil {
		l.m = map[types.NamespacedName]*keyLock{}
	}
	kl := l.m[key]
	if kl == nil {
		kl = &keyLock{}
		l.m[key] = kl
	}
	kl.refs++
	return kl
}

// lock waits for key's lock (the operation processors).
func (l *keyLocks) lock(key types.NamespacedName) *keyLock {
	l.mu.Lock()
	kl := l.entry(key)
	l.mu.Unlock()
	kl.Lock()
	return kl
}

// tryLock takes key's lock if it is free (the status processors); if not,
// it records that a comparison is due once it is released.
func (l *keyLocks) tryLock(key types.NamespacedName) (*keyLock, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	kl := l.entry(key)
	if !kl.TryLock() {
		kl.dirty = true
		kl.refs--
		return nil, false
	}
	return kl, true
}

// unlock releases key's lock and reports whether a comparison was asked
// for meanwhile.
func (l *keyLocks) unlock(key types.NamespacedName, kl *keyLock) (dirty bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	dirty, kl.dirty = kl.dirty, false
	kl.refs--
	if kl.refs == 0 {
		delete(l.m, key)
	}
	kl.Unlock()
	return dirty
}
