package plan

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Annotations read by this package.
const (
	AnnotationHook                 = "argocd.argoproj.io/hook"
	AnnotationHookDeletePolicy     = "argocd.argoproj.io/hook-delete-policy"
	AnnotationSyncWave             = "argocd.argoproj.io/sync-wave"
	AnnotationSyncOptions          = "argocd.argoproj.io/sync-options"
	AnnotationHelmHook             = "helm.sh/hook"
	AnnotationHelmHookWeight       = "helm.sh/hook-weight"
	AnnotationHelmHookDeletePolicy = "helm.sh/hook-delete-policy"
)

// hookSkip is the `argocd.argoproj.io/hook` value that leaves an object out.
const hookSkip = "Skip"

// HookDeletePolicy says when a hook object is deleted.
type HookDeletePolicy string

// Hook delete policies, as in Argo CD.
const (
	// HookSucceeded deletes the hook after it succeeded.
	HookSucceeded HookDeletePolicy = "HookSucceeded"
	// HookFailed deletes the hook after it failed.
	HookFailed HookDeletePolicy = "HookFailed"
	// BeforeHookCreation deletes an existing object of the same name before
	// the hook is created. The default.
	BeforeHookCreation HookDeletePolicy = "BeforeHookCreation"
	// HookNever keeps the hook object: it is applied like a manifest and
	// never deleted by the engine.
	HookNever HookDeletePolicy = "Never"
)

// helmPhases maps the Helm hook types Argo CD understands to phases. Other
// Helm hook types have no phase.
var helmPhases = map[string]Phase{
	"pre-install":  PhasePreSync,
	"pre-upgrade":  PhasePreSync,
	"post-install": PhasePostSync,
	"post-upgrade": PhasePostSync,
	"pre-delete":   PhasePreDelete,
	"post-delete":  PhasePostDelete,
}

// helmDeletePolicies maps Helm's delete policies to Argo CD's.
var helmDeletePolicies = map[string]HookDeletePolicy{
	"before-hook-creation": BeforeHookCreation,
	"hook-succeeded":       HookSucceeded,
	"hook-failed":          HookFailed,
}

// hookInfo is what the hook annotations of one object say.
type hookInfo struct {
	// hook is true when the object is a hook.
	hook bool
	// skip is true when the object must be left out of the sync and of
	// the comparison: `Skip` alone, or an Argo CD hook annotation with no
	// type Argo CD knows.
	skip bool
	// phases are the phases a hook runs in (empty for a Helm hook of a
	// type Argo CD does not run).
	phases []Phase
}

// hookOf reads the hook annotations of obj. The Argo CD annotation wins over
// Helm's. As in Argo CD, types it does not know are dropped, and an Argo CD
// annotation left with none (or with Skip alone) leaves the object out of
// the sync and the comparison; Skip with a phase runs as that hook only.
func hookOf(obj *unstructured.Unstructured) hookInfo {
	ann := obj.GetAnnotations()
	if v, ok := ann[AnnotationHook]; ok {
		var info hookInfo
		for _, t := range SplitList(v) {
			if p := Phase(t); knownPhase(p) {
				info.phases = appendPhase(info.phases, p)
			}
		}
		info.hook = len(info.phases) > 0
		info.skip = !info.hook
		return info
	}
	v, ok := ann[AnnotationHelmHook]
	if !ok || strings.TrimSpace(v) == "crd-install" {
		return hookInfo{}
	}
	info := hookInfo{hook: true}
	for _, t := range SplitList(v) {
		if p, ok := helmPhases[t]; ok {
			info.phases = appendPhase(info.phases, p)
		}
	}
	return info
}

// knownPhase reports whether p is a phase Argo CD's hook annotation names.
func knownPhase(p Phase) bool {
	_, ok := phaseOrder[p]
	return ok
}

// knownPolicy reports whether p is a delete policy of Argo CD's
// hook-delete-policy annotation.
func knownPolicy(p HookDeletePolicy) bool {
	switch p {
	case HookSucceeded, HookFailed, BeforeHookCreation, HookNever:
		return true
	}
	return false
}

// UnknownHookValues lists the values of obj's Argo CD hook and
// hook-delete-policy annotations that Argo CD does not know and that are
// therefore ignored, as "annotation: value", for a warning. (Helm hook
// types Argo CD does not run, such as test, are ordinary and not listed.)
func UnknownHookValues(obj *unstructured.Unstructured) []string {
	ann := obj.GetAnnotations()
	var out []string
	for _, t := range SplitList(ann[AnnotationHook]) {
		if !knownPhase(Phase(t)) && t != hookSkip {
			out = append(out, AnnotationHook+": "+t)
		}
	}
	for _, t := range SplitList(ann[AnnotationHookDeletePolicy]) {
		if !knownPolicy(HookDeletePolicy(t)) {
			out = append(out, AnnotationHookDeletePolicy+": "+t)
		}
	}
	return out
}

// Ignored reports whether obj takes no part in a sync or a comparison:
// Argo CD's hook annotation says Skip alone, or names no type Argo CD
// knows.
func Ignored(obj *unstructured.Unstructured) bool {
	return hookOf(obj).skip
}

// deletePoliciesOf returns a hook's delete policies from both annotations,
// BeforeHookCreation when there are none. Values Argo CD does not know are
// dropped, as Argo CD drops them.
func deletePoliciesOf(obj *unstructured.Unstructured) []HookDeletePolicy {
	ann := obj.GetAnnotations()
	var out []HookDeletePolicy
	for _, t := range SplitList(ann[AnnotationHookDeletePolicy]) {
		if p := HookDeletePolicy(t); knownPolicy(p) {
			out = appendPolicy(out, p)
		}
	}
	for _, t := range SplitList(ann[AnnotationHelmHookDeletePolicy]) {
		if p, ok := helmDeletePolicies[t]; ok {
			out = appendPolicy(out, p)
		}
	}
	if len(out) == 0 {
		out = []HookDeletePolicy{BeforeHookCreation}
	}
	return out
}

// IsHook reports whether obj is a hook (Argo CD or Helm) that takes part in
// a sync. Skipped objects and crd-install "hooks" are not hooks.
func IsHook(obj *unstructured.Unstructured) bool {
	return hookOf(obj).hook
}

// HasPhase reports whether obj is a hook that runs in phase p.
func HasPhase(obj *unstructured.Unstructured, p Phase) bool {
	info := hookOf(obj)
	return info.hook && slices.Contains(info.phases, p)
}

// IsDeleteHook reports whether obj is a PreDelete or PostDelete hook: it
// runs when its Application is deleted, and a cascade deletion leaves it
// to the hook cleanup.
func IsDeleteHook(obj *unstructured.Unstructured) bool {
	return HasPhase(obj, PhasePreDelete) || HasPhase(obj, PhasePostDelete)
}

// HasDeletePolicyAnnotation reports whether obj names its delete policy
// (Argo CD's or Helm's annotation); without one, a delete hook is removed
// by the cleanup after the Application's deletion, as Argo CD does.
func HasDeletePolicyAnnotation(obj *unstructured.Unstructured) bool {
	ann := obj.GetAnnotations()
	return len(SplitList(ann[AnnotationHookDeletePolicy])) > 0 || len(SplitList(ann[AnnotationHelmHookDeletePolicy])) > 0
}

// SplitList splits a comma-separated annotation value (sync options,
// compare options, hook phases and delete policies), trimming spaces and
// dropping empty items.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func appendPhase(ps []Phase, p Phase) []Phase {
	for _, q := range ps {
		if q == p {
			return ps
		}
	}
	return append(ps, p)
}

func appendPolicy(ps []HookDeletePolicy, p HookDeletePolicy) []HookDeletePolicy {
	for _, q := range ps {
		if q == p {
			return ps
		}
	}
	return append(ps, p)
}
