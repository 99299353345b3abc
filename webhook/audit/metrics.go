package audit

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the audit's Prometheus collectors, set at the end of each
// run. Create them with NewMetrics and register them once.
type Metrics struct {
	violations *prometheus.GaugeVec
	objects    *prometheus.GaugeVec
	failures   prometheus.Gauge
	lastRun    prometheus.Gauge
	duration   prometheus.Gauge
	runs       *prometheus.CounterVec
}

// NewMetrics returns unregistered collectors:
//
//   - tollgate_audit_violations{rule,severity}: violations found by the
//     last run
//   - tollgate_audit_objects{result}: objects judged or skipped in the
//     last run
//   - tollgate_audit_failures: kinds and objects that could not be listed
//     or judged in the last run
//   - tollgate_audit_last_run_timestamp_seconds
//   - tollgate_audit_duration_seconds: how long the last run took
//   - tollgate_audit_runs_total{outcome}: runs that ended (ok, or failed
//     when nothing could be audited)
func NewMetrics() *Metrics {
	return &Metrics{
		violations: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tollgate_audit_violations",
			Help: "Violations the last audit found in stored objects, by rule and severity.",
		}, []string{"rule", "severity"}),
		objects: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tollgate_audit_objects",
			Help: "Objects of the last audit, by result (judged, skipped).",
		}, []string{"result"}),
		failures: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tollgate_audit_failures",
			Help: "Kinds, objects and reports the last audit could not list, judge or write.",
		}),
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tollgate_audit_last_run_timestamp_seconds",
			Help: "When the last audit started, in Unix seconds.",
		}),
		duration: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tollgate_audit_duration_seconds",
			Help: "How long the last audit took.",
		}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_audit_runs_total",
			Help: "Audits that ended, by outcome (ok; failed when nothing could be audited).",
		}, []string{"outcome"}),
	}
}

// Register registers the collectors with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.violations, m.objects, m.failures, m.lastRun, m.duration, m.runs} {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("register audit metrics: %w", err)
	}
	return nil
}

// observe records a finished run; nil m records nothing.
func (m *Metrics) observe(res *Result, t *tally) {
	if m == nil {
		return
	}
	m.runs.WithLabelValues("ok").Inc()
	m.violations.Reset()
	for _, n := range t.ns {
		for _, r := range n.results {
			if r.err == nil {
				m.violations.WithLabelValues(r.violation.Rule, string(r.violation.Severity)).Inc()
			}
		}
	}
	m.objects.WithLabelValues("judged").Set(float64(res.Judged))
	m.objects.WithLabelValues("skipped").Set(float64(res.Skipped))
	m.failures.Set(float64(len(res.Failures)))
	m.lastRun.Set(float64(res.Started.Unix()))
	m.duration.Set(res.Duration.Seconds())
}

// failed records a run that audited nothing; nil m records nothing.
func (m *Metrics) failed() {
	if m != nil {
		m.runs.WithLabelValues("failed").Inc()
	}
}
