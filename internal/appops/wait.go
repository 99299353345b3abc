package appops

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// WaitOptions say when Wait is done with an Application and how it looks,
// as argocd app wait's flags.
type WaitOptions struct {
	// Sync waits until the Application is Synced.
	Sync bool
	// Health waits until it is Healthy; Suspended and Degraded accept
	// those health statuses too (any of the three asked for will do).
	Health, Suspended, Degraded bool
	// Operation waits until no operation is requested or running.
	Operation bool
	// Interval is how often Wait reads the Application.
	Interval time.Duration
	// Timeout bounds the wait.
	Timeout time.Duration
}

// DefaultWaitOptions wait until the Application is Synced and Healthy
// with no operation in progress, reading it every second for up to five
// minutes: tollgate app wait without flags (whose timeout is unbounded).
func DefaultWaitOptions() WaitOptions {
	return WaitOptions{Sync: true, Health: true, Operation: true, Interval: time.Second, Timeout: 5 * time.Minute}
}

// TimeoutError ends a wait that its timeout or its context cut short
// before the Application was done. Last is the Application as last read,
// nil when no read succeeded; Err is the interruption, and the error's
// text.
type TimeoutError struct {
	Last *v1alpha1.Application
	Err  error
}

func (e *TimeoutError) Error() string { return e.Err.Error() }
func (e *TimeoutError) Unwrap() error { return e.Err }

// Done reports whether app is where o asks (Interval and Timeout aside),
// as argocd app wait's checkResourceStatus decides: Synced when o.Sync;
// one of the health statuses o asks for (Healthy, Suspended, Degraded)
// when it asks for any; with o.Operation, no operation requested or
// running (one that never ran an operation has none running).
func Done(app *v1alpha1.Application, o WaitOptions) bool {
	st := app.Status.OperationState
	running := app.Operation != nil || (st != nil && !st.Phase.Completed())
	h := app.Status.Health.Status
	health := !(o.Health || o.Suspended || o.Degraded) ||
		(o.Health && h == v1alpha1.HealthStatusHealthy) ||
		(o.Suspended && h == v1alpha1.HealthStatusSuspended) ||
		(o.Degraded && h == v1alpha1.HealthStatusDegraded)
	return (!o.Operation || !running) && (!o.Sync || app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced) && health
}

// OperationFinished returns the final state of app's last operation when
// that operation is over: the controller has cleared the requested
// operation after writing a completed state. A requested operation the
// controller has not picked up yet is not finished, whatever the state of
// the one before it.
func OperationFinished(app *v1alpha1.Application) (*v1alpha1.OperationState, bool) {
	st := app.Status.OperationState
	if app.Operation != nil || st == nil || !st.Phase.Completed() {
		return nil, false
	}
	return st, true
}

// Wait reads the Application key every o.Interval until it is Done, and
// returns it. A missing Application is refused; other read errors are
// taken as passing and read again. When o.Timeout passes or ctx ends
// first, the error is a *TimeoutError.
func Wait(ctx context.Context, c client.Reader, key types.NamespacedName, o WaitOptions) (*v1alpha1.Application, error) {
	var last *v1alpha1.Application
	var gone error
	err := wait.PollUntilContextTimeout(ctx, o.Interval, o.Timeout, true, func(ctx context.Context) (bool, error) {
		var app v1alpha1.Application
		if err := c.Get(ctx, key, &app); err != nil {
			if apierrors.IsNotFound(err) {
				gone = refused("application %s not found in namespace %s", key.Name, key.Namespace)
				return false, gone
			}
			return false, nil // transient: keep polling
		}
		last = &app
		return Done(&app, o), nil
	})
	switch {
	case gone != nil:
		return nil, gone
	case isInterrupted(err):
		return nil, &TimeoutError{Last: last, Err: err}
	case err != nil:
		return nil, err
	}
	return last, nil
}

// WaitForOperation reads the Application key every interval until its
// operation is over (OperationFinished), and returns the operation's final
// state. An Application deleted meanwhile is refused; other read errors
// are taken as passing and read again. When timeout passes or ctx ends
// first, the error is a *TimeoutError.
func WaitForOperation(ctx context.Context, c client.Reader, key types.NamespacedName, interval, timeout time.Duration) (*v1alpha1.OperationState, error) {
	var last *v1alpha1.Application
	var done *v1alpha1.OperationState
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		var app v1alpha1.Application
		if err := c.Get(ctx, key, &app); err != nil {
			if apierrors.IsNotFound(err) {
				return false, refused("application %s was deleted", key.Name)
			}
			return false, nil // transient: keep polling
		}
		last = &app
		st, ok := OperationFinished(&app)
		done = st
		return ok, nil
	})
	switch {
	case isInterrupted(err):
		return nil, &TimeoutError{Last: last, Err: err}
	case err != nil:
		return nil, err
	}
	return done, nil
}

// isInterrupted reports whether err is a poll's timeout or its context's
// end.
func isInterrupted(err error) bool {
	return err != nil && (errors.Is(err, context.DeadlineExceeded) || wait.Interrupted(err))
}
