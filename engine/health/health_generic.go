package health

import (
	"fmt"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// applicationHealth reports an Argo CD Application's own status.health, as
// Argo CD's health check for apps-of-apps does: Progressing until the
// Application has a health status.
func applicationHealth(obj *unstructured.Unstructured) (Result, error) {
	var app struct {
		Status struct {
			Health *struct {
				Status  string `json:"status"`
				Message string `json:"message"`
			} `json:"health"`
		} `json:"status"`
	}
	if err := fromUnstructured(obj, &app); err != nil {
		return Result{}, err
	}
	h := app.Status.Health
	if h == nil || h.Status == "" {
		return Result{Status: Progressing}, nil
	}
	s := Status(h.Status)
	if _, known := order[s]; !known {
		return Result{Status: Unknown, Message: fmt.Sprintf("unknown health status %q", h.Status)}, nil
	}
	return Result{Status: s, Message: h.Message}, nil
}

// workflowHealth reports an Argo Workflows Workflow by its phase, as Argo
// CD's built-in check does: Pending or Running (or no phase yet)
// Progressing, Succeeded Healthy, Failed or Error Degraded, with the
// Workflow's status.message.
func workflowHealth(obj *unstructured.Unstructured) (Result, error) {
	var wf struct {
		Status struct {
			Phase   string `json:"phase"`
			Message string `json:"message"`
		} `json:"status"`
	}
	if err := fromUnstructured(obj, &wf); err != nil {
		return Result{}, err
	}
	st := Unknown
	switch wf.Status.Phase {
	case "", "Pending", "Running":
		st = Progressing
	case "Succeeded":
		st = Healthy
	case "Failed", "Error":
		st = Degraded
	}
	return Result{Status: st, Message: wf.Status.Message}, nil
}

// kstatusHealth maps kstatus results to health statuses.
var kstatusHealth = map[status.Status]Status{
	status.CurrentStatus:     Healthy,
	status.InProgressStatus:  Progressing,
	status.FailedStatus:      Degraded,
	status.TerminatingStatus: Progressing,
	status.NotFoundStatus:    Missing,
	status.UnknownStatus:     Unknown,
}

// assessGeneric judges a kind without a built-in check: Healthy when it has
// no status, else by kstatus.
func assessGeneric(obj *unstructured.Unstructured) (Result, error) {
	st, ok := obj.Object["status"]
	if !ok || st == nil {
		return Result{Status: Healthy}, nil
	}
	if m, isMap := st.(map[string]any); isMap && len(m) == 0 {
		return Result{Status: Healthy}, nil
	}
	res, err := status.Compute(obj)
	if err != nil {
		return Result{}, fmt.Errorf("compute status: %w", err)
	}
	h, known := kstatusHealth[res.Status]
	if !known {
		h = Unknown
	}
	msg := res.Message
	if h == Healthy && msg == "Resource is current" {
		msg = "" // kstatus's default says nothing
	}
	return Result{Status: h, Message: msg}, nil
}
