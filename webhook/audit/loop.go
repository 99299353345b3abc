package audit

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// DefaultInterval is how often the webhook's audit loop runs unless told
// otherwise.
const DefaultInterval = 10 * time.Minute

// The audit Lease's timings, as controller-runtime's leader election.
const (
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
)

// Loop runs an Auditor every Interval, the first time at once, on the one
// replica that holds Lock. It is a controller-runtime Runnable that needs
// no leader election of the manager: the webhook's replicas all serve
// admission, and losing the audit Lease (an API server that does not
// answer for a while) stops the audit, never the webhook; the replica
// then campaigns again.
type Loop struct {
	Auditor  *Auditor
	Interval time.Duration
	// Lock is the Lease the auditing replica holds (tollgate webhook makes
	// it with resourcelock.NewFromKubeconfig); nil audits without one.
	Lock resourcelock.Interface
	// Ready, when set, is waited for before the first run (the webhook's
	// caches of Applications and AppProjects).
	Ready func(ctx context.Context) bool
	// Log is the loop's logger (a manager passes its runnables no
	// logger in their context).
	Log logr.Logger
}

// Start runs the loop until ctx is done.
func (l *Loop) Start(ctx context.Context) error {
	log := l.Log
	ctx = logr.NewContext(ctx, log)
	if l.Ready != nil && !l.Ready(ctx) {
		return nil // ctx ended first
	}
	if l.Lock == nil {
		l.run(ctx)
		return nil
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: l.Lock, Name: l.Lock.Describe(),
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
			ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					log.Info("Holding the audit Lease", "lease", l.Lock.Describe())
					l.run(ctx)
				},
				OnStoppedLeading: func() { log.Info("Audit Lease lost or released", "lease", l.Lock.Describe()) },
			},
		})
		if err != nil {
			return err
		}
		le.Run(ctx) // returns when the Lease is lost, or ctx ends
	}
	return nil
}

// run audits every Interval until ctx ends. A run that fails is logged and
// tried again at the next interval.
func (l *Loop) run(ctx context.Context) {
	log := logr.FromContextOrDiscard(ctx)
	t := time.NewTicker(l.Interval)
	defer t.Stop()
	for {
		if _, err := l.Auditor.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "Audit failed; trying again at the next interval", "interval", l.Interval.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// NeedLeaderElection returns false: the loop holds its own Lease.
func (l *Loop) NeedLeaderElection() bool { return false }
