package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// verdict is what one health check concludes.
type verdict int

const (
	verdictWait verdict = iota
	verdictDone
	verdictFailed
)

// judge maps a health status to a verdict. Hooks are done when they
// completed (Healthy, or no health assessment at all, as for a ConfigMap
// hook); other objects when they are Healthy, Suspended or have no health.
func judge(hook bool, status string) verdict {
	switch status {
	case HealthDegraded:
		return verdictFailed
	case HealthProgressing, HealthMissing:
		return verdictWait
	case HealthSuspended:
		if hook {
			return verdictWait
		}
		return verdictDone
	}
	return verdictDone
}

// ErrTerminated is the cause (context.Cause) with which the caller cancels
// an operation that is terminated (tollgate app terminate-op, the sync
// timeout); it may be wrapped. Hooks still running then are deleted, as
// Argo CD does, and the objects still pending are failed.
var ErrTerminated = errors.New("operation terminated")

// wait polls the applied items (the hooks only, without all) until each
// is done, one failed, or Options.WaitTimeout passed, telling report the
// items still pending (hooks first) before it starts and after each
// look. Outcomes are recorded on the items; it returns an error only when
// the API server could not be reached or ctx ended.
func (a *Applier) wait(ctx context.Context, items []*item, all bool, report func(pending []*item)) error {
	log := logr.FromContextOrDiscard(ctx)
	pending := make([]*item, 0, len(items))
	for _, it := range items {
		if it.res.Status == ResultSynced && (all || it.task.Hook) {
			pending = append(pending, it)
		}
	}
	// Hooks first: the progress names what the wave waits for most.
	slices.SortStableFunc(pending, func(a, b *item) int { return hookFirst(a) - hookFirst(b) })
	report(pending)
	waitCtx, cancel := a.bounded(ctx)
	defer cancel()
	start := a.opts.Now()
	for {
		refs := make([]Ref, len(pending))
		for i, it := range pending {
			refs[i] = it.ref
		}
		live, err := a.fetch(waitCtx, refs)
		if err != nil {
			if ctx.Err() == nil && waitCtx.Err() != nil {
				a.timedOut(pending, a.opts.Now().Sub(start))
				return nil
			}
			return a.stopped(ctx, pending, fmt.Errorf("wait for health: %w", err))
		}
		next := pending[:0]
		failed := false
		for i, it := range pending {
			switch a.assess(it, live[i].obj) {
			case verdictWait:
				next = append(next, it)
			case verdictFailed:
				failed = true
			}
		}
		pending = next
		report(pending)
		if failed || len(pending) == 0 {
			return nil
		}
		log.V(1).Info("Waiting for health", "pending", len(pending), "first", pending[0].ref.String())
		select {
		case <-ctx.Done():
			return a.stopped(ctx, pending, fmt.Errorf("wait for health: %w", context.Cause(ctx)))
		case <-waitCtx.Done():
			a.timedOut(pending, a.opts.Now().Sub(start))
			return nil
		case <-time.After(a.opts.PollInterval):
		}
	}
}

// terminateTimeout bounds the deletion of running hooks once an operation
// is terminated (its context has ended).
const terminateTimeout = 30 * time.Second

// stopped handles a wait whose ctx ended with err. When the operation was
// terminated (cause ErrTerminated), the pending items fail with the cause
// and pending hooks are deleted, as Argo CD's Terminate does; otherwise
// they are left for the next attempt.
func (a *Applier) stopped(ctx context.Context, pending []*item, err error) error {
	cause := context.Cause(ctx)
	if !errors.Is(cause, ErrTerminated) {
		return err
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), terminateTimeout)
	defer cancel()
	for _, it := range pending {
		it.fail("%v", cause)
		if !it.task.Hook || it.obj == nil {
			continue
		}
		uid := it.obj.GetUID()
		derr := a.client.Delete(dctx, it.obj, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &uid})
		if derr != nil && !apierrors.IsNotFound(derr) {
			it.res.Message += fmt.Sprintf("; delete running hook: %v", derr)
			continue
		}
		it.res.Message += "; running hook deleted"
	}
	return err
}

// assess records the health of one item and returns the verdict.
func (a *Applier) assess(it *item, live *unstructured.Unstructured) verdict {
	status, msg := HealthMissing, "not found after apply"
	if live != nil {
		var err error
		status, msg, err = a.opts.Health(live)
		if err != nil {
			it.res.Health = HealthUnknown
			it.fail("assess health: %v", err)
			return verdictFailed
		}
		it.obj = live
	}
	it.res.Health, it.healthMsg = status, msg
	v := judge(it.task.Hook, status)
	switch v {
	case verdictFailed:
		what := "degraded"
		if it.task.Hook {
			what = "hook failed"
		}
		if msg = strings.TrimSpace(msg); msg != "" {
			what += ": " + msg
		}
		it.fail("%s", what)
	case verdictDone:
		if it.task.Hook {
			it.res.HookPhase = HookSucceeded
		}
	}
	return v
}

// timedOut marks the pending items failed.
func (a *Applier) timedOut(pending []*item, after time.Duration) {
	for _, it := range pending {
		it.fail("timed out after %s waiting to become healthy (last health: %s)", after.Round(time.Second), orStatus(it.healthMsg, it.res.Health))
	}
}

func orStatus(msg, status string) string {
	msg = strings.TrimSpace(msg)
	switch {
	case msg == "" && status == "":
		return "unknown"
	case msg == "":
		return status
	case status == "" || strings.Contains(msg, status):
		return msg
	}
	return status + ": " + msg
}

// hookFirst ranks hooks before other objects.
func hookFirst(it *item) int {
	if it.task.Hook {
		return 0
	}
	return 1
}
