package application

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/health"
)

// assessHealth adapts the health checker to apply.HealthFunc. An object
// with the ignore-healthcheck annotation counts as Healthy: a sync does not
// wait for it.
func (r *Reconciler) assessHealth(obj *unstructured.Unstructured) (string, string, error) {
	if health.Ignored(obj) {
		return string(health.Healthy), "", nil
	}
	res, err := r.health.Assess(obj)
	return string(res.Status), res.Message, err
}

// resourceHealth returns the health of one live object (nil: missing), or
// nil when the object opts out with the ignore-healthcheck annotation, so
// that it does not count in the Application's health (as in Argo CD).
func (r *Reconciler) resourceHealth(live *unstructured.Unstructured) *v1alpha1.HealthStatus {
	if live == nil {
		return &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusMissing}
	}
	if health.Ignored(live) {
		return nil
	}
	// An assessment error is an Unknown result with the error as message.
	res, _ := r.health.Assess(live)
	return &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusCode(res.Status), Message: res.Message}
}

// worstHealth aggregates resource health into the Application's, with the
// message of the first resource in the worst state.
func worstHealth(resources []v1alpha1.ResourceStatus) v1alpha1.HealthStatus {
	var statuses []health.Status
	for _, r := range resources {
		if r.Health != nil && !r.RequiresPruning && !r.Hook {
			statuses = append(statuses, health.Status(r.Health.Status))
		}
	}
	worst := health.Worst(statuses...)
	out := v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusCode(worst)}
	if worst == health.Healthy {
		return out
	}
	for _, r := range resources {
		if r.Health != nil && !r.RequiresPruning && !r.Hook && health.Status(r.Health.Status) == worst {
			out.Message = r.Kind + " " + joinNamespaceName(r.Namespace, r.Name)
			if r.Health.Message != "" {
				out.Message += ": " + r.Health.Message
			}
			break
		}
	}
	return out
}

func joinNamespaceName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
