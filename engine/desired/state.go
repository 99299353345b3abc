// Package desired builds an Application's desired state, the one way the
// Application controller, its Differ (tollgate app diff, the web UI) and
// their tests do: the repo-server request for the Application's sources
// (Builder.Request: credentials matched for its project, the Helm
// repositories and chart dependencies its project permits, the signature
// check its project asks for), the repo-server's answer (Builder.Generate),
// and the final objects (State.Build: decoded, hooks and exclusions
// sorted out, namespaced, tracked). It keeps nothing between calls.
package desired

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

// Objects turns rendered objects into what is applied: namespaced objects
// without a namespace get the destination namespace, cluster-scoped
// objects lose one they should not have, and every object carries the
// Application's tracking metadata for method. Scope comes from the
// destination's REST mapper, or, for kinds it does not serve yet, from the
// CustomResourceDefinitions among the objects and the built-in table.
func Objects(objs []map[string]any, namespace, instance string, method v1alpha1.TrackingMethod, mapper meta.RESTMapper) ([]*unstructured.Unstructured, error) {
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

// Destination is where a desired state goes: what its objects are made
// final for.
type Destination struct {
	// Namespace is the Application's destination namespace.
	Namespace string
	// Mapper is the destination cluster's REST mapper.
	Mapper meta.RESTMapper
	// Managed reports whether the controller manages a kind (argocd-cm's
	// resource exclusions and inclusions); nil manages every kind.
	Managed func(group, kind string) bool
}

// State is the desired state of an Application at some revisions: the
// repo-server's answer, and the objects built from it on first need
// (Build): a comparison that can be reused never needs them.
type State struct {
	// Revisions are the commit SHAs (chart versions), one per source.
	Revisions   []string
	SourceTypes []v1alpha1.ApplicationSourceType
	// RenderKey identifies what was rendered (reposerver.Response.Key).
	RenderKey string
	// Objects are final: namespaced, tracked; set by Build.
	Objects []*unstructured.Unstructured
	// HookWarnings name the hook types and delete policies Argo CD does
	// not know, which are ignored (set by Build).
	HookWarnings []string
	// Excluded name the objects of kinds argocd-cm's resource exclusions
	// or inclusions leave out, which are neither applied nor compared (set
	// by Build).
	Excluded []string

	unbuilt *unbuilt
}

// unbuilt are rendered objects not yet made final.
type unbuilt struct {
	// rendered are JSON documents shared with the render cache; nil when
	// the repo-server answered Unchanged, and load fetches them.
	rendered []json.RawMessage
	load     func(context.Context) ([]json.RawMessage, error)
	instance string
	tracking v1alpha1.TrackingMethod
	dest     Destination
}

// Built reports whether Build has made the objects final.
func (s *State) Built() bool { return s.unbuilt == nil }

// Build decodes the rendered objects and makes them final, once.
func (s *State) Build(ctx context.Context) error {
	u := s.unbuilt
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
	s.HookWarnings, s.Excluded = nil, nil
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
			s.HookWarnings = append(s.HookWarnings, fmt.Sprintf("%s: %s is ignored", plan.Describe(obj), v))
		}
		if gvk := obj.GroupVersionKind(); u.dest.Managed != nil && !u.dest.Managed(gvk.Group, gvk.Kind) {
			s.Excluded = append(s.Excluded, plan.Describe(obj))
			continue
		}
		if !plan.Ignored(obj) {
			decoded = append(decoded, o)
		}
	}
	objs, err := Objects(decoded, u.dest.Namespace, u.instance, u.tracking, u.dest.Mapper)
	if err != nil {
		return err
	}
	s.Objects, s.unbuilt = objs, nil
	return nil
}

// NonHooks returns the desired objects that are not hooks.
func (s *State) NonHooks() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range s.Objects {
		if !plan.IsHook(o) {
			out = append(out, o)
		}
	}
	return out
}

// loader returns a loader of the objects of an Unchanged response: the
// same request at the revisions it answered, without KnownKey. A different
// key in the answer (the cache cannot have changed a commit's render, but
// a repo-server may have been replaced by another version) is an error,
// and the next reconcile starts over.
func (b *Builder) loader(req *reposerver.Request, first *reposerver.Response) func(context.Context) ([]json.RawMessage, error) {
	return func(ctx context.Context) ([]json.RawMessage, error) {
		again := *req
		again.KnownKey = ""
		again.Sources = slices.Clone(req.Sources)
		for i := range again.Sources {
			again.Sources[i].Revision = first.Revisions[i]
		}
		resp, err := b.Generate(ctx, &again)
		if err != nil {
			return nil, err
		}
		if resp.Key != first.Key {
			short := make([]string, len(first.Revisions))
			for i, rev := range first.Revisions {
				short[i] = rev[:min(len(rev), 7)]
			}
			return nil, fmt.Errorf("render of revisions %s changed between two requests; comparing again", strings.Join(short, ","))
		}
		return resp.Objects, nil
	}
}
