package engine

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/plan"
	"github.com/tollgate-dev/tollgate/policies"
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
