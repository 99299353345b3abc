package application

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/engine/metrics"
)

// Collectors returns Argo CD's collectors that read at scrape time:
// argocd_app_info of the Applications this replica reconciles (from the
// manager's cache, uncopied) and argocd_cluster_info,
// argocd_cluster_api_resources and argocd_cluster_api_resource_objects of
// the destination clusters it holds clients of. Register them beside
// Dependencies.Metrics. ctx is their lifetime and carries their logger.
func (r *Reconciler) Collectors(ctx context.Context) []prometheus.Collector {
	return []prometheus.Collector{metrics.NewAppCollector(ctx, replicaApps{r}), metrics.NewClusterCollector(r.clusters)}
}

// replicaApps are the Applications the Reconciler reconciles, for
// argocd_app_info.
type replicaApps struct{ r *Reconciler }

// EachApplication implements metrics.Applications: the Applications the
// controller serves that this replica owns and does not skip, read
// from the cache without a copy, as Reconcile reads them; none while the
// replica does not reconcile (a standby of leader election). Cluster
// Secrets are read only when a destination names its cluster by name.
func (a replicaApps) EachApplication(ctx context.Context, fn func(app *v1alpha1.Application, destServer string)) error {
	r := a.r
	if !r.reconciling.Load() {
		return nil
	}
	apps, err := r.servedApplications(ctx)
	if err != nil {
		return err
	}
	var secrets []corev1.Secret
	listed := false
	for i := range apps {
		app := &apps[i]
		if app.SkipReconcile() || (r.shard != nil && !r.shard.Owns(app.Namespace+"/"+app.Name)) {
			continue
		}
		if app.Spec.Destination.Server == "" && app.Spec.Destination.Name != "" && !listed {
			var list corev1.SecretList
			if err := r.client.List(ctx, &list, client.InNamespace(r.opts.Namespace), client.HasLabels{SecretTypeLabel}, client.UnsafeDisableDeepCopy); err != nil {
				return fmt.Errorf("list cluster secrets: %w", err)
			}
			secrets, listed = list.Items, true
		}
		fn(app, destinationServer(app.Spec.Destination, secrets))
	}
	return nil
}

// EachCluster implements metrics.Clusters: the destination clusters held,
// from memory.
func (cs *clusters) EachCluster(fn func(metrics.ClusterInfo)) {
	cs.mu.Lock()
	infos := make([]metrics.ClusterInfo, 0, len(cs.byName))
	for _, c := range cs.byName {
		info := metrics.ClusterInfo{Server: c.server, Name: c.name}
		if v := c.kubeVersion.last.Load(); v != nil {
			info.Version = *v
		}
		if c.stats != nil {
			info.Kinds, info.Objects = c.stats.kinds.Load(), c.stats.objects.Load()
		}
		infos = append(infos, info)
	}
	cs.mu.Unlock()
	for _, info := range infos {
		fn(info)
	}
}

// informerFactory makes the informers of a destination's metadata cache
// (cache.Options.NewInformer).
type informerFactory = func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer

// cacheStats count what a destination's metadata cache holds and
// receives: the kinds it watches, their objects and, in
// argocd_cluster_events_total, the changes the watches deliver (the
// initial listing of a kind excepted, as Argo CD counts).
type cacheStats struct {
	server  string
	metrics *metrics.Metrics
	kinds   atomic.Int64
	objects atomic.Int64
}

// newInformer makes an informer as client-go does and counts its kind,
// objects and events with one handler of its own.
func (s *cacheStats) newInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	inf := toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	gvk := obj.GetObjectKind().GroupVersionKind()
	events := s.metrics.ClusterEvents(s.server, gvk.Group, gvk.Kind)
	s.kinds.Add(1)
	// Adding a handler fails only on a stopped informer; this one has not
	// started.
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, initial bool) {
			s.objects.Add(1)
			if !initial {
				events.Inc()
			}
		},
		UpdateFunc: func(old, obj any) {
			if resourceVersion(old) != resourceVersion(obj) { // not a resync
				events.Inc()
			}
		},
		DeleteFunc: func(any) {
			s.objects.Add(-1)
			events.Inc()
		},
	})
	return inf
}

func resourceVersion(obj any) string {
	if md, ok := obj.(metav1.Object); ok {
		return md.GetResourceVersion()
	}
	return ""
}

// newCluster builds the clients and the authority of the destination
// server: its requests count in argocd_app_k8s_request_total (as the
// Application of their context's), its cache in the cluster metrics.
func (r *Reconciler) newCluster(ctx context.Context, server string, cfg *rest.Config, scope apply.Scope) (*cluster, error) {
	// ctx, the caches' lifetime, comes from the reconcile that first
	// needed a cluster: their lists and watches are no Application's.
	ctx = metrics.WithoutApplication(ctx)
	cfg.Wrap(r.metrics.KubernetesRequests(server))
	stats := &cacheStats{server: server, metrics: r.metrics}
	c, err := newClusterClients(ctx, cfg, r.scheme, stats.newInformer, authority.Options{
		Apply: apply.Options{
			FieldManager: r.opts.FieldManager,
			Tracking:     r.opts.TrackingMethod,
			Health:       r.assessHealth,
			Scope:        scope,
		},
		Judging: r.judging(),
	})
	if err != nil {
		return nil, err
	}
	c.stats = stats
	return c, nil
}

// observeReconcile observes a status pass over orig in
// argocd_app_reconcile, with the destination the pass resolved, else the
// one the spec names by server ("" by name: Argo CD's best effort too).
func (r *Reconciler) observeReconcile(orig *v1alpha1.Application, p *pass, start time.Time) {
	r.metrics.AppReconciled(orig.Namespace, passServer(orig, p), time.Since(start))
}

// passServer is the destination server of a pass over app (nil: none
// started) for the metrics.
func passServer(app *v1alpha1.Application, p *pass) string {
	if p != nil && p.server != "" {
		return p.server
	}
	return strings.TrimRight(app.Spec.Destination.Server, "/")
}

// operationEnded reports whether the pass ends an operation: app's
// operation state is completed and is not the one orig, as read, holds.
// Such an operation counts in argocd_app_sync_total once written.
func operationEnded(orig, app *v1alpha1.Application) bool {
	st, was := app.Status.OperationState, orig.Status.OperationState
	if st == nil || !st.Phase.Completed() {
		return false
	}
	return was == nil || was.Phase != st.Phase || !was.StartedAt.Equal(&st.StartedAt) || !was.FinishedAt.Equal(st.FinishedAt) || was.Message != st.Message
}
