package policies

import "reflect"

// Item is one document to review: an object and, when known, the
// Application that rendered it.
type Item struct {
	// Object is the decoded Kubernetes object.
	Object map[string]any
	// Application is the Application that rendered Object; nil for raw
	// documents. For an Object that is itself an Application it is the
	// parent that rendered it (app of apps), or nil (or Object itself) when
	// the Application is reviewed on its own.
	Application map[string]any
}

// BuildInputs assembles the Inputs for a set of documents reviewed together,
// one per item and in item order. It is shared by the CLI and the sync
// engine so both judge a set of documents alike:
//
//   - The project set is every AppProject among the items (in argocdNamespace
//     or without a namespace) plus projects; an item overrides a project of
//     the same name passed in projects.
//   - CustomResourceDefinitions among the items extend the scope table used
//     for Context.ClusterScoped.
//   - HorizontalPodAutoscalers among the items mark their
//     spec.scaleTargetRef (kind and name, in the HPA's namespace) as
//     Context.ScaledByHPA.
//   - An Application item without a parent (Item.Application nil, or the
//     object itself) is its own Application. An Application item rendered by
//     a parent keeps the parent as its Application: it is a resource the
//     parent deploys, judged against the parent's AppProject, as Argo CD
//     judges it when it syncs the parent (the built-in rules then check where
//     it lands and whether the parent's project permits the kind, not its
//     own spec; that is checked when the child itself is reviewed).
//   - Project is the AppProject named by the Application's spec.project
//     (empty means "default"), DefaultProject() for "default" when none is
//     in the set, else nil.
//
// An empty argocdNamespace means DefaultArgoCDNamespace. The items' maps are
// shared with the Inputs, not copied.
func BuildInputs(point EnforcementPoint, argocdNamespace string, items []Item, projects []map[string]any) []Input {
	if argocdNamespace == "" {
		argocdNamespace = DefaultArgoCDNamespace
	}
	byName := make(map[string]map[string]any, len(projects))
	for _, p := range projects {
		if name := objectName(p); name != "" {
			byName[name] = p
		}
	}
	var crds []map[string]any
	var hpas []hpaTarget
	for _, it := range items {
		obj := it.Object
		switch {
		case isKind(obj, "argoproj.io", "AppProject"):
			if ns := objectNamespace(obj); ns == "" || ns == argocdNamespace {
				if name := objectName(obj); name != "" {
					byName[name] = obj
				}
			}
		case isKind(obj, "apiextensions.k8s.io", "CustomResourceDefinition"):
			crds = append(crds, obj)
		case isKind(obj, "autoscaling", "HorizontalPodAutoscaler"):
			if t, ok := hpaTargetOf(it); ok {
				hpas = append(hpas, t)
			}
		}
	}
	scopes := NewScopes(crds...)

	ins := make([]Input, len(items))
	for i, it := range items {
		obj := it.Object
		app := it.Application
		if isKind(obj, "argoproj.io", "Application") && !renderedByParent(it) {
			app = obj
		}
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		ins[i] = Input{
			Object:      obj,
			Application: app,
			Project:     resolveProject(app, byName),
			Context: Context{
				EnforcementPoint: point,
				ArgoCDNamespace:  argocdNamespace,
				ClusterScoped:    scopes.ClusterScoped(GroupOf(apiVersion), kind),
				ScaledByHPA:      scaledByHPA(it, hpas),
			},
		}
	}
	return ins
}

// renderedByParent reports whether the item is an object a parent
// Application rendered, rather than the Application itself. The built-in
// rules draw the same line (data.tollgate.lib.rendered): input.application
// is set and is not input.object.
func renderedByParent(it Item) bool {
	return len(it.Application) > 0 && !sameMap(it.Application, it.Object) &&
		!reflect.DeepEqual(it.Application, it.Object)
}

// resolveProject returns the AppProject app uses, DefaultProject() for an
// implicit default project, or nil.
func resolveProject(app map[string]any, byName map[string]map[string]any) map[string]any {
	if app == nil {
		return nil
	}
	name, _ := nestedString(app, "spec", "project")
	if name == "" {
		name = "default"
	}
	if p, ok := byName[name]; ok {
		return p
	}
	if name == "default" {
		return DefaultProject()
	}
	return nil
}

// hpaTarget is the object a HorizontalPodAutoscaler scales.
type hpaTarget struct {
	group     string
	hasGroup  bool
	kind      string
	name      string
	namespace string
}

// hpaTargetOf returns the target of the HPA in it.
func hpaTargetOf(it Item) (hpaTarget, bool) {
	ref, ok := nestedMap(it.Object, "spec", "scaleTargetRef")
	if !ok {
		return hpaTarget{}, false
	}
	kind, _ := ref["kind"].(string)
	name, _ := ref["name"].(string)
	if kind == "" || name == "" {
		return hpaTarget{}, false
	}
	apiVersion, _ := ref["apiVersion"].(string)
	return hpaTarget{
		group:     GroupOf(apiVersion),
		hasGroup:  apiVersion != "",
		kind:      kind,
		name:      name,
		namespace: effectiveNamespace(it),
	}, true
}

// scaledByHPA reports whether one of hpas targets the object in it.
func scaledByHPA(it Item, hpas []hpaTarget) bool {
	if len(hpas) == 0 {
		return false
	}
	obj := it.Object
	kind, _ := obj["kind"].(string)
	name := objectName(obj)
	if kind == "" || name == "" {
		return false
	}
	apiVersion, _ := obj["apiVersion"].(string)
	ns := effectiveNamespace(it)
	for _, h := range hpas {
		if h.kind == kind && h.name == name && h.namespace == ns &&
			(!h.hasGroup || h.group == GroupOf(apiVersion)) {
			return true
		}
	}
	return false
}

// effectiveNamespace is the namespace an item lands in: its own, else the
// destination namespace of the Application that rendered it (Argo CD applies
// namespaced resources without a namespace there).
func effectiveNamespace(it Item) string {
	if ns := objectNamespace(it.Object); ns != "" {
		return ns
	}
	if it.Application != nil {
		ns, _ := nestedString(it.Application, "spec", "destination", "namespace")
		return ns
	}
	return ""
}

// DefaultProject returns Argo CD's implicit "default" AppProject, which
// allows every source repository, every destination and every cluster-scoped
// resource. Each call returns a fresh copy.
func DefaultProject() map[string]any {
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "AppProject",
		"metadata":   map[string]any{"name": "default"},
		"spec": map[string]any{
			"sourceRepos": []any{"*"},
			"destinations": []any{
				map[string]any{"server": "*", "namespace": "*"},
			},
			"clusterResourceWhitelist": []any{
				map[string]any{"group": "*", "kind": "*"},
			},
		},
	}
}

// isKind reports whether obj has the given API group and kind.
func isKind(obj map[string]any, group, kind string) bool {
	k, _ := obj["kind"].(string)
	if k != kind {
		return false
	}
	apiVersion, _ := obj["apiVersion"].(string)
	return GroupOf(apiVersion) == group
}

// objectName returns metadata.name.
func objectName(obj map[string]any) string {
	s, _ := nestedString(obj, "metadata", "name")
	return s
}

// objectNamespace returns metadata.namespace.
func objectNamespace(obj map[string]any) string {
	s, _ := nestedString(obj, "metadata", "namespace")
	return s
}

// nestedMap returns the map at path inside obj.
func nestedMap(obj map[string]any, path ...string) (map[string]any, bool) {
	cur := obj
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// nestedString returns the string at path inside obj.
func nestedString(obj map[string]any, path ...string) (string, bool) {
	if len(path) == 0 {
		return "", false
	}
	m, ok := nestedMap(obj, path[:len(path)-1]...)
	if !ok {
		return "", false
	}
	s, ok := m[path[len(path)-1]].(string)
	return s, ok
}
