package policies

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestChildApplicationAgainstParentProject runs an app of apps through
// BuildInputs and the real built-in rules: the child Application is a
// resource of its parent, so the parent's AppProject decides whether it may
// be deployed, and the child's own (missing) project is not reported here.
func TestChildApplicationAgainstParentProject(t *testing.T) {
	e, err := New(t.Context(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	parent := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Application",
		"metadata": map[string]any{
			"name": "apps", "namespace": "argocd",
			"finalizers": []any{"resources-finalizer.argocd.argoproj.io"},
		},
		"spec": map[string]any{
			"project":     "platform",
			"source":      map[string]any{"repoURL": "https://git.example.com/apps.git"},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "argocd"},
		},
	}
	child := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Application",
		"metadata": map[string]any{
			"name": "shop", "namespace": "argocd",
			"finalizers": []any{"resources-finalizer.argocd.argoproj.io"},
		},
		"spec": map[string]any{
			"project":     "shop-team",
			"source":      map[string]any{"repoURL": "https://git.example.com/shop.git"},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "shop"},
		},
	}
	// The platform project may deploy into argocd, but only ConfigMaps.
	platform := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "AppProject",
		"metadata":   map[string]any{"name": "platform", "namespace": "argocd"},
		"spec": map[string]any{
			"sourceRepos":                []any{"https://git.example.com/*"},
			"destinations":               []any{map[string]any{"server": "*", "namespace": "argocd"}},
			"namespaceResourceWhitelist": []any{map[string]any{"group": "", "kind": "ConfigMap"}},
		},
	}
	ins := BuildInputs(InputOptions{Point: PointSync, Projects: []map[string]any{platform}}, []Item{{Object: parent}, {Object: child, Application: parent}})
	decisions, err := e.EvaluateAll(t.Context(), ins)
	if err != nil {
		t.Fatal(err)
	}
	type finding struct{ Rule, Message string }
	var got []finding
	for _, v := range decisions[1].Violations {
		got = append(got, finding{v.Rule, v.Message})
	}
	want := []finding{{
		Rule:    "project-resource-denied",
		Message: `Application "shop" of Application "apps" is a namespaced resource "argoproj.io/Application" that AppProject "platform" does not list in spec.namespaceResourceWhitelist; drop it from the Application or ask the project's owners to whitelist {group: "argoproj.io", kind: "Application"}`,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("child Application violations (-want +got):\n%s", diff)
	}
}
