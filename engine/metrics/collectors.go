package metrics

import (
	"context"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// collectTimeout bounds one scrape's read of the Applications (a cache
// that has not synced yet waits for it), as Argo CD bounds its own.
const collectTimeout = 10 * time.Second

var (
	descAppInfo = prometheus.NewDesc("argocd_app_info",
		"Information about an Application: its sync and health status, destination, repository, automation and operation (Argo CD's metric).",
		[]string{"namespace", "name", "project", "autosync_enabled", "repo", "dest_server", "dest_namespace", "sync_status", "health_status", "operation"}, nil)
	descClusterInfo = prometheus.NewDesc("argocd_cluster_info",
		"Information about a destination cluster the controller holds clients of (Argo CD's metric).",
		[]string{"server", "k8s_version", "name"}, nil)
	descClusterAPIs = prometheus.NewDesc("argocd_cluster_api_resources",
		"Kinds of a destination cluster whose objects the controller's cache watches (Argo CD's metric).",
		[]string{"server"}, nil)
	descClusterObjects = prometheus.NewDesc("argocd_cluster_api_resource_objects",
		"Objects in the controller's cache of a destination cluster (Argo CD's metric).",
		[]string{"server"}, nil)
)

// Applications are the Applications a controller replica reconciles, read
// at scrape time.
type Applications interface {
	// EachApplication calls fn with each Application this replica
	// reconciles and the API server URL of its destination ("" when it
	// names no known cluster). app is the cache's own: fn only reads it,
	// and does not keep it.
	EachApplication(ctx context.Context, fn func(app *v1alpha1.Application, destServer string)) error
}

// NewAppCollector returns the collector of argocd_app_info: one series per
// Application apps lists at scrape time, as Argo CD's controller reports
// the Applications it processes. ctx is the collector's lifetime and
// carries its logger.
func NewAppCollector(ctx context.Context, apps Applications) prometheus.Collector {
	return &appCollector{ctx: ctx, apps: apps}
}

type appCollector struct {
	// ctx is the lifetime of the collector: a scrape has no context.
	ctx  context.Context
	apps Applications
}

// Describe implements prometheus.Collector.
func (c *appCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descAppInfo }

// Collect implements prometheus.Collector.
func (c *appCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(c.ctx, collectTimeout)
	defer cancel()
	err := c.apps.EachApplication(ctx, func(app *v1alpha1.Application, destServer string) {
		ch <- prometheus.MustNewConstMetric(descAppInfo, prometheus.GaugeValue, 1, appInfo(app, destServer)...)
	})
	if err != nil {
		logr.FromContextOrDiscard(c.ctx).Error(err, "Collect argocd_app_info")
	}
}

// appInfo returns the label values of app's argocd_app_info, in
// descAppInfo's order, spelled as Argo CD spells them.
func appInfo(app *v1alpha1.Application, destServer string) []string {
	operation := ""
	switch {
	case app.DeletionTimestamp != nil:
		operation = "delete"
	case app.Operation != nil && app.Operation.Sync != nil:
		operation = "sync"
	}
	syncStatus := app.Status.Sync.Status
	if syncStatus == "" {
		syncStatus = v1alpha1.SyncStatusCodeUnknown
	}
	healthStatus := app.Status.Health.Status
	if healthStatus == "" {
		healthStatus = v1alpha1.HealthStatusUnknown
	}
	autoSync := app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.Automated.IsEnabled()
	return []string{
		app.Namespace, app.Name, app.ProjectName(), strconv.FormatBool(autoSync), repoLabel(app), destServer,
		app.Spec.Destination.Namespace, string(syncStatus), string(healthStatus), operation,
	}
}

// repoLabel is the repository of app's first source, normalized as
// tollgate matches repositories (no credentials, no ".git"); a Helm
// repository that is not a Git URL keeps its address, credentials
// redacted.
func repoLabel(app *v1alpha1.Application) string {
	var raw string
	switch {
	case app.Spec.HasMultipleSources():
		raw = app.Spec.Sources[0].RepoURL
	case app.Spec.Source != nil:
		raw = app.Spec.Source.RepoURL
	}
	if norm := reposerver.NormalizeURL(raw); norm != "" {
		return norm
	}
	return reposerver.RedactURL(raw)
}

// ClusterInfo is what the controller knows of one destination cluster.
type ClusterInfo struct {
	// Server is the API server URL Applications name it by; Name the name
	// of its cluster Secret (in-cluster for the controller's own).
	Server, Name string
	// Version is its Kubernetes version as last read ("v1.33.2"), "" when
	// not read yet.
	Version string
	// Kinds are the kinds the controller's cache of it watches; Objects
	// the objects it holds.
	Kinds, Objects int64
}

// Clusters are the destination clusters a controller replica holds
// clients of.
type Clusters interface {
	// EachCluster calls fn with each cluster. It reads memory only.
	EachCluster(fn func(ClusterInfo))
}

// NewClusterCollector returns the collector of argocd_cluster_info,
// argocd_cluster_api_resources and argocd_cluster_api_resource_objects of
// the clusters listed at scrape time.
func NewClusterCollector(clusters Clusters) prometheus.Collector {
	return &clusterCollector{clusters: clusters}
}

type clusterCollector struct{ clusters Clusters }

// Describe implements prometheus.Collector.
func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descClusterInfo
	ch <- descClusterAPIs
	ch <- descClusterObjects
}

// Collect implements prometheus.Collector.
func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	c.clusters.EachCluster(func(info ClusterInfo) {
		ch <- prometheus.MustNewConstMetric(descClusterInfo, prometheus.GaugeValue, 1, info.Server, k8sVersion(info.Version), info.Name)
		ch <- prometheus.MustNewConstMetric(descClusterAPIs, prometheus.GaugeValue, float64(info.Kinds), info.Server)
		ch <- prometheus.MustNewConstMetric(descClusterObjects, prometheus.GaugeValue, float64(info.Objects), info.Server)
	})
}

// k8sVersion spells a server's version as Argo CD does: "v" and
// major.minor.patch, without a vendor's suffix ("v1.29.3-gke.100" is
// "v1.29.3").
func k8sVersion(gitVersion string) string {
	v, err := version.ParseGeneric(gitVersion)
	if err != nil {
		return gitVersion
	}
	return "v" + v.String()
}
