package application

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/engine/health"
)

// TestIgnoreHealthcheck: an object with Argo CD's ignore-healthcheck
// annotation does not count in the Application's health and a sync does
// not wait for it.
func TestIgnoreHealthcheck(t *testing.T) {
	checker, err := health.NewChecker()
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{health: checker}
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "namespace": "ns"},
		"spec":   map[string]any{"restartPolicy": "Always"},
		"status": map[string]any{"phase": "Failed", "message": "evicted"},
	}}
	if h := r.resourceHealth(pod); h == nil || h.Status != "Degraded" {
		t.Fatalf("health without the annotation = %+v, want Degraded", h)
	}
	pod.SetAnnotations(map[string]string{health.IgnoreHealthAnnotation: "true"})
	if h := r.resourceHealth(pod); h != nil {
		t.Errorf("health with the annotation = %+v, want none", h)
	}
	if status, _, err := r.assessHealth(pod); err != nil || status != "Healthy" {
		t.Errorf("assessHealth with the annotation = %q, %v; want Healthy (nothing to wait for)", status, err)
	}
}
