package ui

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
)

// node is one object of an Application's resource tree.
type node struct {
	Group, Version, Kind, Namespace, Name string
	// Sync and Health are the Application's view of its own objects; a
	// derived object has only Status, read from it.
	Sync, Health, Status, Message string
	Children                      []*node
	// Link shows the live object; DiffLink its diff, when OutOfSync.
	Link, DiffLink string
}

// childKinds are the kinds listed to find what an Application's objects
// own: the workload chain (Deployment → ReplicaSet → Pod, CronJob → Job →
// Pod, StatefulSet and DaemonSet → Pod) and derived Secrets (a
// SealedSecret's, an ExternalSecret's), read as metadata only.
var childKinds = []schema.GroupVersionKind{
	appsv1.SchemeGroupVersion.WithKind("ReplicaSet"),
	batchv1.SchemeGroupVersion.WithKind("Job"),
	corev1.SchemeGroupVersion.WithKind("Pod"),
	corev1.SchemeGroupVersion.WithKind("Secret"),
}

// inCluster reports whether d is the cluster the UI runs against, the only
// one whose live children it reads.
func inCluster(d v1alpha1.ApplicationDestination) bool {
	return d.Server == application.InClusterServer || d.Name == application.InClusterName
}

// tree builds the Application's resource tree: status.resources, then
// under each what it owns by live owner references, read as p. A kind p
// may not list is named in the returned notes, not fatal.
func (s *Server) tree(ctx context.Context, p *person, app *v1alpha1.Application) ([]*node, []string) {
	base := "/applications/" + url.PathEscape(app.Namespace) + "/" + url.PathEscape(app.Name)
	var roots []*node
	byRef := map[string]*node{}
	namespaces := map[string]bool{}
	for _, r := range app.Status.Resources {
		n := &node{Group: r.Group, Version: r.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Sync: string(r.Status)}
		if r.Health != nil {
			n.Health, n.Message = string(r.Health.Status), r.Health.Message
		}
		if n.Health != string(v1alpha1.HealthStatusMissing) {
			n.Link = base + "/resource?" + objectQuery(n)
		}
		if r.Status == v1alpha1.SyncStatusCodeOutOfSync {
			n.DiffLink = base + "/diff?" + objectQuery(n)
		}
		roots = append(roots, n)
		byRef[ownerKey(r.Kind, r.Namespace, r.Name)] = n
		if r.Namespace != "" {
			namespaces[r.Namespace] = true
		}
	}
	if !inCluster(app.Spec.Destination) || len(namespaces) == 0 {
		return roots, nil
	}
	var notes []string
	var found []*metav1.PartialObjectMetadata
	for _, ns := range slices.Sorted(maps.Keys(namespaces)) {
		var forbidden []string
		for _, gvk := range childKinds {
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := p.c.List(ctx, list, client.InNamespace(ns), client.Limit(2000)); err != nil {
				if apierrors.IsForbidden(err) {
					forbidden = append(forbidden, gvk.Kind+"s")
					continue
				}
				notes = append(notes, fmt.Sprintf("list %ss in %s: %v", gvk.Kind, ns, err))
				continue
			}
			for i := range list.Items {
				o := &list.Items[i]
				o.SetGroupVersionKind(gvk)
				found = append(found, o)
			}
		}
		if len(forbidden) > 0 {
			notes = append(notes, fmt.Sprintf("You may not list %s in namespace %s, so what the objects there own is not shown.", strings.Join(forbidden, ", "), ns))
		}
	}
	// Attach children until nothing more attaches: a Pod's owner
	// ReplicaSet may be found after the Pod.
	attached := map[*metav1.PartialObjectMetadata]bool{}
	for changed := true; changed; {
		changed = false
		for _, o := range found {
			if attached[o] {
				continue
			}
			for _, ref := range o.OwnerReferences {
				parent, ok := byRef[ownerKey(ref.Kind, o.Namespace, ref.Name)]
				if !ok {
					continue
				}
				gvk := o.GroupVersionKind()
				child := &node{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: o.Namespace, Name: o.Name}
				child.Link = base + "/resource?" + objectQuery(child)
				parent.Children = append(parent.Children, child)
				byRef[ownerKey(gvk.Kind, o.Namespace, o.Name)] = child
				attached[o], changed = true, true
				break
			}
		}
	}
	sortTree(roots)
	return roots, notes
}

func ownerKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func objectQuery(n *node) string {
	return url.Values{"group": {n.Group}, "version": {n.Version}, "kind": {n.Kind}, "namespace": {n.Namespace}, "name": {n.Name}}.Encode()
}

func sortTree(nodes []*node) {
	slices.SortStableFunc(nodes, func(a, b *node) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, n := range nodes {
		sortTree(n.Children)
	}
}
