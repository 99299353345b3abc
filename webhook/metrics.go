package webhook

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Decisions, the values of the decision label of
// tollgate_admission_requests_total.
const (
	// DecisionAllowed: judged, no violations.
	DecisionAllowed = "allowed"
	// DecisionWarned: judged and allowed with warnings.
	DecisionWarned = "warned"
	// DecisionDenied: judged and denied.
	DecisionDenied = "denied"
	// DecisionAudited: audit mode, would have been denied.
	DecisionAudited = "audited"
	// DecisionExempt: exempt user, group or namespace.
	DecisionExempt = "exempt"
	// DecisionSkipped: not judged (DELETE of a plain object, CONNECT,
	// sub-resource, metadata- or status-only UPDATE, object being deleted,
	// a kind no rule judges).
	DecisionSkipped = "skipped"
	// DecisionErrored: evaluation or lookup failed; the API server applies
	// the failurePolicy (in audit mode the request is allowed).
	DecisionErrored = "errored"
)

// Metrics are the webhook's Prometheus collectors. Create them with
// NewMetrics and register them once, e.g. with controller-runtime's
// metrics.Registry.
type Metrics struct {
	requests             *prometheus.CounterVec
	duration             prometheus.Histogram
	evaluationErrors     prometheus.Counter
	violations           *prometheus.CounterVec
	tighteningViolations *prometheus.CounterVec
}

// NewMetrics returns unregistered collectors:
//
//   - tollgate_admission_requests_total{kind,operation,decision}
//   - tollgate_admission_duration_seconds (histogram)
//   - tollgate_policy_evaluation_errors_total
//   - tollgate_admission_violations_total{rule,severity,mode}
//   - tollgate_project_tightening_violations_total{rule}
func NewMetrics() *Metrics {
	return &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_admission_requests_total",
			Help: "Admission requests handled, by object kind, operation and decision (allowed, warned, denied, audited, exempt, skipped, errored).",
		}, []string{"kind", "operation", "decision"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tollgate_admission_duration_seconds",
			Help:    "Time to decide one admission request, from decoded request to response.",
			Buckets: prometheus.ExponentialBuckets(0.00025, 2, 15), // 250µs .. ~4s
		}),
		evaluationErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tollgate_policy_evaluation_errors_total",
			Help: "Policy evaluations or cache lookups that failed (or panicked) during admission.",
		}),
		violations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_admission_violations_total",
			Help: "Policy violations found at admission, by rule, severity and mode (in audit mode deny violations are only counted and warned about).",
		}, []string{"rule", "severity", "mode"}),
		tighteningViolations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_project_tightening_violations_total",
			Help: "Existing Applications an admitted AppProject change newly makes violate a rule, by rule.",
		}, []string{"rule"}),
	}
}

// Collectors returns the collectors, for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.duration, m.evaluationErrors, m.violations, m.tighteningViolations}
}

// Register registers every collector with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	var errs []error
	for _, c := range m.Collectors() {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("register webhook metrics: %w", err)
	}
	return nil
}
