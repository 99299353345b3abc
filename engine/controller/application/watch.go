package application

import (
	"context"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
)

// liveChangeDelay is how long after a change of a tracked live object its
// Application is compared: changes made together (one kubectl apply of
// several objects, a sync's own applies) cost one comparison.
const liveChangeDelay = time.Second

// liveChangesBuffer is the capacity of Reconciler.changes; informers wait
// when it is full.
const liveChangesBuffer = 1024

// liveChanges is the source of the reconciles live changes request: one
// GenericEvent per changed object tracked by an Application, naming the
// Application. Each becomes a reconcile after liveChangeDelay.
func (r *Reconciler) liveChanges() source.Source {
	return source.Channel(r.changes, handler.TypedFuncs[*metav1.PartialObjectMetadata, reconcile.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[*metav1.PartialObjectMetadata], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.Object.Namespace, Name: e.Object.Name}}, liveChangeDelay)
		},
	})
}

// watchLive makes changes of the live objects of refs' kinds in cl request
// a comparison of the Application that tracks them. Each kind's metadata
// informer (started by fingerprint, or here) gets one handler per cluster;
// kinds that cannot be cached are left to the resync.
func (r *Reconciler) watchLive(ctx context.Context, cl *cluster, refs []apply.Ref) {
	for _, ref := range refs {
		gvk := ref.GroupVersionKind()
		if _, bad := cl.uncached.Load(gvk); bad {
			continue
		}
		if _, done := cl.watched.LoadOrStore(gvk.GroupKind(), true); done {
			continue
		}
		if err := r.watchKind(ctx, cl, gvk); err != nil {
			cl.watched.Delete(gvk.GroupKind())
			ctrl.LoggerFrom(ctx).V(1).Info("Live changes of this kind show at the next resync", "kind", gvk.String(), "reason", err.Error())
		}
	}
}

func (r *Reconciler) watchKind(ctx context.Context, cl *cluster, gvk schema.GroupVersionKind) error {
	md := &metav1.PartialObjectMetadata{}
	md.SetGroupVersionKind(gvk)
	inf, err := cl.meta.GetInformer(ctx, md, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if !initial {
				r.liveChanged(obj)
			}
		},
		UpdateFunc: func(old, obj any) {
			if liveChange(old, obj) {
				r.liveChanged(obj)
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			r.liveChanged(obj)
		},
	})
	return err
}

// liveChange reports whether an update of a live object may be drift: its
// spec changed (a new generation), it has no generation (ConfigMaps,
// Secrets, RBAC: every write is a change of content), or its tracking
// (annotation or instance label) changed. Status-only writes (a Deployment
// rolling out) are not.
func liveChange(old, obj any) bool {
	o, ok1 := old.(*metav1.PartialObjectMetadata)
	n, ok2 := obj.(*metav1.PartialObjectMetadata)
	if !ok1 || !ok2 {
		return true
	}
	if o.ResourceVersion == n.ResourceVersion {
		return false // a relist
	}
	return n.Generation == 0 || o.Generation != n.Generation ||
		o.Annotations[v1alpha1.AnnotationKeyTrackingID] != n.Annotations[v1alpha1.AnnotationKeyTrackingID] ||
		o.Labels[v1alpha1.LabelKeyAppInstance] != n.Labels[v1alpha1.LabelKeyAppInstance]
}

// liveChanged requests a comparison of the Application tracking obj, if
// any: the one its tracking annotation names or, when it has none and the
// tracking method reads labels, its instance label names.
func (r *Reconciler) liveChanged(obj any) {
	md, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return
	}
	id, tracked := md.Annotations[v1alpha1.AnnotationKeyTrackingID]
	instance, _, ok := strings.Cut(id, ":")
	if !tracked && v1alpha1.ReadsLabel(r.opts.TrackingMethod) {
		instance, ok = md.Labels[v1alpha1.LabelKeyAppInstance], true
	}
	if !ok || instance == "" {
		return
	}
	ns, name := r.opts.Namespace, instance
	if before, after, ok := strings.Cut(instance, "_"); ok {
		// <namespace>_<name>: an Application of another namespace
		// (names and namespaces hold no "_").
		ns, name = before, after
		if !r.serves(ns) {
			return
		}
	}
	r.metrics.LiveChanges.Inc()
	key := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	r.changes <- event.TypedGenericEvent[*metav1.PartialObjectMetadata]{Object: key}
}
