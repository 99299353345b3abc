package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// listPageSize bounds each LIST response.
const listPageSize = 500

// fetched is the live state of one ref.
type fetched struct {
	// obj is nil when the object does not exist.
	obj *unstructured.Unstructured
	// unknownKind is set when the API server does not serve the kind.
	unknownKind bool
}

// Live returns the live object of each ref, in order: nil for an object
// that does not exist or whose kind the API server does not serve. Refs of
// one kind in one namespace are read with one LIST once there are
// Options.ListThreshold of them, else with one GET each.
func (a *Applier) Live(ctx context.Context, refs []Ref) ([]*unstructured.Unstructured, error) {
	got, err := a.fetch(ctx, refs)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(refs))
	for i, f := range got {
		out[i] = f.obj
	}
	return out, nil
}

// fetchGroup is the refs of one GVK in one namespace.
type fetchGroup struct {
	gvk       schema.GroupVersionKind
	namespace string
	indexes   []int
}

func (a *Applier) fetch(ctx context.Context, refs []Ref) ([]fetched, error) {
	out := make([]fetched, len(refs))
	type groupKey struct {
		gvk       schema.GroupVersionKind
		namespace string
	}
	var groups []*fetchGroup
	byKey := map[groupKey]*fetchGroup{}
	for i, r := range refs {
		k := groupKey{r.GroupVersionKind(), r.Namespace}
		g, ok := byKey[k]
		if !ok {
			g = &fetchGroup{gvk: k.gvk, namespace: k.namespace}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.indexes = append(g.indexes, i)
	}
	for _, g := range groups {
		if len(g.indexes) >= a.opts.ListThreshold {
			listed, err := a.fetchByList(ctx, g, refs, out)
			if err != nil {
				return nil, err
			}
			if listed {
				continue
			}
		}
		for _, i := range g.indexes {
			f, err := a.get(ctx, refs[i])
			if err != nil {
				return nil, err
			}
			out[i] = f
		}
	}
	return out, nil
}

// fetchByList reads a group with LIST. It returns false when listing is
// forbidden, so the caller falls back to GETs.
func (a *Applier) fetchByList(ctx context.Context, g *fetchGroup, refs []Ref, out []fetched) (bool, error) {
	byName := map[string]*unstructured.Unstructured{}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(g.gvk.GroupVersion().WithKind(g.gvk.Kind + "List"))
	opts := []client.ListOption{client.Limit(listPageSize)}
	if g.namespace != "" {
		opts = append(opts, client.InNamespace(g.namespace))
	}
	for {
		err := a.client.List(ctx, list, opts...)
		switch {
		case meta.IsNoMatchError(err):
			for _, i := range g.indexes {
				out[i] = fetched{unknownKind: true}
			}
			return true, nil
		case apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("list %s in namespace %q: %w", g.gvk.Kind, g.namespace, err)
		}
		for i := range list.Items {
			item := &list.Items[i]
			item.SetGroupVersionKind(g.gvk)
			byName[item.GetNamespace()+"/"+item.GetName()] = item
		}
		cont := list.GetContinue()
		if cont == "" {
			break
		}
		opts = append(opts[:1:1], client.Continue(cont))
		if g.namespace != "" {
			opts = append(opts, client.InNamespace(g.namespace))
		}
	}
	for _, i := range g.indexes {
		out[i] = fetched{obj: byName[refs[i].Namespace+"/"+refs[i].Name]}
	}
	return true, nil
}

func (a *Applier) get(ctx context.Context, r Ref) (fetched, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.GroupVersionKind())
	err := a.client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, u)
	switch {
	case err == nil:
		return fetched{obj: u}, nil
	case apierrors.IsNotFound(err):
		return fetched{}, nil
	case meta.IsNoMatchError(err):
		return fetched{unknownKind: true}, nil
	}
	return fetched{}, fmt.Errorf("get %s: %w", r, err)
}
