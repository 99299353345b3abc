package plan

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Task is one object to apply in one phase. A hook that runs in two phases
// gives two tasks sharing the same Object.
type Task struct {
	// Object is the desired object. It points into the slice given to
	// Build and must be copied before it is modified.
	Object *unstructured.Unstructured
	Phase  Phase
	// Wave is the effective wave: the object's own, or an earlier one when
	// a dependency adjustment moved it (see the package documentation).
	Wave int
	// Hook is true for hooks (Argo CD or Helm).
	Hook bool
	// HookDeletePolicies are set for hooks only.
	HookDeletePolicies []HookDeletePolicy
	// SyncOptions are the Application's options overridden by the object's.
	SyncOptions SyncOptions
}

// HasDeletePolicy reports whether the task is a hook with policy p.
func (t Task) HasDeletePolicy(p HookDeletePolicy) bool {
	return slices.Contains(t.HookDeletePolicies, p)
}

// Wave is a group of tasks applied together and waited on together.
type Wave struct {
	Phase Phase
	Wave  int
	Tasks []Task
}

// Build turns the rendered objects of one Application into ordered waves.
// appSyncOptions are the Application's spec.syncPolicy.syncOptions. Objects
// annotated `argocd.argoproj.io/hook: Skip` and Helm hooks of types Argo CD
// does not run are left out. Errors name the object: a bad wave, hook, delete
// policy or sync option annotation, an ordinary object without a name, or the
// same object twice. Build does not modify objs.
func Build(objs []*unstructured.Unstructured, appSyncOptions ...string) ([]Wave, error) {
	if _, err := ParseSyncOptions(appSyncOptions...); err != nil {
		return nil, fmt.Errorf("build plan: application sync options: %w", err)
	}
	var tasks []Task
	seen := map[objectKey]int{}
	for i, obj := range objs {
		if obj == nil {
			return nil, fmt.Errorf("build plan: object %d is nil", i)
		}
		ts, err := tasksOf(obj, appSyncOptions)
		if err != nil {
			return nil, fmt.Errorf("build plan: %s: %w", Describe(obj), err)
		}
		if len(ts) > 0 && !ts[0].Hook {
			k := keyOf(obj)
			if j, dup := seen[k]; dup {
				return nil, fmt.Errorf("build plan: %s: defined twice (objects %d and %d)", Describe(obj), j, i)
			}
			seen[k] = i
		}
		tasks = append(tasks, ts...)
	}
	adjustDependencies(tasks)
	slices.SortStableFunc(tasks, compareTasks)
	return group(tasks), nil
}

// tasksOf returns the tasks of one object: none when skipped, one per phase.
func tasksOf(obj *unstructured.Unstructured, appOpts []string) ([]Task, error) {
	if obj.GetKind() == "" || obj.GetAPIVersion() == "" {
		return nil, fmt.Errorf("apiVersion and kind must be set")
	}
	info := hookOf(obj)
	if info.skip {
		return nil, nil
	}
	wave, err := WaveOf(obj)
	if err != nil {
		return nil, err
	}
	opts, err := SyncOptionsFor(obj, appOpts...)
	if err != nil {
		return nil, err
	}
	if !info.hook {
		if obj.GetName() == "" {
			return nil, fmt.Errorf("metadata.name must be set (generateName is only allowed on hooks)")
		}
		return []Task{{Object: obj, Phase: PhaseSync, Wave: wave, SyncOptions: opts}}, nil
	}
	if obj.GetName() == "" && obj.GetGenerateName() == "" {
		return nil, fmt.Errorf("metadata.name or metadata.generateName must be set")
	}
	policies := deletePoliciesOf(obj)
	out := make([]Task, 0, len(info.phases))
	for _, p := range info.phases {
		out = append(out, Task{Object: obj, Phase: p, Wave: wave, Hook: true, HookDeletePolicies: policies, SyncOptions: opts})
	}
	return out, nil
}

// compareTasks orders by phase, wave, kind, namespace and name.
func compareTasks(a, b Task) int {
	return cmp.Or(
		cmp.Compare(phaseOrder[a.Phase], phaseOrder[b.Phase]),
		cmp.Compare(a.Wave, b.Wave),
		cmp.Compare(KindRank(a.Object.GetKind()), KindRank(b.Object.GetKind())),
		cmp.Compare(a.Object.GetNamespace(), b.Object.GetNamespace()),
		cmp.Compare(nameOf(a.Object), nameOf(b.Object)),
	)
}

// group splits sorted tasks into waves of equal phase and wave.
func group(tasks []Task) []Wave {
	var waves []Wave
	for _, t := range tasks {
		if n := len(waves); n > 0 && waves[n-1].Phase == t.Phase && waves[n-1].Wave == t.Wave {
			waves[n-1].Tasks = append(waves[n-1].Tasks, t)
			continue
		}
		waves = append(waves, Wave{Phase: t.Phase, Wave: t.Wave, Tasks: []Task{t}})
	}
	return waves
}

// slot is a (phase, wave) position.
type slot struct {
	phase Phase
	wave  int
}

func (s slot) before(o slot) bool {
	if s.phase != o.phase {
		return phaseOrder[s.phase] < phaseOrder[o.phase]
	}
	return s.wave < o.wave
}

// adjustDependencies moves each Namespace into the earliest slot of a task
// in it, and each CRD into the earliest slot of a custom resource of its
// kind, so that a wave never needs something a later wave creates.
func adjustDependencies(tasks []Task) {
	earliestNS := map[string]slot{}
	earliestGK := map[schema.GroupKind]slot{}
	for _, t := range tasks {
		s := slot{t.Phase, t.Wave}
		if ns := t.Object.GetNamespace(); ns != "" {
			if e, ok := earliestNS[ns]; !ok || s.before(e) {
				earliestNS[ns] = s
			}
		}
		gk := t.Object.GroupVersionKind().GroupKind()
		if e, ok := earliestGK[gk]; !ok || s.before(e) {
			earliestGK[gk] = s
		}
	}
	for i := range tasks {
		t := &tasks[i]
		var dep slot
		var ok bool
		switch gk := t.Object.GroupVersionKind().GroupKind(); {
		case gk == schema.GroupKind{Kind: "Namespace"}:
			dep, ok = earliestNS[t.Object.GetName()]
		case gk == schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
			if served, has := crdKind(t.Object); has {
				dep, ok = earliestGK[served]
			}
		}
		if ok && dep.before(slot{t.Phase, t.Wave}) {
			t.Phase, t.Wave = dep.phase, dep.wave
		}
	}
}

// crdKind returns the group and kind a CRD serves.
func crdKind(crd *unstructured.Unstructured) (schema.GroupKind, bool) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	if group == "" || kind == "" {
		return schema.GroupKind{}, false
	}
	return schema.GroupKind{Group: group, Kind: kind}, true
}

// objectKey identifies an object regardless of API version.
type objectKey struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

func keyOf(obj *unstructured.Unstructured) objectKey {
	return objectKey{obj.GroupVersionKind().GroupKind(), obj.GetNamespace(), obj.GetName()}
}

func nameOf(obj *unstructured.Unstructured) string {
	if n := obj.GetName(); n != "" {
		return n
	}
	return obj.GetGenerateName()
}

// Describe names obj for messages: `Kind namespace/name` (or
// `generateName*` for hooks that have no name yet).
func Describe(obj *unstructured.Unstructured) string {
	name := obj.GetName()
	if name == "" && obj.GetGenerateName() != "" {
		name = obj.GetGenerateName() + "*"
	}
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	kind := obj.GetKind()
	if kind == "" {
		kind = "object"
	}
	if g := obj.GroupVersionKind().Group; g != "" {
		kind += "." + g
	}
	return kind + " " + name
}
