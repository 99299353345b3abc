// Package metrics owns the controllers' Prometheus collectors: tollgate's
// own (tollgate_engine_*) and Argo CD's application controller metrics
// under Argo CD's names, labels and label values (argocd_*), so that the
// dashboards and alerts written for Argo CD keep working. The collectors
// of Argo CD's that read the cache at scrape time take what they read
// through small interfaces (Applications, Clusters) that the Application
// controller implements.
package metrics

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Sync results, the values of the result label of tollgate_engine_syncs_total.
const (
	SyncResultSucceeded = "succeeded"
	SyncResultFailed    = "failed"
	// SyncResultDenied: the policies denied the desired state; nothing was
	// applied.
	SyncResultDenied = "denied"
)

// Metrics are the controllers' Prometheus collectors. Create them with
// NewMetrics and register them once, e.g. with controller-runtime's
// metrics.Registry.
type Metrics struct {
	Syncs      *prometheus.CounterVec
	Duration   prometheus.Histogram
	ApplyCalls prometheus.Counter
	Renders    *prometheus.CounterVec
	Compares   *prometheus.CounterVec
	Webhooks   *prometheus.CounterVec
	// liveChanges counts changes of tracked live objects that requested a
	// comparison.
	LiveChanges prometheus.Counter
	// shardApplications, shardMembers and shardMember describe the shard
	// of this replica (with sharding).
	shardApplications prometheus.Gauge
	shardMembers      prometheus.Gauge
	shardMember       *prometheus.GaugeVec
	// notifications counts notifications by service and result.
	notifications *prometheus.CounterVec
	// argo are Argo CD's metrics (argocd.go).
	argo argoCD
}

// NewMetrics returns unregistered collectors:
//
//   - tollgate_engine_syncs_total{result} (succeeded, failed, denied)
//   - tollgate_engine_reconcile_duration_seconds (histogram)
//   - tollgate_engine_apply_calls_total: server-side apply requests made by
//     syncs (dry runs of comparisons excluded)
//   - tollgate_engine_renders_total{cache} (hit, miss)
//   - tollgate_engine_compares_total{mode} (full, reused)
//   - tollgate_engine_webhook_requests_total{result}
//   - tollgate_engine_live_changes_total: changes of tracked live objects
//     that requested a comparison (self-heal from watches)
//   - tollgate_engine_shard_applications: Applications this replica owns
//   - tollgate_engine_shard_members: live controller replicas sharing them
//   - tollgate_engine_shard_member{member}: 1 for each live replica
//   - tollgate_engine_notifications_total{service,result} (sent, failed,
//     dropped)
//
// and Argo CD's, under its names: argocd_app_sync_total,
// argocd_app_reconcile, argocd_app_k8s_request_total and
// argocd_cluster_events_total (the rest, read at scrape time, are
// NewAppCollector's and NewClusterCollector's).
func NewMetrics() *Metrics {
	return &Metrics{
		Syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_engine_syncs_total",
			Help: "Sync operations run, by result (succeeded, failed, denied by policy).",
		}, []string{"result"}),
		Duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tollgate_engine_reconcile_duration_seconds",
			Help:    "Time to reconcile one Application, syncs included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18), // 1ms .. ~2m
		}),
		ApplyCalls: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tollgate_engine_apply_calls_total",
			Help: "Objects applied (server-side apply requests) by syncs.",
		}),
		Renders: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_engine_renders_total",
			Help: "Application sources rendered, by render cache outcome (hit, miss).",
		}, []string{"cache"}),
		Compares: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_engine_compares_total",
			Help: "Comparisons of desired and live state, by mode (full: server-side dry run; reused: nothing changed since the last one).",
		}, []string{"mode"}),
		Webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_engine_webhook_requests_total",
			Help: "Git push webhook requests, by result (refreshed, ignored, unauthorized, invalid, error).",
		}, []string{"result"}),
		LiveChanges: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tollgate_engine_live_changes_total",
			Help: "Changes of live objects tracked by an Application (spec, tracking or deletion) that requested its comparison.",
		}),
		shardApplications: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tollgate_engine_shard_applications",
			Help: "Applications this controller replica owns (with --sharding dynamic).",
		}),
		shardMembers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tollgate_engine_shard_members",
			Help: "Live controller replicas sharing the Applications (with --sharding dynamic).",
		}),
		shardMember: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tollgate_engine_shard_member",
			Help: "1 for each live controller replica, by name, as this replica sees them.",
		}, []string{"member"}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_engine_notifications_total",
			Help: "Notifications, by service name and result (sent; failed after every retry; dropped with the queue full).",
		}, []string{"service", "result"}),
		argo: newArgoCD(),
	}
}

// Notification counts one notification's outcome: sent, failed or
// dropped.
func (m *Metrics) Notification(service, result string) {
	m.notifications.WithLabelValues(service, result).Inc()
}

// Webhook counts one Git push webhook request by result.
func (m *Metrics) Webhook(result string) {
	m.Webhooks.WithLabelValues(result).Inc()
}

// SetShard records the shard's members and the Applications owned.
func (m *Metrics) SetShard(members []string, owned int) {
	m.shardApplications.Set(float64(owned))
	m.shardMembers.Set(float64(len(members)))
	m.shardMember.Reset()
	for _, name := range members {
		m.shardMember.WithLabelValues(name).Set(1)
	}
}

// Collectors returns the collectors, for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	return append([]prometheus.Collector{m.Syncs, m.Duration, m.ApplyCalls, m.Renders, m.Compares, m.Webhooks, m.LiveChanges,
		m.shardApplications, m.shardMembers, m.shardMember, m.notifications}, m.argo.collectors()...)
}

// Register registers every collector with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return RegisterAll(reg, m.Collectors()...)
}

// RegisterAll registers every collector of cs with reg, e.g. the
// Application controller's Collectors.
func RegisterAll(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	var errs []error
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("register engine metrics: %w", err)
	}
	return nil
}
