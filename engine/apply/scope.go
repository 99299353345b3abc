package apply

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Scope is the part of a cluster the engine manages, from the cluster's
// Argo CD cluster Secret (keys namespaces and clusterResources). With
// Namespaces set, Argo CD's namespaced mode, it is the objects in those
// namespaces, and cluster-scoped ones only with ClusterResources; the zero
// Scope is the whole cluster. Argo CD's cluster cache lists and watches
// only that part, so an Application sees nothing else; a credential of
// such a cluster may reach nothing else either.
type Scope struct {
	Namespaces       []string
	ClusterResources bool
}

// Manages reports whether an object in namespace ("" for a cluster-scoped
// one) is in s.
func (s Scope) Manages(namespace string) bool {
	switch {
	case len(s.Namespaces) == 0:
		return true
	case namespace == "":
		return s.ClusterResources
	default:
		return slices.Contains(s.Namespaces, namespace)
	}
}

// Unmanaged returns Argo CD's message for the first of objs outside s, ""
// when s holds all of them.
func (s Scope) Unmanaged(objs []*unstructured.Unstructured) string {
	for _, o := range objs {
		switch ns := o.GetNamespace(); {
		case s.Manages(ns):
		case ns == "":
			return fmt.Sprintf("cluster level %s %q can not be managed when in namespaced mode", o.GetKind(), o.GetName())
		default:
			return fmt.Sprintf("namespace %q for %s %q is not managed", ns, o.GetKind(), o.GetName())
		}
	}
	return ""
}

// ListNamespaces returns the namespaces to list gvk in, mapped by mapper:
// [""] (all) for the whole cluster, s's namespaces for a namespaced kind,
// [""] for a cluster-scoped kind when s holds cluster-scoped objects and
// none when it does not. A kind mapper does not know is an error.
func (s Scope) ListNamespaces(mapper meta.RESTMapper, gvk schema.GroupVersionKind) ([]string, error) {
	if len(s.Namespaces) == 0 {
		return []string{""}, nil
	}
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	switch {
	case m.Scope.Name() == meta.RESTScopeNameNamespace:
		return s.Namespaces, nil
	case s.ClusterResources:
		return []string{""}, nil
	default:
		return nil, nil
	}
}
