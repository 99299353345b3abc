package notification

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/go-logr/logr"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/engine/notify"
	"github.com/tollgate-dev/tollgate/internal/appops"
	"github.com/tollgate-dev/tollgate/policies"
)

// ControllerName names the notifications controller.
const ControllerName = "tollgate-notifications"

// Sharder tells a controller replica which Applications are its own when
// several replicas share them; *shard.Membership implements it.
type Sharder interface {
	// Owns reports whether this replica handles the Application of key
	// (namespace/name).
	Owns(key string) bool
}

// Metrics count the notifications' outcomes by service and result (sent;
// failed after every retry; dropped with the queue full);
// *metrics.Metrics implements it.
type Metrics interface {
	Notification(service, result string)
}

// Notifier sends Argo CD's notifications for the Applications of the
// control-plane namespace (and of ApplicationNamespaces), configured by argocd-notifications-cm and
// argocd-notifications-secret (read live): on every change of an
// Application it evaluates the triggers it is subscribed to (by its
// annotations, its AppProject's, or the ConfigMap's subscriptions),
// records what is due in its notified.notifications.argoproj.io annotation
// and hands the notifications to a notify.Dispatcher, which sends them off
// the reconcilers' path with retries. It never writes anything else.
type Notifier struct {
	// ApplicationNamespaces are the other namespaces whose Applications
	// the controller reconciles (--application-namespaces patterns); set
	// before SetupWithManager.
	ApplicationNamespaces []string
	// RepoServer answers repo.GetCommitMetadata and repo.GetAppDetails;
	// nil fails those functions. Set before SetupWithManager.
	RepoServer RepoServer
	// KustomizeBuildOptions, when set, gives argocd-cm's
	// kustomize.buildOptions and ListingMaxAge how old a reference
	// listing may be, as the Application controller renders with them,
	// for repo.GetAppDetails. Set before SetupWithManager.
	KustomizeBuildOptions func() string
	ListingMaxAge         time.Duration

	client    client.Client
	namespace string
	shard     Sharder
	metrics   Metrics
	log       logr.Logger
	dispatch  *notify.Dispatcher

	// config is the parsed configuration, nil when there is none or it
	// does not parse; data and secret are what it was parsed from.
	config atomic.Pointer[notify.Config]
	mu     sync.Mutex
	data   map[string]string
	secret map[string][]byte
}

// New returns a Notifier for the Applications of namespace; shard
// and metrics may be nil.
func New(c client.Client, namespace string, shard Sharder, metrics Metrics, opts notify.DispatcherOptions, log logr.Logger) *Notifier {
	n := &Notifier{client: c, namespace: namespace, shard: shard, metrics: metrics, log: log}
	result := opts.Result
	opts.Result = func(d notify.Due, err error) {
		if n.metrics != nil {
			result := "sent"
			switch {
			case errors.Is(err, notify.ErrQueueFull):
				result = "dropped"
			case err != nil:
				result = "failed"
			}
			n.metrics.Notification(d.Destination.Service, result)
		}
		if result != nil {
			result(d, err)
		}
	}
	n.dispatch = notify.NewDispatcher(opts, log)
	return n
}

// SetupWithManager watches the notifications ConfigMap and Secret of the
// namespace and the Applications, and runs the dispatcher with the manager.
func (n *Notifier) SetupWithManager(ctx context.Context, mgr manager.Manager, cfg *rest.Config) error {
	if err := argocd.WatchNamed(ctx, cfg, "configmaps", n.namespace, notify.ConfigMapName, &corev1.ConfigMap{}, func(o runtime.Object) {
		var data map[string]string
		if cm, ok := o.(*corev1.ConfigMap); ok {
			data = cm.Data
		}
		n.update(&data, nil)
	}); err != nil {
		return err
	}
	if err := argocd.WatchNamed(ctx, cfg, "secrets", n.namespace, notify.SecretName, &corev1.Secret{}, func(o runtime.Object) {
		var data map[string][]byte
		if s, ok := o.(*corev1.Secret); ok {
			data = s.Data
		}
		n.update(nil, &data)
	}); err != nil {
		return err
	}
	if err := mgr.Add(manager.RunnableFunc(n.dispatch.Run)); err != nil {
		return fmt.Errorf("add notification dispatcher: %w", err)
	}
	served := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return v1alpha1.NamespaceEnabled(o.GetNamespace(), n.namespace, n.ApplicationNamespaces)
	})
	err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1alpha1.Application{}, builder.WithPredicates(served)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(n)
	if err != nil {
		return fmt.Errorf("set up notifications controller: %w", err)
	}
	return nil
}

// update parses the configuration again with new ConfigMap or Secret data;
// a configuration that does not parse, or names a service
// notifications-engine cannot build, sends nothing (and is logged), as in
// Argo CD.
func (n *Notifier) update(data *map[string]string, secret *map[string][]byte) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if data != nil {
		n.data = *data
	}
	if secret != nil {
		n.secret = *secret
	}
	if len(n.data) == 0 {
		n.config.Store(nil)
		return
	}
	c, err := notify.Parse(n.data, n.secret)
	if err != nil {
		n.log.Error(err, "Notifications configuration not applied: nothing is sent until it is fixed")
		n.config.Store(nil)
		return
	}
	n.config.Store(c)
}

// Reconcile evaluates one Application's triggers and queues what is due.
func (n *Notifier) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	c := n.config.Load()
	if c == nil || n.shard != nil && !n.shard.Owns(req.String()) {
		return reconcile.Result{}, nil
	}
	var app v1alpha1.Application
	if err := n.client.Get(ctx, req.NamespacedName, &app); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !statusRefreshed(&app) {
		// The sync just ended and the comparison after it has not been
		// written yet: judge the Application once it has.
		return reconcile.Result{}, nil
	}
	appMap, err := policies.ObjectMap(&app, v1alpha1.GroupVersion.String(), v1alpha1.ApplicationKind)
	if err != nil {
		return reconcile.Result{}, err
	}
	var projMap map[string]any
	proj, err := n.project(ctx, &app)
	if err != nil {
		return reconcile.Result{}, err
	}
	if proj != nil {
		if projMap, err = policies.ObjectMap(proj, v1alpha1.GroupVersion.String(), v1alpha1.AppProjectKind); err != nil {
			return reconcile.Result{}, err
		}
	}
	old := app.Annotations[notify.AnnotationNotified]
	repo := &repoCalls{ctx: ctx, reader: n.client, namespace: n.namespace, server: n.RepoServer, app: &app, project: proj, listingMaxAge: n.ListingMaxAge}
	if n.KustomizeBuildOptions != nil {
		repo.kustomizeBuildOptions = n.KustomizeBuildOptions()
	}
	in := notify.Input{App: appMap, Project: projMap, Repo: repo}
	due, state, errs := c.Evaluate(in, notify.ParseState(old), time.Now())
	for _, err := range errs {
		ctrl.LoggerFrom(ctx).Error(err, "Notification not evaluated")
	}
	if next := state.String(); next != old {
		// Recorded before it is sent, so that it goes out once: the
		// dispatcher retries a failing receiver itself.
		if err := n.record(ctx, &app, next); err != nil {
			return reconcile.Result{}, fmt.Errorf("record notifications: %w", err)
		}
	}
	if dropped := n.dispatch.Enqueue(c, due); dropped > 0 {
		return reconcile.Result{}, errors.New("notification queue full: notifications dropped")
	}
	return reconcile.Result{}, nil
}

// project is app's AppProject, nil when there is none or when it does not
// let Applications of app's namespace use it (sourceNamespaces): its
// subscriptions, sourceRepos and credentials are then not app's.
func (n *Notifier) project(ctx context.Context, app *v1alpha1.Application) (*v1alpha1.AppProject, error) {
	proj, err := argocd.Project(ctx, n.namespace, app.ProjectName(), []client.Reader{n.client})
	if err != nil || proj == nil || !proj.IsAppNamespacePermitted(app, n.namespace) {
		return nil, err
	}
	return proj, nil
}

// record sets app's notified annotation to state (removes it when state
// is ""). The write is guarded by the resourceVersion: without it, a merge
// patch that removes an Application's last annotation removes them all,
// and would drop one added meanwhile (a refresh request, the fence of a
// running operation). A lost race is retried on the Application as it is
// now, with the state already decided: evaluating the triggers again could
// miss one that was true only for a moment.
func (n *Notifier) record(ctx context.Context, app *v1alpha1.Application, state string) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		base := app.DeepCopy()
		if state == "" {
			delete(app.Annotations, notify.AnnotationNotified)
		} else {
			metav1.SetMetaDataAnnotation(&app.ObjectMeta, notify.AnnotationNotified, state)
		}
		err := appops.Patch(ctx, n.client, base, app, appops.PatchOptions{Lock: true, MetadataOnly: true})
		if apierrors.IsConflict(err) {
			var now v1alpha1.Application
			if gerr := n.client.Get(ctx, client.ObjectKeyFromObject(app), &now); gerr != nil {
				return gerr
			}
			*app = now
		}
		return err
	})
}

// statusRefreshed reports whether the Application's status reflects its
// last operation: false while the operation finished after the last
// comparison, as Argo CD skips such an Application.
func statusRefreshed(app *v1alpha1.Application) bool {
	st := app.Status.OperationState
	if st == nil || st.FinishedAt == nil || !st.Phase.Completed() {
		return true
	}
	return app.Status.ReconciledAt == nil || !st.FinishedAt.After(app.Status.ReconciledAt.Time)
}
