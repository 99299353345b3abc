package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/engine/desired"
	"github.com/tollgate-dev/tollgate/engine/health"
	"github.com/tollgate-dev/tollgate/engine/metrics"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "tollgate-engine"

// Evaluator judges inputs; *policies.Evaluator implements it.
type Evaluator = authority.Evaluator

// EventRecorder records Kubernetes events; the recorder of
// manager.GetEventRecorder implements it.
type EventRecorder interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Dependencies are what a Reconciler works with. Client, APIReader, Config,
// Scheme, Evaluator and Manifests are required.
type Dependencies struct {
	// Client reads Applications, AppProjects and Argo CD Secrets of the
	// control-plane namespace (from the manager's cache) and patches
	// Applications.
	Client client.Client
	// APIReader reads objects that are not cached (the SSH known hosts
	// ConfigMap).
	APIReader client.Reader
	// Config reaches the controller's own cluster, the in-cluster
	// destination. Wrap its transport (e.g. with apply.CallCounter) to
	// observe the engine's API calls there.
	Config *rest.Config
	// Scheme knows the built-in types and v1alpha1.
	Scheme    *runtime.Scheme
	Evaluator Evaluator
	// Manifests fetches and renders the Applications' sources: a
	// server.Service in this process, or a reposerver.Client of
	// `tollgate repo-server`s, so that no tenant input is parsed here.
	Manifests reposerver.Generator
	// Recorder records events on Applications; nil records none.
	Recorder EventRecorder
	// Metrics are updated when set; register them yourself.
	Metrics *metrics.Metrics
	// Health judges live objects; nil is the built-in checks
	// (health.Assess). Give one with customizations directories; argocd-cm's
	// checks are added by ApplyArgoCDConfigMap.
	Health *health.Checker
	// Shard, when set, limits the replica to the Applications it owns
	// among the live replicas and fences their operations; nil owns every
	// Application (one replica, or leader election).
	Shard Sharder
}

// Reconciler syncs Argo CD Applications: see the package documentation.
type Reconciler struct {
	client    client.Client
	apiReader client.Reader
	scheme    *runtime.Scheme
	evaluator Evaluator
	manifests reposerver.Generator
	// builder builds desired states (requests, answers, objects).
	builder  *desired.Builder
	recorder EventRecorder
	metrics  *metrics.Metrics
	health   *health.Checker
	// settings are argocd-cm's (ApplyArgoCDConfigMap), health checks
	// included; settingsGen counts their changes.
	settings    atomic.Pointer[Settings]
	settingsGen atomic.Uint64
	opts        Options

	clusters *clusters
	shard    Sharder
	// reconciling is set while the controllers run: not on a replica
	// waiting for leader election, whose metrics list no Application.
	reconciling atomic.Bool

	// locks keep the status and the operation processors from working on
	// one Application at once; statusQueue and operations are their
	// queues.
	locks       keyLocks
	statusQueue queueRef
	operations  queueRef

	mu    sync.Mutex
	memos map[types.NamespacedName]*memo
	// allowed keeps, per Application, the identity (without render or
	// revisions) of the spec and project judgeBeforeFetch last allowed, so
	// an idle resync does not judge the same spec again.
	allowed map[types.NamespacedName]string
	// opQueued holds the Applications whose operation pass is queued and
	// has not started; resyncs schedules the periodic comparisons (see
	// resync.go), once SetupWithManager made it.
	opQueued map[types.NamespacedName]struct{}
	resyncs  workqueue.TypedDelayingInterface[types.NamespacedName]
	// changes carries the Applications whose tracked live objects changed
	// (watchLive) to the controller's queue.
	changes chan event.TypedGenericEvent[*metav1.PartialObjectMetadata]
}

// New returns a Reconciler. It does not start anything; call
// SetupWithManager.
func New(deps Dependencies, opts Options) (*Reconciler, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	switch {
	case deps.Client == nil:
		return nil, errors.New("new reconciler: client is nil")
	case deps.APIReader == nil:
		return nil, errors.New("new reconciler: API reader is nil")
	case deps.Config == nil:
		return nil, errors.New("new reconciler: REST config is nil")
	case deps.Scheme == nil:
		return nil, errors.New("new reconciler: scheme is nil")
	case deps.Evaluator == nil:
		return nil, errors.New("new reconciler: evaluator is nil")
	case deps.Manifests == nil:
		return nil, errors.New("new reconciler: manifest generator is nil")
	}
	if deps.Metrics == nil {
		deps.Metrics = metrics.NewMetrics()
	}
	r := &Reconciler{
		client: deps.Client, apiReader: deps.APIReader, scheme: deps.Scheme,
		evaluator: deps.Evaluator, manifests: deps.Manifests, recorder: deps.Recorder,
		metrics: deps.Metrics, opts: opts, health: deps.Health, shard: deps.Shard,
		memos:    map[types.NamespacedName]*memo{},
		allowed:  map[types.NamespacedName]string{},
		opQueued: map[types.NamespacedName]struct{}{},
		changes:  make(chan event.TypedGenericEvent[*metav1.PartialObjectMetadata], liveChangesBuffer),
	}
	if r.health == nil {
		if r.health, err = health.NewChecker(); err != nil {
			return nil, err
		}
	}
	r.builder = &desired.Builder{
		Namespace: opts.Namespace, Reader: deps.APIReader, Manifests: deps.Manifests, Tracking: opts.TrackingMethod, Rendered: r.countRenders,
	}
	r.clusters = newClusters(deps.Config, r.newCluster)
	return r, nil
}

// judging is how the gate and the authority turn Applications and objects
// into policy inputs.
func (r *Reconciler) judging() authority.Judging {
	return authority.Judging{Evaluator: r.evaluator, Namespace: r.opts.Namespace, ImplicitDefaultProject: r.opts.ImplicitDefaultProject}
}

// CacheOptions restricts the manager's cache to what the engine reads:
// Applications of the control-plane namespace and of appNamespaces (the
// --application-namespaces patterns: literal names are cached alone, a
// glob or a regular expression caches every namespace's, and serves
// filters them), AppProjects of the control-plane namespace, and its
// Secrets labelled argocd.argoproj.io/secret-type (repositories,
// credentials, clusters). Other Secrets are never cached.
func CacheOptions(namespace string, appNamespaces, appSetNamespaces []string) cache.Options {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	inNS := map[string]cache.Config{namespace: {}}
	sel, _ := labels.Parse(SecretTypeLabel)
	// The ApplicationSet controller reads the ApplicationSets it serves and
	// the Applications they generate, so Applications are cached in those
	// namespaces too; the Application controller reconciles those it
	// serves only. (ByObject is keyed by pointer: each type gets exactly
	// one entry.)
	byObject := map[client.Object]cache.ByObject{
		&v1alpha1.AppProject{}: {Namespaces: inNS},
		&corev1.Secret{}:       {Namespaces: inNS, Label: sel},
	}
	apps := map[string]cache.Config{namespace: {}}
	if len(appSetNamespaces) > 0 {
		served := map[string]cache.Config{namespace: {}}
		for _, ns := range appSetNamespaces {
			served[ns] = cache.Config{}
			apps[ns] = cache.Config{}
		}
		byObject[&v1alpha1.ApplicationSet{}] = cache.ByObject{Namespaces: served}
	}
	for _, p := range appNamespaces {
		if strings.ContainsAny(p, `*?[{\/`) {
			apps = nil // every namespace
			break
		}
		apps[p] = cache.Config{}
	}
	byObject[&v1alpha1.Application{}] = cache.ByObject{Namespaces: apps}
	return cache.Options{
		// Nothing reads managedFields; an Application's list every field of
		// its status.
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         byObject,
	}
}

// SetupWithManager registers the controller: it watches the Applications
// it serves (spec, operation, finalizer, deletion and
// refresh annotation changes; its own status writes are ignored) and maps
// AppProject changes to the Applications of the project. It also stops the
// destination clusters' caches when the manager stops. ctx bounds the
// registration only.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr manager.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.Application{}, projectIndex, func(o client.Object) []string {
		app, ok := o.(*v1alpha1.Application)
		if !ok {
			return nil
		}
		return []string{app.ProjectName()}
	}); err != nil {
		return fmt.Errorf("index applications by project: %w", err)
	}
	// The periodic comparisons' schedule (resync.go), of the controllers
	// only: a Reconciler that only diffs starts nothing.
	r.resyncs = workqueue.NewTypedDelayingQueue[types.NamespacedName]()
	// Like the controllers, this runs once the replica leads (with leader
	// election) until the manager stops.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		r.reconciling.Store(true)
		r.runResyncs(ctx)
		r.reconciling.Store(false)
		r.clusters.stop()
		return nil
	})); err != nil {
		return fmt.Errorf("add cluster cache stopper: %w", err)
	}
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == r.opts.Namespace })
	served := predicate.NewPredicateFuncs(func(o client.Object) bool { return r.serves(o.GetNamespace()) })
	err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1alpha1.Application{}, builder.WithPredicates(served, applicationChanged())).
		Watches(&v1alpha1.AppProject{}, handler.EnqueueRequestsFromMapFunc(r.applicationsOfProject),
			builder.WithPredicates(inNamespace, argocd.ProjectChanged())).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.applicationsOfCluster),
			builder.WithPredicates(inNamespace, predicate.NewPredicateFuncs(func(o client.Object) bool {
				return o.GetLabels()[SecretTypeLabel] == SecretTypeCluster
			}), predicate.ResourceVersionChangedPredicate{})).
		WatchesRawSource(r.liveChanges()).
		WatchesRawSource(r.statusQueue.source()).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.StatusProcessors}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up controller: %w", err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named(OperationsControllerName).
		WatchesRawSource(r.operations.source()).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.OperationProcessors}).
		Complete(reconcile.Func(r.reconcileOperation))
	if err != nil {
		return fmt.Errorf("set up operation processors: %w", err)
	}
	if r.shard != nil {
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { return r.followShard(ctx, mgr.GetCache()) })); err != nil {
			return fmt.Errorf("add shard follower: %w", err)
		}
	}
	return nil
}

// serves reports whether the Applications of namespace are the
// controller's: the control-plane namespace's, and those of
// Options.ApplicationNamespaces (Argo CD's application.namespaces).
func (r *Reconciler) serves(namespace string) bool {
	return v1alpha1.NamespaceEnabled(namespace, r.opts.Namespace, r.opts.ApplicationNamespaces)
}

// servedApplications lists the Applications the controller serves from
// the cache, without a copy (they share their maps and slices with it).
func (r *Reconciler) servedApplications(ctx context.Context) ([]v1alpha1.Application, error) {
	var apps v1alpha1.ApplicationList
	if err := r.client.List(ctx, &apps, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	return slices.DeleteFunc(apps.Items, func(a v1alpha1.Application) bool { return !r.serves(a.Namespace) }), nil
}

// applicationsOfCluster maps an Argo CD cluster Secret to the served
// Applications whose destination names its cluster, by server or by name
// (in-cluster too, for a Secret of the in-cluster server): a change of
// its credentials or of what it lets the engine manage (namespaces,
// clusterResources) is compared at once rather than at the next resync.
// An update maps the Secret before and after, so a changed server counts.
func (r *Reconciler) applicationsOfCluster(ctx context.Context, o client.Object) []reconcile.Request {
	s, ok := o.(*corev1.Secret)
	if !ok {
		return nil
	}
	server, name := strings.TrimRight(string(s.Data["server"]), "/"), string(s.Data["name"])
	apps, err := r.servedApplications(ctx)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list applications of cluster", "secret", s.Name)
		return nil
	}
	var out []reconcile.Request
	for _, a := range apps {
		d := a.Spec.Destination
		if server != "" && strings.TrimRight(d.Server, "/") == server || d.Name != "" && (d.Name == name || server == InClusterServer && d.Name == InClusterName) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: a.Namespace, Name: a.Name}})
		}
	}
	return out
}

// projectIndex indexes Applications by the AppProject they use.
const projectIndex = "spec.project"

// applicationsOfProject maps an AppProject to the Applications using it.
func (r *Reconciler) applicationsOfProject(ctx context.Context, o client.Object) []reconcile.Request {
	var apps v1alpha1.ApplicationList
	if err := r.client.List(ctx, &apps, client.MatchingFields{projectIndex: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list applications of project", "project", o.GetName())
		return nil
	}
	out := make([]reconcile.Request, 0, len(apps.Items))
	for _, a := range apps.Items {
		if !r.serves(a.Namespace) {
			continue
		}
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: a.Namespace, Name: a.Name}})
	}
	return out
}

// applicationChanged passes Application events that ask for work: creation,
// deletion, and updates of the spec, the operation, the finalizers, the
// deletion timestamp, the refresh annotation or the deletion approval, and
// a request to terminate the operation. Other status-only updates (the
// controller's own writes) are dropped; without a status subresource they
// change the generation too, so the generation cannot tell.
func applicationChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*v1alpha1.Application)
			n, ok2 := e.ObjectNew.(*v1alpha1.Application)
			if !ok1 || !ok2 {
				return true
			}
			return !equality.Semantic.DeepEqual(o.Spec, n.Spec) ||
				!equality.Semantic.DeepEqual(o.Operation, n.Operation) ||
				!equality.Semantic.DeepEqual(o.Finalizers, n.Finalizers) ||
				!o.DeletionTimestamp.Equal(n.DeletionTimestamp) ||
				(n.Annotations[v1alpha1.AnnotationKeyRefresh] != "" &&
					n.Annotations[v1alpha1.AnnotationKeyRefresh] != o.Annotations[v1alpha1.AnnotationKeyRefresh]) ||
				n.Annotations[v1alpha1.AnnotationKeyDeletionApproved] != o.Annotations[v1alpha1.AnnotationKeyDeletionApproved] ||
				o.SkipReconcile() != n.SkipReconcile() ||
				terminating(n) && !terminating(o)
		},
	}
}

// terminating reports whether app's operation is asked to terminate.
func terminating(app *v1alpha1.Application) bool {
	st := app.Status.OperationState
	return st != nil && st.Phase == v1alpha1.OperationTerminating
}
