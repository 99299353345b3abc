package health

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// loadBalancerWait is the message of a Service or Ingress with no address
// yet.
const loadBalancerWait = "Waiting for a load balancer address"

// serviceHealth: a LoadBalancer Service is Progressing until it has an
// ingress address; other Services are Healthy.
func serviceHealth(obj *unstructured.Unstructured) (Result, error) {
	var svc corev1.Service
	if err := fromUnstructured(obj, &svc); err != nil {
		return Result{}, err
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && len(svc.Status.LoadBalancer.Ingress) == 0 {
		return progressing(loadBalancerWait), nil
	}
	return Result{Status: Healthy}, nil
}

// ingressHealth: an Ingress is Progressing until its controller publishes
// an address. The status layout is the same in every Ingress version.
func ingressHealth(obj *unstructured.Unstructured) (Result, error) {
	var status struct {
		Status struct {
			LoadBalancer struct {
				Ingress []map[string]any `json:"ingress"`
			} `json:"loadBalancer"`
		} `json:"status"`
	}
	if err := fromUnstructured(obj, &status); err != nil {
		return Result{}, err
	}
	if len(status.Status.LoadBalancer.Ingress) == 0 {
		return progressing(loadBalancerWait), nil
	}
	return Result{Status: Healthy}, nil
}

// pvcHealth maps the claim phase: Bound is Healthy, Pending Progressing,
// Lost Degraded, anything else Unknown.
func pvcHealth(obj *unstructured.Unstructured) (Result, error) {
	var pvc corev1.PersistentVolumeClaim
	if err := fromUnstructured(obj, &pvc); err != nil {
		return Result{}, err
	}
	switch pvc.Status.Phase {
	case corev1.ClaimBound:
		return Result{Status: Healthy}, nil
	case corev1.ClaimPending:
		return Result{Status: Progressing}, nil
	case corev1.ClaimLost:
		return Result{Status: Degraded, Message: "the bound volume is lost"}, nil
	case "":
		return Result{Status: Unknown, Message: "no claim phase"}, nil
	}
	return Result{Status: Unknown, Message: fmt.Sprintf("unknown claim phase %q", pvc.Status.Phase)}, nil
}
