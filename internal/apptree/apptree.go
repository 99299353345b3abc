// Package apptree builds an Application's resource tree from the live
// cluster, as Argo CD's resource tree shows it (argocd app get -o tree,
// argocd app resources): the live objects of the Application's
// status.resources and, under each, the objects that name it first in
// their ownerReferences (a Deployment's ReplicaSets, their Pods), read
// with whatever rights the caller's client has.
//
// Argo CD's API server answers from its cluster cache, which watches every
// kind; a tree read on demand cannot list every kind of a namespace
// cheaply, so children are searched among ChildKinds only. A resource of
// status.resources that does not exist live is not in the tree, as in
// Argo CD.
package apptree

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// ChildKinds are the kinds searched for children by default: those whose
// objects Kubernetes' own controllers create with an owner reference.
var ChildKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Group: "apps", Version: "v1", Kind: "ControllerRevision"},
	{Group: "", Version: "v1", Kind: "Pod"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"},
}

// maxDepth bounds how deep children are searched (Argo CD's deepest usual
// chain, CronJob -> Job -> Pod, is three).
const maxDepth = 8

// Node is one live object of the tree.
type Node struct {
	Group, Version, Kind, Namespace, Name string
	UID                                   types.UID
	CreatedAt                             time.Time
	// Managed is set for the resources of status.resources.
	Managed bool
	// Health is the object's health as Options.Health judges it; for a
	// managed resource, the one status.resources records.
	Health, HealthMessage string
	Children              []*Node
}

// Tree is the resource tree of one Application.
type Tree struct {
	// Roots are the live managed resources, in status.resources' order.
	Roots []*Node
	// Warnings name the kinds that could not be searched for children
	// (not served, or not permitted to the caller).
	Warnings []string
}

// Options say how a tree is built.
type Options struct {
	// ChildKinds are searched for children; nil searches none.
	ChildKinds []schema.GroupVersionKind
	// Health judges a child's health; nil leaves it empty.
	Health func(*unstructured.Unstructured) (status, message string)
}

// DefaultOptions search ChildKinds, without a health judge.
func DefaultOptions() Options {
	return Options{ChildKinds: ChildKinds}
}

// Build reads the live objects of app's status.resources with c, then
// their children among opts.ChildKinds in the namespaces of the managed
// resources.
func Build(ctx context.Context, c client.Client, app *v1alpha1.Application, opts Options) (*Tree, error) {
	t := &Tree{}
	seen := map[types.UID]bool{}
	namespaces := map[string]bool{}
	for _, r := range app.Status.Resources {
		obj, err := getLive(ctx, c, r)
		if err != nil {
			return nil, err
		}
		if obj == nil || seen[obj.GetUID()] {
			continue
		}
		seen[obj.GetUID()] = true
		n := nodeOf(obj)
		n.Managed = true
		if r.Health != nil {
			n.Health, n.HealthMessage = string(r.Health.Status), r.Health.Message
		}
		t.Roots = append(t.Roots, n)
		if obj.GetNamespace() != "" {
			namespaces[obj.GetNamespace()] = true
		}
	}
	if len(t.Roots) == 0 || len(opts.ChildKinds) == 0 {
		return t, nil
	}
	byOwner, warnings, err := listChildren(ctx, c, sortedKeys(namespaces), opts)
	if err != nil {
		return nil, err
	}
	t.Warnings = warnings
	var attach func(n *Node, depth int)
	attach = func(n *Node, depth int) {
		if depth >= maxDepth {
			return
		}
		for _, child := range byOwner[n.UID] {
			if seen[child.UID] {
				continue
			}
			seen[child.UID] = true
			n.Children = append(n.Children, child)
			attach(child, depth+1)
		}
	}
	for _, r := range t.Roots {
		attach(r, 0)
	}
	return t, nil
}

// getLive reads the live object of r; nil when it does not exist.
func getLive(ctx context.Context, c client.Client, r v1alpha1.ResourceStatus) (*unstructured.Unstructured, error) {
	gvk := schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
	if gvk.Version == "" {
		m, err := c.RESTMapper().RESTMapping(gvk.GroupKind())
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("map %s: %w", gvk.GroupKind(), err)
		}
		gvk = m.GroupVersionKind
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	err := c.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, obj)
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get %s %s: %w", describe(r.Kind, r.Namespace, r.Name), gvk.GroupKind(), err)
	}
	return obj, nil
}

// listChildren lists opts.ChildKinds in namespaces and indexes them by
// the UID of their first owner, sorted by kind and name.
func listChildren(ctx context.Context, c client.Client, namespaces []string, opts Options) (map[types.UID][]*Node, []string, error) {
	byOwner := map[types.UID][]*Node{}
	var warnings []string
	for _, gvk := range opts.ChildKinds {
		for _, ns := range namespaces {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			err := c.List(ctx, list, client.InNamespace(ns))
			if meta.IsNoMatchError(err) {
				warnings = append(warnings, fmt.Sprintf("%s is not served: not searched for children", gvk.GroupKind()))
				break
			}
			if apierrors.IsForbidden(err) {
				warnings = append(warnings, fmt.Sprintf("%s in %s: not permitted to list, not searched for children", gvk.GroupKind(), ns))
				continue
			}
			if err != nil {
				return nil, nil, fmt.Errorf("list %s in %s: %w", gvk.GroupKind(), ns, err)
			}
			for i := range list.Items {
				obj := &list.Items[i]
				refs := obj.GetOwnerReferences()
				if len(refs) == 0 {
					continue
				}
				n := nodeOf(obj)
				if opts.Health != nil {
					n.Health, n.HealthMessage = opts.Health(obj)
				}
				byOwner[refs[0].UID] = append(byOwner[refs[0].UID], n)
			}
		}
	}
	for _, children := range byOwner {
		slices.SortFunc(children, func(a, b *Node) int {
			return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Name, b.Name))
		})
	}
	return byOwner, warnings, nil
}

func nodeOf(obj *unstructured.Unstructured) *Node {
	gvk := obj.GroupVersionKind()
	return &Node{
		Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(),
		UID: obj.GetUID(), CreatedAt: obj.GetCreationTimestamp().Time,
	}
}

func describe(kind, ns, name string) string {
	if ns == "" {
		return kind + "/" + name
	}
	return kind + "/" + ns + "/" + name
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// LiveObjects reads the live objects of app's status.resources with c, in
// that order; a resource that does not exist live (or whose kind is not
// served) is left out.
func LiveObjects(ctx context.Context, c client.Client, app *v1alpha1.Application) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, r := range app.Status.Resources {
		obj, err := getLive(ctx, c, r)
		if err != nil {
			return nil, err
		}
		if obj != nil {
			out = append(out, obj)
		}
	}
	return out, nil
}
