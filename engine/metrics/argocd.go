package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// appReconcileBuckets are the buckets of argocd_app_reconcile, Argo CD's.
var appReconcileBuckets = []float64{0.25, 0.5, 1, 2, 4, 8, 16}

// argoCD are the collectors that carry Argo CD's application controller
// metric names, labels and label values, so that the dashboards and alerts
// written for Argo CD read tollgate's controller as they read Argo CD's.
// The ones read from the cache at scrape time are NewAppCollector's and
// NewClusterCollector's.
type argoCD struct {
	appSyncs      *prometheus.CounterVec
	appReconcile  *prometheus.HistogramVec
	k8sRequests   *requestCounts
	clusterEvents *prometheus.CounterVec
}

// newArgoCD returns unregistered collectors:
//
//   - argocd_app_sync_total{namespace,name,project,dest_server,phase,dry_run}
//   - argocd_app_reconcile{namespace,dest_server} (histogram)
//   - argocd_app_k8s_request_total{namespace,name,project,server,
//     response_code,verb,resource_kind,resource_namespace,dry_run}
//   - argocd_cluster_events_total{server,group,kind}
func newArgoCD() argoCD {
	return argoCD{
		appSyncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_app_sync_total",
			Help: "Operations of Applications that ended, by phase (Succeeded, Failed, Error) and whether they were dry runs (Argo CD's metric).",
		}, []string{"namespace", "name", "project", "dest_server", "phase", "dry_run"}),
		appReconcile: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "argocd_app_reconcile",
			Help:    "Time to compare one Application with its destination, in seconds (Argo CD's metric; syncs are not included).",
			Buckets: appReconcileBuckets,
		}, []string{"namespace", "dest_server"}),
		k8sRequests: newRequestCounts(),
		clusterEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_cluster_events_total",
			Help: "Changes of live objects (added, updated, deleted) a destination cluster's cache received, by group and kind (Argo CD's metric).",
		}, []string{"server", "group", "kind"}),
	}
}

func (a argoCD) collectors() []prometheus.Collector {
	return []prometheus.Collector{a.appSyncs, a.appReconcile, a.k8sRequests, a.clusterEvents}
}

// AppSynced counts an operation of app that ended in st
// (argocd_app_sync_total): st's phase, and whether its operation was a dry
// run. Operations still running (a retry waiting for its backoff, a sync
// window) are not counted. destServer is the API server URL of app's
// destination.
func (m *Metrics) AppSynced(app *v1alpha1.Application, destServer string, st *v1alpha1.OperationState) {
	if st == nil || !st.Phase.Completed() {
		return
	}
	dryRun := st.Operation.Sync != nil && st.Operation.Sync.DryRun
	m.argo.appSyncs.WithLabelValues(app.Namespace, app.Name, app.ProjectName(), destServer, string(st.Phase), strconv.FormatBool(dryRun)).Inc()
}

// AppReconciled observes one comparison of an Application of namespace
// whose destination is destServer ("" when it was not resolved) in
// argocd_app_reconcile.
func (m *Metrics) AppReconciled(namespace, destServer string, took time.Duration) {
	m.argo.appReconcile.WithLabelValues(namespace, destServer).Observe(took.Seconds())
}

// ClusterEvents returns the counter of the changes of objects of group and
// kind that the cache of the destination server receives
// (argocd_cluster_events_total). Take it once per kind: counting is then
// free of lookups.
func (m *Metrics) ClusterEvents(server, group, kind string) prometheus.Counter {
	return m.argo.clusterEvents.WithLabelValues(server, group, kind)
}
