package notify

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/go-logr/logr"
)

// DispatcherOptions configure a Dispatcher.
type DispatcherOptions struct {
	// Workers is how many notifications are sent at once.
	Workers int
	// Attempts is how many times one notification is tried.
	Attempts int
	// MinBackoff and MaxBackoff bound the wait between two attempts, which
	// doubles from the first to the second.
	MinBackoff, MaxBackoff time.Duration
	// MaxPending bounds the notifications waiting to be sent; past it new
	// ones are dropped (and counted), never blocking the caller.
	MaxPending int
	// Result, when set, is called after each notification with its
	// service, whether it was sent and the last error.
	Result func(d Due, err error)
}

// DefaultDispatcherOptions: 4 workers, 8 attempts from 1 s doubling to at
// most 1 minute apart (about 3 minutes in all), 10,000 pending.
func DefaultDispatcherOptions() DispatcherOptions {
	return DispatcherOptions{Workers: 4, Attempts: 8, MinBackoff: time.Second, MaxBackoff: time.Minute, MaxPending: 10000}
}

// Dispatcher sends notifications off the caller's path: Enqueue never
// waits on a receiver, and a failing receiver is retried with backoff while
// the others are served.
type Dispatcher struct {
	opts  DispatcherOptions
	queue chan job
	log   logr.Logger
}

// job is one notification with the services of the configuration that
// produced it.
type job struct {
	due     Due
	service services.NotificationService
}

// NewDispatcher returns a Dispatcher; Run sends.
func NewDispatcher(opts DispatcherOptions, log logr.Logger) *Dispatcher {
	d := DefaultDispatcherOptions()
	if opts.Workers <= 0 {
		opts.Workers = d.Workers
	}
	if opts.Attempts <= 0 {
		opts.Attempts = d.Attempts
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = d.MinBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(d.MaxBackoff, opts.MinBackoff)
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = d.MaxPending
	}
	return &Dispatcher{opts: opts, queue: make(chan job, opts.MaxPending), log: log}
}

// Enqueue queues the notifications due under c; it returns how many were
// dropped because the queue was full.
func (d *Dispatcher) Enqueue(c *Config, due []Due) int {
	dropped := 0
	for _, n := range due {
		select {
		case d.queue <- job{due: n, service: c.services[n.Destination.Service]}:
		default:
			dropped++
			if d.opts.Result != nil {
				d.opts.Result(n, ErrQueueFull)
			}
		}
	}
	return dropped
}

// ErrQueueFull is the result of a notification Enqueue dropped.
var ErrQueueFull = errors.New("notification queue full")

// Run sends queued notifications until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range d.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-d.queue:
					d.send(ctx, j)
				}
			}
		}()
	}
	wg.Wait()
	return nil
}

// send tries one notification up to Attempts times; an error
// notifications-engine says not to retry (a commit with too many GitHub
// statuses) is not.
func (d *Dispatcher) send(ctx context.Context, j job) {
	wait := d.opts.MinBackoff
	var err error
	for attempt := 1; attempt <= d.opts.Attempts; attempt++ {
		if err = j.service.Send(j.due.Notification, j.due.Destination); err == nil {
			break
		}
		d.log.V(1).Info("Notification not sent", "trigger", j.due.Trigger, "service", j.due.Destination.Service,
			"attempt", attempt, "error", err.Error())
		var tooMany *services.TooManyGitHubCommitStatusesError
		if attempt == d.opts.Attempts || errors.As(err, &tooMany) {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, d.opts.MaxBackoff)
	}
	if err != nil {
		d.log.Error(err, "Notification given up", "trigger", j.due.Trigger, "service", j.due.Destination.Service,
			"recipient", j.due.Destination.Recipient)
	}
	if d.opts.Result != nil {
		d.opts.Result(j.due, err)
	}
}
