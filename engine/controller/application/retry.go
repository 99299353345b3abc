package application

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// Argo CD's retry defaults: an automated sync is retried 5 times unless
// spec.syncPolicy.retry says otherwise, waiting 5s x 2^n, at most 3m.
const (
	defaultAutomatedRetryLimit = 5
	defaultRetryDuration       = 5 * time.Second
	defaultRetryFactor         = 2
	defaultRetryMaxDuration    = 3 * time.Minute
)

// automatedRetry is the retry strategy of an automated sync of app.
func automatedRetry(app *v1alpha1.Application) v1alpha1.RetryStrategy {
	if sp := app.Spec.SyncPolicy; sp != nil && sp.Retry != nil {
		return *sp.Retry
	}
	return v1alpha1.RetryStrategy{Limit: defaultAutomatedRetryLimit}
}

// retryAllowed reports whether an operation that failed after count
// retries may be retried again: limit below 0 retries for ever, 0 never.
func retryAllowed(s v1alpha1.RetryStrategy, count int64) bool {
	return s.Limit < 0 || count < s.Limit
}

// retryDelay is the wait before retry n (1 for the first) of s, as Argo CD
// computes it: duration x factor^n, at most maxDuration (when positive). A
// duration that does not parse is Argo CD's error, which ends the
// operation instead of retrying it.
func retryDelay(s v1alpha1.RetryStrategy, n int64) (time.Duration, error) {
	d, factor, maxD := defaultRetryDuration, int64(defaultRetryFactor), defaultRetryMaxDuration
	if b := s.Backoff; b != nil {
		var err error
		if d, err = parseRetryDuration(b.Duration, d); err != nil {
			return 0, err
		}
		if b.Factor != nil {
			factor = *b.Factor
		}
		if maxD, err = parseRetryDuration(b.MaxDuration, maxD); err != nil {
			return 0, err
		}
	}
	delay := float64(d) * math.Pow(float64(factor), float64(n))
	if maxD > 0 && delay > float64(maxD) {
		return maxD, nil
	}
	if delay > float64(math.MaxInt64) {
		return time.Duration(math.MaxInt64), nil
	}
	return time.Duration(delay), nil
}

// parseRetryDuration reads a backoff duration: a number of seconds or a Go
// duration; def when empty. Anything else is Argo CD's error.
func parseRetryDuration(v string, def time.Duration) (time.Duration, error) {
	if v == "" {
		return def, nil
	}
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d, nil
	}
	return 0, fmt.Errorf("unable to parse %s as a duration", v)
}

// retryWait is how long the requested operation op must still wait for its
// next retry: the operation state is Running after a failed attempt
// (RetryCount > 0, FinishedAt set) of this same operation. Zero: run now.
func retryWait(st *v1alpha1.OperationState, op *v1alpha1.Operation, now time.Time) time.Duration {
	if st == nil || st.Phase != v1alpha1.OperationRunning || st.RetryCount == 0 || st.FinishedAt == nil || !equalOperations(&st.Operation, op) {
		return 0
	}
	// The strategy is the one whose delay put the operation in this
	// state, so it parses.
	delay, _ := retryDelay(op.Retry, st.RetryCount)
	due := st.FinishedAt.Add(delay)
	if wait := due.Sub(now); wait > 0 {
		return wait
	}
	return 0
}
