package policies

import (
	"fmt"
	"reflect"
	"unsafe"

	"k8s.io/apimachinery/pkg/runtime"
)

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

// InputOptions says how BuildInputs judges a set of documents, and where
// its facts come from.
type InputOptions struct {
	// Point is the enforcement point of every Input.
	Point EnforcementPoint
	// ArgoCDNamespace is where Argo CD runs; empty means
	// DefaultArgoCDNamespace.
	ArgoCDNamespace string
	// Projects are the AppProjects the caller knows from authority: the
	// cluster (engine, webhook) or --project files (CLI).
	Projects []map[string]any
	// ProjectsFromItems adds the AppProjects among the items (in the Argo
	// CD namespace or without one) to the project set; a project of the
	// same name in Projects wins. For the CLI, whose repository under test
	// is where AppProjects come from; the engine and the webhook leave it
	// off, so that an AppProject an Application renders never judges that
	// Application or its objects.
	ProjectsFromItems bool
	// ImplicitDefaultProject makes "default", when it is not in the
	// project set, Argo CD's allow-all DefaultProject(); otherwise an
	// Application of a missing "default" project has no project
	// (project-not-found).
	ImplicitDefaultProject bool
	// Scope places kinds for Context.ClusterScoped. Nil means the built-in
	// table (Scopes). CustomResourceDefinitions among the items place only
	// kinds Scope does not know; a CRD item that re-declares a kind Scope
	// knows, or a kind of a built-in API group, gets
	// Context.RedeclaredKind.
	Scope KindScope
}

// BuildInputs assembles the Inputs for a set of documents reviewed together,
// one per item and in item order. It is shared by the CLI, the webhook and
// the sync engine so all three judge a set of documents alike:
//
//   - The project set is opts.Projects, plus the AppProjects among the
//     items of other names when opts.ProjectsFromItems.
//   - CustomResourceDefinitions among the items extend opts.Scope for
//     Context.ClusterScoped, for kinds it does not know.
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
//   - An Application that carries a reserved annotation (the controller's
//     operation fence) gets Context.ReservedAnnotations.
//   - Project is the AppProject named by the Application's spec.project
//     (empty means "default"); for a "default" project missing from the
//     set, DefaultProject() with opts.ImplicitDefaultProject, else nil.
//   - The Application of an object it renders is given without what changes
//     as it runs (WithoutRuntimeState).
//
// The items' maps are shared with the Inputs, not copied, but for those
// views.
func BuildInputs(opts InputOptions, items []Item) []Input {
	argocdNamespace := opts.ArgoCDNamespace
	if argocdNamespace == "" {
		argocdNamespace = DefaultArgoCDNamespace
	}
	byName := make(map[string]map[string]any, len(opts.Projects))
	pinned := make(map[string]bool, len(opts.Projects))
	for _, p := range opts.Projects {
		if name := objectName(p); name != "" {
			byName[name], pinned[name] = p, true
		}
	}
	var crds []map[string]any
	var hpas []hpaTarget
	for _, it := range items {
		obj := it.Object
		switch {
		case isKind(obj, "argoproj.io", "AppProject"):
			if !opts.ProjectsFromItems {
				continue
			}
			if ns := objectNamespace(obj); ns == "" || ns == argocdNamespace {
				if name := objectName(obj); name != "" && !pinned[name] {
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
	place := placement{served: opts.Scope, rendered: NewScopes(crds...)}

	ins := make([]Input, len(items))
	var views map[unsafe.Pointer]map[string]any // of the parents, by identity
	for i, it := range items {
		obj := it.Object
		app := it.Application
		switch {
		case isKind(obj, "argoproj.io", "Application") && !renderedByParent(it):
			app = obj
		case len(app) > 0 && !sameMap(app, obj):
			k := mapKey(app)
			v, ok := views[k]
			if !ok {
				if views == nil {
					views = map[unsafe.Pointer]map[string]any{}
				}
				v = WithoutRuntimeState(app)
				views[k] = v
			}
			app = v
		}
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		clusterScoped, known := place.scope(GroupOf(apiVersion), kind)
		ins[i] = Input{
			Object:      obj,
			Application: app,
			Project:     resolveProject(app, byName, opts.ImplicitDefaultProject),
			Context: Context{
				EnforcementPoint:    opts.Point,
				ArgoCDNamespace:     argocdNamespace,
				ClusterScoped:       clusterScoped,
				ScaledByHPA:         scaledByHPA(it, hpas),
				KindUnplaced:        !known,
				RedeclaredKind:      place.redeclared(obj),
				ReservedAnnotations: ReservedAnnotationsOf(obj),
			},
		}
	}
	return ins
}

// WithoutRuntimeState returns app without what changes as it runs: its
// status and the resourceVersion, generation and managedFields of its
// metadata. It is a shallow copy that shares the rest with app, or app
// itself when it holds none of them (the engine hands BuildInputs maps it
// stripped already). The rules judge an Application by its spec and
// metadata; an Application whose status alone changed is then the same
// input, whose facts the evaluator's function cache already holds (and
// keeps no second copy of).
func WithoutRuntimeState(app map[string]any) map[string]any {
	md, _ := app["metadata"].(map[string]any)
	if _, ok := app["status"]; !ok && !hasAny(md, "resourceVersion", "generation", "managedFields") {
		return app
	}
	v := make(map[string]any, len(app))
	for k, x := range app {
		if k != "status" {
			v[k] = x
		}
	}
	if md != nil {
		m := make(map[string]any, len(md))
		for k, x := range md {
			if k != "resourceVersion" && k != "generation" && k != "managedFields" {
				m[k] = x
			}
		}
		v["metadata"] = m
	}
	return v
}

// hasAny reports whether m has one of keys.
func hasAny(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// placement places kinds: from the caller's scope first (the cluster's
// discovery, or the built-in table), then from the CRDs among the items.
type placement struct {
	served   KindScope
	rendered Scopes
}

// scope returns whether group/kind is cluster-scoped and whether anything
// knows the kind; unknown kinds are namespaced.
func (p placement) scope(group, kind string) (clusterScoped, known bool) {
	if p.served != nil {
		if c, ok := p.served.Scope(group, kind); ok {
			return c, true
		}
	}
	return p.rendered.Scope(group, kind)
}

// redeclared describes the kind a CustomResourceDefinition re-declares:
// one of a built-in API group, or one the caller's scope already serves
// with another scope. "" for anything else.
func (p placement) redeclared(obj map[string]any) string {
	gk, clusterScoped, ok := crdKind(obj)
	if !ok {
		return ""
	}
	name := gk.kind
	if gk.group != "" {
		name = gk.group + "/" + gk.kind
	}
	if BuiltinGroup(gk.group) {
		return fmt.Sprintf("%s, a kind of the built-in API group %q that only Kubernetes serves", name, gk.group)
	}
	if p.served == nil {
		return ""
	}
	if served, known := p.served.Scope(gk.group, gk.kind); known && served != clusterScoped {
		return fmt.Sprintf("%s, which the destination serves as %s", name, scopeName(served))
	}
	return ""
}

// scopeName names a scope as CRDs do.
func scopeName(clusterScoped bool) string {
	if clusterScoped {
		return "Cluster"
	}
	return "Namespaced"
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
func resolveProject(app map[string]any, byName map[string]map[string]any, implicitDefault bool) map[string]any {
	if app == nil {
		return nil
	}
	name := projectNameOf(app)
	if p, ok := byName[name]; ok {
		return p
	}
	if name == "default" && implicitDefault {
		return DefaultProject()
	}
	return nil
}

// projectNameOf returns an Application's spec.project, "default" when
// empty.
func projectNameOf(app map[string]any) string {
	if name, _ := nestedString(app, "spec", "project"); name != "" {
		return name
	}
	return "default"
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

// ObjectMap converts a typed object (an Application, an AppProject) to the
// plain map Items carry, with apiVersion and kind set (objects from a cache
// carry no TypeMeta) and without managedFields.
func ObjectMap(obj runtime.Object, apiVersion, kind string) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %s: %w", kind, err)
	}
	m["apiVersion"], m["kind"] = apiVersion, kind
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	return m, nil
}
