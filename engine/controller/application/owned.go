package application

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
)

// trackingIndex indexes the metadata cache by the application instance an
// object's tracking annotation names or, without one, its instance label:
// a comparison finds what its Application tracks among its objects alone,
// as Argo CD's cluster cache does, instead of listing every object of each
// kind in the cluster (which made the first sync of N Applications cost N
// times N).
const trackingIndex = "tollgate.dev/tracking-instance"

// trackingInstance is the value of trackingIndex for o: what listOwned
// asks for, a superset of what v1alpha1.OwnedBy accepts.
func trackingInstance(o client.Object) []string {
	if id, ok := o.GetAnnotations()[v1alpha1.AnnotationKeyTrackingID]; ok {
		app, _, _ := strings.Cut(id, ":")
		return []string{app}
	}
	if l := o.GetLabels()[v1alpha1.LabelKeyAppInstance]; l != "" {
		return []string{l}
	}
	return nil
}

// kindIndex is the tracking index of one kind's informer, added once.
type kindIndex struct {
	mu    sync.Mutex
	added bool
}

// listOwned is apply.Applier.ListOwned answered from the cluster's
// metadata cache for the kinds it holds (gvks must be given): the objects
// tracked by instance under method. Kinds the cache cannot hold, or whose
// informer does not sync in time, are listed from the API server. The
// cache keeps little metadata and may lag the API server by a watch
// event: an object it finds that wanted does not hold (one to prune, whose
// annotations decide how) is read from the API server, and the comparison
// a later event requests (watchLive) sees what the cache did not yet; the
// wanted ones are returned as the cache holds them.
func (c *cluster) listOwned(parent context.Context, instance string, gvks []schema.GroupVersionKind, method v1alpha1.TrackingMethod, wanted func(apply.Ref) bool) ([]*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(parent, fingerprintTimeout)
	defer cancel()
	values := []string{instance}
	if l := v1alpha1.InstanceLabelValue(instance, method); l != instance {
		values = append(values, l)
	}
	var out []*unstructured.Unstructured
	var listed []schema.GroupVersionKind
	var unwanted []apply.Ref
	for _, gvk := range gvks {
		if ns, err := c.scope.ListNamespaces(c.mapper, gvk); err == nil && len(ns) == 0 {
			continue // cluster-scoped, outside the cluster Secret's scope
		}
		objs, err := c.cachedOwned(ctx, gvk, values, instance, method)
		switch {
		case err == nil:
			for _, o := range objs {
				if ref := apply.RefOf(o); wanted(ref) {
					out = append(out, o)
				} else {
					unwanted = append(unwanted, ref)
				}
			}
		case meta.IsNoMatchError(err):
			// Not served (any more): nothing of it is tracked.
		case parent.Err() != nil:
			return nil, parent.Err()
		default:
			if ctx.Err() != nil {
				c.uncached.Store(gvk, true)
			}
			listed = append(listed, gvk)
		}
	}
	if len(unwanted) > 0 {
		live, err := c.auth.Live(parent, unwanted)
		if err != nil {
			return nil, err
		}
		for _, l := range live {
			if l != nil && v1alpha1.OwnedBy(l, instance, method) {
				out = append(out, metadataOnly(l))
			}
		}
	}
	if len(listed) == 0 {
		return out, nil
	}
	more, err := c.auth.ListOwned(parent, instance, listed)
	if err != nil {
		return nil, err
	}
	return append(out, more...), nil
}

// metadataOnly is obj with its apiVersion, kind and metadata alone, as
// ListOwned returns objects.
func metadataOnly(obj *unstructured.Unstructured) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": obj.GetAPIVersion(), "kind": obj.GetKind(), "metadata": obj.Object["metadata"],
	}}
}

// cachedOwned lists the objects of gvk in the cache whose tracking index
// holds one of values and that instance owns.
func (c *cluster) cachedOwned(ctx context.Context, gvk schema.GroupVersionKind, values []string, instance string, method v1alpha1.TrackingMethod) ([]*unstructured.Unstructured, error) {
	if _, bad := c.uncached.Load(gvk); bad {
		return nil, fmt.Errorf("kind %s cannot be cached", gvk.Kind)
	}
	md := &metav1.PartialObjectMetadata{}
	md.SetGroupVersionKind(gvk)
	v, _ := c.indexed.LoadOrStore(gvk, &kindIndex{})
	idx := v.(*kindIndex)
	idx.mu.Lock()
	if !idx.added {
		if err := c.meta.IndexField(ctx, md, trackingIndex, trackingInstance); err != nil {
			idx.mu.Unlock()
			return nil, err
		}
		idx.added = true
	}
	idx.mu.Unlock()
	var out []*unstructured.Unstructured
	for _, value := range values {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.meta.List(ctx, list, client.MatchingFields{trackingIndex: value}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		for i := range list.Items {
			u, err := apply.MetadataObject(gvk, &list.Items[i].ObjectMeta)
			if err != nil {
				return nil, err
			}
			if v1alpha1.OwnedBy(u, instance, method) {
				out = append(out, u)
			}
		}
	}
	return out, nil
}
