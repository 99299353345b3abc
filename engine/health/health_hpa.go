package health

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// hpaConditionsAnnotation holds the conditions of an autoscaling/v1 HPA.
const hpaConditionsAnnotation = "autoscaling.alpha.kubernetes.io/conditions"

// hpaWait is the message of an HPA with no decisive condition.
const hpaWait = "Waiting to Autoscale"

// condition is the common shape of status conditions.
type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// hpaDegraded are the condition type/reason pairs Argo CD treats as a
// broken autoscaler.
var hpaDegraded = map[[2]string]bool{
	{"AbleToScale", "FailedGetScale"}:                 true,
	{"AbleToScale", "FailedUpdateScale"}:              true,
	{"ScalingActive", "FailedGetResourceMetric"}:      true,
	{"ScalingActive", "FailedGetObjectMetric"}:        true,
	{"ScalingActive", "FailedGetPodsMetric"}:          true,
	{"ScalingActive", "FailedGetExternalMetric"}:      true,
	{"ScalingActive", "FailedComputeMetricsReplicas"}: true,
	{"ScalingActive", "InvalidSelector"}:              true,
}

// hpaHealth follows Argo CD: a degraded condition (a failure reason above)
// anywhere decides, else the first healthy one (AbleToScale or
// ScalingLimited True); otherwise the HPA is Progressing. autoscaling/v1 keeps its
// conditions as JSON in an annotation.
func hpaHealth(obj *unstructured.Unstructured) (Result, error) {
	var conds []condition
	if obj.GroupVersionKind().Version == "v1" {
		raw, ok := obj.GetAnnotations()[hpaConditionsAnnotation]
		if !ok {
			return progressing(hpaWait), nil
		}
		if err := json.Unmarshal([]byte(raw), &conds); err != nil {
			return Result{}, fmt.Errorf("read annotation %s: %w", hpaConditionsAnnotation, err)
		}
	} else {
		var err error
		if conds, err = statusConditions(obj); err != nil {
			return Result{}, err
		}
	}
	for _, c := range conds {
		if hpaDegraded[[2]string{c.Type, c.Reason}] {
			return Result{Status: Degraded, Message: c.Message}, nil
		}
	}
	for _, c := range conds {
		if (c.Type == "AbleToScale" || c.Type == "ScalingLimited") && c.Status == "True" {
			return Result{Status: Healthy, Message: c.Message}, nil
		}
	}
	return progressing(hpaWait), nil
}

// statusConditions reads status.conditions.
func statusConditions(obj *unstructured.Unstructured) ([]condition, error) {
	var s struct {
		Status struct {
			Conditions []condition `json:"conditions"`
		} `json:"status"`
	}
	if err := fromUnstructured(obj, &s); err != nil {
		return nil, err
	}
	return s.Status.Conditions, nil
}
