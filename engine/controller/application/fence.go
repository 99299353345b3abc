package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
)

// Sharder tells a controller replica which Applications are its own when
// several replicas share them; *shard.Membership implements it. Without
// one, the replica owns every Application.
type Sharder interface {
	// Identity names this replica.
	Identity() string
	// Owns reports whether this replica reconciles the Application of
	// key (namespace/name).
	Owns(key string) bool
	// Live reports whether a replica is a live member.
	Live(member string) bool
	// Holding reports whether this replica's own membership is current;
	// its operations stop when it is not.
	Holding() bool
	// RenewInterval is how often membership is renewed: how soon to look
	// again at an Application another live replica is syncing.
	RenewInterval() time.Duration
	// Changes receives a value when the members change.
	Changes() <-chan struct{}
	// Members are the live members.
	Members() []string
}

// AnnotationOperationReplica fences an operation: it names the controller
// replica running the Application's operation. The replica writes it with
// the Running operation state under the Application's resourceVersion, so
// of two replicas that both believe they own the Application (membership
// is seen by each on its own), only one starts the operation; it removes
// it when the operation ends. Another replica leaves the Application alone
// while the named one is live, and takes it over once it is not: a
// requested operation is resumed, an automated one is ended with phase
// Error and the Application compared again. Only the controller writes it:
// the gates deny it anywhere else (rule reserved-annotation).
const AnnotationOperationReplica = policies.AnnotationOperationReplica

// errFenceLost: another replica took over the operation of this pass; its
// results are dropped.
var errFenceLost = errors.New("another controller replica took over the operation")

// errNotStarted: the operation's fence could not be written; nothing was
// applied and nothing of the pass is written.
var errNotStarted = errors.New("operation not started")

// identity is this replica's name, "" without sharding.
func (r *Reconciler) identity() string {
	if r.shard == nil {
		return ""
	}
	return r.shard.Identity()
}

// fencedByOther reports whether another live replica runs app's operation.
func (r *Reconciler) fencedByOther(app *v1alpha1.Application) bool {
	holder := app.Annotations[AnnotationOperationReplica]
	return holder != "" && holder != r.identity() && r.shard != nil && r.shard.Live(holder)
}

// OperationAbandoned starts the message of an automated operation whose
// replica stopped, or stopped renewing its shard Lease (an API server too
// loaded to answer within the lease duration), while it ran: another
// replica ended it, and the next comparison decides again.
const OperationAbandoned = "operation abandoned"

// takeOver removes the fence of a replica that is gone, or of this one
// before it restarted (the caller holds the Application's lock, so no
// operation of this process runs), writing app under its resourceVersion.
// An automated operation that was running ends in phase Error: it left no
// request to resume, and the comparison decides again. A requested one
// stays Running and is resumed by the operation processors.
func (r *Reconciler) takeOver(ctx context.Context, app *v1alpha1.Application) error {
	holder := app.Annotations[AnnotationOperationReplica]
	if holder == "" {
		return nil
	}
	next := app.DeepCopy()
	delete(next.Annotations, AnnotationOperationReplica)
	if st := next.Status.OperationState; st != nil && st.Phase == v1alpha1.OperationRunning && next.Operation == nil {
		now := metav1.NewTime(r.opts.Now().UTC().Truncate(time.Second))
		st.Phase, st.FinishedAt = v1alpha1.OperationError, &now
		st.Message = fmt.Sprintf("%s: controller replica %s stopped, or its shard Lease expired, while it ran; the Application is compared again", OperationAbandoned, holder)
	}
	if err := patchIfChanged(ctx, r.client, app, next, true); err != nil {
		return fmt.Errorf("take over the operation of replica %s: %w", holder, err)
	}
	ctrl.LoggerFrom(ctx).Info("Took over the operation of a replica that is gone", "replica", holder)
	*app = *next
	return nil
}
