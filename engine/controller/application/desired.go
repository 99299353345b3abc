package application

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// desiredObjects turns rendered objects into what is applied: namespaced
// objects without a namespace get the destination namespace,
// cluster-scoped objects lose one they should not have, and every object
// carries the Application's tracking metadata for method. Scope comes from the
// destination's REST mapper, or, for kinds it does not serve yet, from the
// CustomResourceDefinitions among the objects and the built-in table.
func desiredObjects(objs []map[string]any, namespace, instance string, method v1alpha1.TrackingMethod, mapper meta.RESTMapper) ([]*unstructured.Unstructured, error) {
	var crds []map[string]any
	for _, o := range objs {
		if u := (&unstructured.Unstructured{Object: o}); u.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
			crds = append(crds, o)
		}
	}
	scopes := policies.NewScopes(crds...)
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for i, o := range objs {
		u := &unstructured.Unstructured{Object: o}
		gvk := u.GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			return nil, fmt.Errorf("rendered object %d (%s): apiVersion and kind must be set", i+1, u.GetName())
		}
		if u.GetName() == "" && u.GetGenerateName() == "" {
			return nil, fmt.Errorf("rendered object %d (%s): metadata.name must be set", i+1, gvk.Kind)
		}
		namespaced := !scopes.ClusterScoped(gvk.Group, gvk.Kind)
		if m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			namespaced = m.Scope.Name() == meta.RESTScopeNameNamespace
		}
		switch {
		case namespaced && u.GetNamespace() == "":
			u.SetNamespace(namespace)
		case !namespaced && u.GetNamespace() != "":
			u.SetNamespace("")
		}
		if namespaced && u.GetNamespace() == "" {
			return nil, fmt.Errorf("%s: namespaced object without a namespace, and the application has no destination namespace", plan.Describe(u))
		}
		if !plan.IsHook(u) || u.GetName() != "" {
			v1alpha1.SetTracking(u, instance, method)
		}
		out = append(out, u)
	}
	return out, nil
}

// desired is the desired state of an Application at some revisions.
type desired struct {
	// revisions are the commit SHAs, one per source.
	revisions []string
	// objects are final: namespaced, tracked. They are built from the
	// rendered objects on first need (build): an idle resync that reuses
	// its last comparison never needs them.
	objects     []*unstructured.Unstructured
	sourceTypes []v1alpha1.ApplicationSourceType
	renderKey   string
	// hookWarnings name the hook types and delete policies Argo CD does
	// not know, which are ignored (set by build).
	hookWarnings []string
	// excluded name the objects of kinds argocd-cm's resource exclusions
	// or inclusions leave out, which are neither applied nor compared (set
	// by build).
	excluded []string
	// identity hashes what the comparison depends on besides the live
	// objects (see memo.identity).
	identity string
	// unbuilt, when not nil, is what build turns into objects.
	unbuilt *unbuiltObjects
}

// unbuiltObjects are rendered objects not yet made final.
type unbuiltObjects struct {
	// rendered are JSON documents shared with the render cache; nil when
	// the repo-server answered Unchanged, and load fetches them.
	rendered            []json.RawMessage
	load                func(context.Context) ([]json.RawMessage, error)
	namespace, instance string
	// tracking is the engine's tracking method; empty means annotation.
	tracking v1alpha1.TrackingMethod
	mapper   meta.RESTMapper
	// managed reports whether the engine manages a kind (argocd-cm's
	// resource exclusions and inclusions); nil manages every kind.
	managed func(group, kind string) bool
}

// build decodes the rendered objects and makes them final, once.
func (d *desired) build(ctx context.Context) error {
	u := d.unbuilt
	if u == nil {
		return nil
	}
	if u.rendered == nil && u.load != nil {
		rendered, err := u.load(ctx)
		if err != nil {
			return err
		}
		u.rendered = rendered
	}
	decoded := make([]map[string]any, 0, len(u.rendered))
	d.hookWarnings, d.excluded = nil, nil
	for i, data := range u.rendered {
		var o map[string]any
		// util/json keeps integers int64, as the renderer made them.
		if err := utiljson.Unmarshal(data, &o); err != nil {
			return fmt.Errorf("decode rendered object %d: %w", i+1, err)
		}
		// Objects Argo CD leaves out (hook Skip, or no hook type it
		// knows) are neither applied, compared nor judged.
		obj := &unstructured.Unstructured{Object: o}
		for _, v := range plan.UnknownHookValues(obj) {
			d.hookWarnings = append(d.hookWarnings, fmt.Sprintf("%s: %s is ignored", plan.Describe(obj), v))
		}
		if gvk := obj.GroupVersionKind(); u.managed != nil && !u.managed(gvk.Group, gvk.Kind) {
			d.excluded = append(d.excluded, plan.Describe(obj))
			continue
		}
		if !plan.Ignored(obj) {
			decoded = append(decoded, o)
		}
	}
	objs, err := desiredObjects(decoded, u.namespace, u.instance, u.tracking, u.mapper)
	if err != nil {
		return err
	}
	d.objects, d.unbuilt = objs, nil
	return nil
}

// nonHooks returns the desired objects that are not hooks.
func (d *desired) nonHooks() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range d.objects {
		if !plan.IsHook(o) {
			out = append(out, o)
		}
	}
	return out
}

// desiredState asks for the rendered sources. The objects are built at
// once when the Application's last comparison cannot be reused anyway (no
// memo of this identity, or an operation is requested), so that a render
// that cannot be applied fails here; otherwise on first need. A request
// names the render key of the Application's memo, so that an idle resync
// gets no objects back when nothing changed.
func (r *Reconciler) desiredState(ctx context.Context, p *pass, tg *target) (*desired, error) {
	listingMaxAge := r.opts.ListingMaxAge
	if tg.refresh || tg.op != nil {
		listingMaxAge = 0
	}
	req, err := r.manifestRequest(ctx, tg, listingMaxAge)
	if err != nil {
		return nil, err
	}
	req.KnownKey = r.memoRenderKey(p.key)
	resp, err := r.generate(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := checkSignatures(req, resp); err != nil {
		return nil, err
	}
	d := &desired{
		sourceTypes: resp.SourceTypes, renderKey: resp.Key, revisions: resp.Revisions,
		unbuilt: &unbuiltObjects{rendered: resp.Objects, namespace: p.app.Spec.Destination.Namespace, instance: p.instance, tracking: r.opts.TrackingMethod, mapper: tg.cluster.mapper,
			managed: r.managed(tg.cluster.server)},
	}
	if resp.Unchanged {
		d.unbuilt.load = r.loadObjects(req, resp)
	}
	// A change of argocd-cm's settings judges the live objects again, as a
	// new render would.
	key := fmt.Sprintf("%s\x00settings-%d", d.renderKey, r.settingsGen.Load())
	if d.identity, err = identity(tg.app, tg.project, key, d.revisions); err != nil {
		return nil, err
	}
	if tg.op != nil || r.recall(p.key, d.identity) == nil {
		if err := d.build(ctx); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// generate calls the repo-server and counts renders.
func (r *Reconciler) generate(ctx context.Context, req *reposerver.Request) (*reposerver.Response, error) {
	resp, err := r.manifests.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(resp.Revisions) != len(req.Sources) || len(resp.SourceTypes) != len(req.Sources) {
		return nil, fmt.Errorf("repo-server answered %d revisions and %d source types for %d sources", len(resp.Revisions), len(resp.SourceTypes), len(req.Sources))
	}
	r.metrics.Renders.WithLabelValues("hit").Add(float64(resp.Cached))
	r.metrics.Renders.WithLabelValues("miss").Add(float64(resp.Rendered))
	return resp, nil
}

// loadObjects returns a loader of the objects of an Unchanged response:
// the same request at the revisions it answered, without KnownKey. A
// different key in the answer (the cache cannot have changed a commit's
// render, but a repo-server may have been replaced by another version) is
// an error, and the next reconcile starts over.
func (r *Reconciler) loadObjects(req *reposerver.Request, first *reposerver.Response) func(context.Context) ([]json.RawMessage, error) {
	return func(ctx context.Context) ([]json.RawMessage, error) {
		again := *req
		again.KnownKey = ""
		again.Sources = slices.Clone(req.Sources)
		for i := range again.Sources {
			again.Sources[i].Source.TargetRevision = first.Revisions[i]
		}
		resp, err := r.generate(ctx, &again)
		if err != nil {
			return nil, err
		}
		if resp.Key != first.Key {
			return nil, fmt.Errorf("render of revisions %s changed between two requests; comparing again", strings.Join(shortSHAs(first.Revisions), ","))
		}
		return resp.Objects, nil
	}
}
