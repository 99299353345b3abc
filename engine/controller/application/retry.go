package application

import (
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
// computes it: duration x factor^n, at most maxDuration (when positive).
func retryDelay(s v1alpha1.RetryStrategy, n int64) time.Duration {
	d, factor, maxD := defaultRetryDuration, int64(defaultRetryFactor), defaultRetryMaxDuration
	if b := s.Backoff; b != nil {
		d = parseRetryDuration(b.Duration, d)
		if b.Factor != nil {
			factor = *b.Factor
		}
		maxD = parseRetryDuration(b.MaxDuration, maxD)
	}
	delay := float64(d) * math.Pow(float64(factor), float64(n))
	if maxD > 0 && delay > float64(maxD) {
		return maxD
	}
	if delay > float64(math.MaxInt64) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(delay)
}

// parseRetryDuration reads a backoff duration: a Go duration or a number of
// seconds; def when empty or invalid.
func parseRetryDuration(v string, def time.Duration) time.Duration {
	if v == "" {
		return def
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(n) * time.Second
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d
	}
	return def
}

// retryWait is how long the requested operation op must still wait for its
// next retry: the operation state is Running after a failed attempt
// (RetryCount > 0, FinishedAt set) of this same operation. Zero: run now.
func retryWait(st *v1alpha1.OperationState, op *v1alpha1.Operation, now time.Time) time.Duration {
	if st == nil || st.Phase != v1alpha1.OperationRunning || st.RetryCount == 0 || st.FinishedAt == nil || !equalOperations(&st.Operation, op) {
		return 0
	}
	due := st.FinishedAt.Add(retryDelay(op.Retry, st.RetryCount))
	if wait := due.Sub(now); wait > 0 {
		return wait
	}
	return 0
}
