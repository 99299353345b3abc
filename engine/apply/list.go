package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// listConcurrency bounds parallel LIST requests in ListOwned.
const listConcurrency = 4

// skippedResources are listable but never applied by an Application and
// numerous: listing them would only cost.
var skippedResources = map[schema.GroupResource]bool{
	{Group: "", Resource: "events"}:                    true,
	{Group: "events.k8s.io", Resource: "events"}:       true,
	{Group: "", Resource: "componentstatuses"}:         true,
	{Group: "coordination.k8s.io", Resource: "leases"}: true,
}

// ListOwned returns the live objects tracked by the application instance
// app, in every namespace of Options.Scope, as metadata-only objects
// (apiVersion, kind and metadata: enough for Prune and for status); a
// cluster-scoped kind outside the scope is not listed. Pass gvks to
// restrict the search, typically the kinds of the desired objects plus the
// kinds recorded in the Application's status: one paginated LIST per kind
// (per namespace of a namespaced-mode Scope). With no gvks,
// every listable resource type is discovered (cached for
// Options.DiscoveryTTL) and listed. Kinds the API server no longer serves
// are skipped. Objects whose tracking id names another object (copied by
// hand) are not returned. With a tracking method that reads labels, objects
// without a tracking annotation that carry app's instance label are
// returned too (v1alpha1.OwnedBy).
func (a *Applier) ListOwned(ctx context.Context, app string, gvks []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	if app == "" {
		return nil, errors.New("list owned: application is empty")
	}
	if len(gvks) == 0 {
		var err error
		if gvks, err = a.listableKinds(ctx); err != nil {
			return nil, fmt.Errorf("list owned by %s: %w", app, err)
		}
	}
	gvks = uniqueKinds(gvks)
	results := make([][]*unstructured.Unstructured, len(gvks))
	errs := make([]error, len(gvks))
	sem := make(chan struct{}, listConcurrency)
	var wg sync.WaitGroup
	for i, gvk := range gvks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			namespaces, err := a.opts.Scope.ListNamespaces(a.client.RESTMapper(), gvk)
			if meta.IsNoMatchError(err) {
				a.forgetDiscovery() // not served (any more): nothing of it is tracked
				return
			}
			errs[i] = err
			for _, ns := range namespaces {
				objs, err := a.listKind(ctx, app, gvk, ns)
				results[i], errs[i] = append(results[i], objs...), errors.Join(errs[i], err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("list owned by %s: %w", app, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range results {
		out = append(out, r...)
	}
	return out, nil
}

// listKind lists one kind's metadata in namespace ("": all) and keeps
// app's objects.
func (a *Applier) listKind(ctx context.Context, app string, gvk schema.GroupVersionKind, namespace string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	cont := ""
	for {
		err := a.client.List(ctx, list, client.InNamespace(namespace), client.Limit(listPageSize), client.Continue(cont))
		// A kind discovery (or the client's REST mapping) still names
		// after its CustomResourceDefinition was deleted: the mapper
		// says no match, or the API server answers 404 for the whole
		// resource. Either way it holds no objects; discovery is asked
		// again next time.
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			logr.FromContextOrDiscard(ctx).V(1).Info("Kind no longer served, skipped", "kind", gvk.String())
			a.forgetDiscovery()
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			md := &list.Items[i].ObjectMeta
			v, ok := md.Annotations[v1alpha1.AnnotationKeyTrackingID]
			if !strings.HasPrefix(v, app+":") && (ok || md.Labels[v1alpha1.LabelKeyAppInstance] == "") {
				continue // cheap test before the conversion
			}
			u, err := MetadataObject(gvk, md)
			if err != nil {
				return nil, err
			}
			if v1alpha1.OwnedBy(u, app, a.opts.Tracking) {
				out = append(out, u)
			}
		}
		if cont = list.GetContinue(); cont == "" {
			return out, nil
		}
	}
}

// MetadataObject is the metadata-only object md of kind gvk, as ListOwned
// returns them.
func MetadataObject(gvk schema.GroupVersionKind, md *metav1.ObjectMeta) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(md)
	if err != nil {
		return nil, fmt.Errorf("convert metadata of %s %s/%s: %w", gvk.Kind, md.Namespace, md.Name, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": m}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// uniqueKinds drops repeated group/kinds, keeping the first version.
func uniqueKinds(gvks []schema.GroupVersionKind) []schema.GroupVersionKind {
	seen := map[schema.GroupKind]bool{}
	var out []schema.GroupVersionKind
	for _, g := range gvks {
		if !seen[g.GroupKind()] {
			seen[g.GroupKind()] = true
			out = append(out, g)
		}
	}
	return out
}

// forgetDiscovery makes the next listableKinds ask discovery again.
func (a *Applier) forgetDiscovery() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.listable = nil
}

// listableKinds returns every resource type that can be listed, from
// discovery, cached for Options.DiscoveryTTL.
func (a *Applier) listableKinds(ctx context.Context) ([]schema.GroupVersionKind, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.discovery == nil {
		return nil, errors.New("no kinds given and no discovery client (use NewForConfig or set Options.Discovery)")
	}
	now := a.opts.Now()
	if a.listable != nil && now.Sub(a.discoveredAt) < a.opts.DiscoveryTTL {
		return a.listable, nil
	}
	a.discovery.Invalidate()
	lists, err := discovery.ServerPreferredResources(a.discovery)
	if err != nil {
		if !discovery.IsGroupDiscoveryFailedError(err) || len(lists) == 0 {
			return nil, fmt.Errorf("discover resource types: %w", err)
		}
		// Some aggregated API is down: list what can be listed.
		logr.FromContextOrDiscard(ctx).Info("Resource discovery incomplete", "error", err.Error())
	}
	var out []schema.GroupVersionKind
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") ||
				skippedResources[schema.GroupResource{Group: gv.Group, Resource: r.Name}] {
				continue
			}
			out = append(out, gv.WithKind(r.Kind))
		}
	}
	a.listable, a.discoveredAt = out, now
	return out, nil
}
