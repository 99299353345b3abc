package plan

import (
	"fmt"
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
	// skip is true when the object must be left out of the sync.
	skip bool
	// phases are the phases a hook runs in (empty for a Helm hook of a
	// type Argo CD does not run).
	phases []Phase
}

// hookOf reads the hook annotations of obj. The Argo CD annotation wins over
// Helm's; unknown Argo CD hook types are an error, unknown Helm hook types
// are ignored as Argo CD ignores them.
func hookOf(obj *unstructured.Unstructured) (hookInfo, error) {
	ann := obj.GetAnnotations()
	if v, ok := ann[AnnotationHook]; ok {
		var info hookInfo
		values := splitCSV(v)
		for _, t := range values {
			switch p := Phase(t); p {
			case PhasePreSync, PhaseSync, PhasePostSync, PhaseSyncFail, PhasePostDelete:
				info.phases = appendPhase(info.phases, p)
			case hookSkip:
				info.skip = true
			default:
				return hookInfo{}, fmt.Errorf("annotation %s: unknown hook type %q (want PreSync, Sync, PostSync, SyncFail, PostDelete or Skip)", AnnotationHook, t)
			}
		}
		if len(values) == 0 {
			return hookInfo{}, fmt.Errorf("annotation %s: empty", AnnotationHook)
		}
		// Skip together with a phase means "run as that hook only", as in Argo CD.
		if info.skip && len(info.phases) > 0 {
			info.skip = false
		}
		info.hook = !info.skip
		return info, nil
	}
	v, ok := ann[AnnotationHelmHook]
	if !ok || strings.TrimSpace(v) == "crd-install" {
		return hookInfo{}, nil
	}
	info := hookInfo{hook: true}
	for _, t := range splitCSV(v) {
		if p, ok := helmPhases[t]; ok {
			info.phases = appendPhase(info.phases, p)
		}
	}
	return info, nil
}

// deletePoliciesOf returns a hook's delete policies from both annotations,
// BeforeHookCreation when there are none.
func deletePoliciesOf(obj *unstructured.Unstructured) ([]HookDeletePolicy, error) {
	ann := obj.GetAnnotations()
	var out []HookDeletePolicy
	for _, t := range splitCSV(ann[AnnotationHookDeletePolicy]) {
		switch p := HookDeletePolicy(t); p {
		case HookSucceeded, HookFailed, BeforeHookCreation, HookNever:
			out = appendPolicy(out, p)
		default:
			return nil, fmt.Errorf("annotation %s: unknown policy %q (want HookSucceeded, HookFailed, BeforeHookCreation or Never)", AnnotationHookDeletePolicy, t)
		}
	}
	for _, t := range splitCSV(ann[AnnotationHelmHookDeletePolicy]) {
		if p, ok := helmDeletePolicies[t]; ok {
			out = appendPolicy(out, p)
		}
	}
	if len(out) == 0 {
		out = []HookDeletePolicy{BeforeHookCreation}
	}
	return out, nil
}

// IsHook reports whether obj is a hook (Argo CD or Helm) that takes part in
// a sync. Skipped objects and crd-install "hooks" are not hooks.
func IsHook(obj *unstructured.Unstructured) bool {
	info, err := hookOf(obj)
	return err == nil && info.hook
}

// splitCSV splits a comma-separated annotation value, trimming spaces and
// dropping empty items.
func splitCSV(v string) []string {
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
