package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// apiServiceHealth: an APIService is Healthy when its Available condition
// is True, else Progressing.
func apiServiceHealth(obj *unstructured.Unstructured) (Result, error) {
	conds, err := statusConditions(obj)
	if err != nil {
		return Result{}, err
	}
	for _, c := range conds {
		if c.Type != "Available" {
			continue
		}
		msg := fmt.Sprintf("%s: %s", c.Reason, c.Message)
		if c.Status == "True" {
			return Result{Status: Healthy, Message: msg}, nil
		}
		return progressing(msg), nil
	}
	return progressing("Waiting to be processed"), nil
}

// crdHealth: a CustomResourceDefinition is Progressing while terminating,
// before its controller reports, or while it is being installed; Degraded
// when its names are not accepted, it is not established, or its schema is
// not structural.
func crdHealth(obj *unstructured.Unstructured) (Result, error) {
	conds, err := statusConditions(obj)
	if err != nil {
		return Result{}, err
	}
	if len(conds) == 0 {
		return progressing("Status conditions not found"), nil
	}
	// Each problem keeps the message of its own condition (Argo CD keeps
	// whichever condition came last).
	var terminating, namesRejected, notEstablished, nonStructural *condition
	established := false
	for i := range conds {
		c := &conds[i]
		switch {
		case c.Type == "Terminating" && c.Status == "True":
			terminating = c
		case c.Type == "NamesAccepted" && c.Status == "False":
			namesRejected = c
		case c.Type == "Established" && c.Status == "True":
			established = true
		case c.Type == "Established":
			notEstablished = c
		case c.Type == "NonStructuralSchema" && c.Status == "True":
			nonStructural = c
		}
	}
	switch {
	case terminating != nil:
		return progressing("CRD is being terminated: " + terminating.Message), nil
	case namesRejected != nil:
		return Result{Status: Degraded, Message: "CRD names have not been accepted: " + namesRejected.Message}, nil
	case !established:
		msg := "CRD is not established"
		if notEstablished != nil {
			msg += ": " + notEstablished.Message
		}
		// The API server sets reason Installing for the moment between
		// accepting the names and serving the kind; Argo CD's script calls
		// that Degraded too, but its next look a few seconds later sees it
		// established, while a wave that waits on it here would fail.
		if notEstablished != nil && notEstablished.Reason == "Installing" {
			return progressing(msg), nil
		}
		return Result{Status: Degraded, Message: msg}, nil
	case nonStructural != nil:
		return Result{Status: Degraded, Message: "Schema violations found: " + nonStructural.Message}, nil
	}
	return Result{Status: Healthy, Message: "CRD is healthy"}, nil
}
