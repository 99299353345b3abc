package audit

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kind is one resource type to audit.
type kind struct {
	gvk        schema.GroupVersionKind
	resource   string
	namespaced bool
}

// unaudited are resource types no rule judges: the cluster's own chatter,
// never stored, or the audit's own output.
var unaudited = map[schema.GroupResource]bool{
	{Resource: "events"}:                                        true,
	{Group: "events.k8s.io", Resource: "events"}:                true,
	{Resource: "componentstatuses"}:                             true,
	{Group: "coordination.k8s.io", Resource: "leases"}:          true,
	{Group: "wgpolicyk8s.io", Resource: "policyreports"}:        true,
	{Group: "wgpolicyk8s.io", Resource: "clusterpolicyreports"}: true,
}

// unauditedGroups are API groups whose types are never stored objects.
var unauditedGroups = map[string]bool{
	"authentication.k8s.io": true,
	"authorization.k8s.io":  true,
}

// kinds returns the resource types to audit, in discovery's preferred
// versions, sorted by group and resource. A group whose discovery fails
// (an aggregated API that is down) is left out, as the rest can still be
// audited.
func (a *Auditor) kinds() ([]kind, error) {
	lists, err := discovery.ServerPreferredResources(a.opts.Discovery)
	if err != nil && (!discovery.IsGroupDiscoveryFailedError(err) || len(lists) == 0) {
		return nil, fmt.Errorf("discover resource types: %w", err)
	}
	var out []kind
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil || unauditedGroups[gv.Group] {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || unaudited[gv.WithResource(r.Name).GroupResource()] {
				continue
			}
			out = append(out, kind{gvk: gv.WithKind(r.Kind), resource: r.Name, namespaced: r.Namespaced})
		}
	}
	slices.SortFunc(out, func(x, y kind) int {
		if c := strings.Compare(x.gvk.Group, y.gvk.Group); c != 0 {
			return c
		}
		return strings.Compare(x.resource, y.resource)
	})
	return out, nil
}

// listPages lists every object of k across all namespaces, one page of
// ChunkSize at a time, and hands each to fn; a page is released before the
// next is read. A kind whose CustomResourceDefinition went away since
// discovery holds nothing.
func (a *Auditor) listPages(ctx context.Context, k kind, fn func(map[string]any)) error {
	cont := ""
	for {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		err := a.opts.Client.List(ctx, list, client.Limit(a.opts.ChunkSize), client.Continue(cont))
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		for i := range list.Items {
			obj := list.Items[i].Object
			if obj["apiVersion"] == nil || obj["kind"] == nil {
				// List items of a built-in kind carry no type.
				obj["apiVersion"], obj["kind"] = k.gvk.GroupVersion().String(), k.gvk.Kind
			}
			fn(obj)
			list.Items[i].Object = nil
		}
		if cont = list.GetContinue(); cont == "" {
			return nil
		}
	}
}

// isExpired reports whether err says a list's continue token expired.
func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}
