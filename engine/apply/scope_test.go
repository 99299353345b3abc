package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestScope: what a cluster Secret's namespaces and clusterResources let
// the engine manage, and where ListOwned lists each kind.
func TestScope(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	configMap := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	role := schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	mapper.Add(configMap, meta.RESTScopeNamespace)
	mapper.Add(role, meta.RESTScopeRoot)
	obj := func(kind, ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetKind(kind)
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	tests := []struct {
		name             string
		scope            Scope
		unmanaged        string
		configMaps, role []string
	}{
		{name: "whole cluster", configMaps: []string{""}, role: []string{""}},
		{name: "namespaced mode", scope: Scope{Namespaces: []string{"web", "api"}},
			unmanaged:  `cluster level ClusterRole "r" can not be managed when in namespaced mode`,
			configMaps: []string{"web", "api"}},
		{name: "namespaced mode with cluster resources", scope: Scope{Namespaces: []string{"web"}, ClusterResources: true},
			unmanaged:  `namespace "billing" for ConfigMap "b" is not managed`,
			configMaps: []string{"web"}, role: []string{""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := []*unstructured.Unstructured{obj("ConfigMap", "web", "a"), obj("ClusterRole", "", "r"), obj("ConfigMap", "billing", "b")}
			if got := tc.scope.Unmanaged(objs); got != tc.unmanaged {
				t.Errorf("Unmanaged = %q, want %q", got, tc.unmanaged)
			}
			for gvk, want := range map[schema.GroupVersionKind][]string{configMap: tc.configMaps, role: tc.role} {
				got, err := tc.scope.ListNamespaces(mapper, gvk)
				if err != nil || !cmp.Equal(got, want) {
					t.Errorf("ListNamespaces(%s) = %q, %v; want %q", gvk.Kind, got, err, want)
				}
			}
		})
	}
	if _, err := (Scope{Namespaces: []string{"web"}}).ListNamespaces(mapper, schema.GroupVersionKind{Group: "x.io", Version: "v1", Kind: "Gone"}); !meta.IsNoMatchError(err) {
		t.Errorf("an unknown kind: %v, want a no-match error", err)
	}
}
