package webhook

import (
	"context"
	"fmt"
	"maps"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// reviewEphemeralContainers judges a write of the pods/ephemeralcontainers
// sub-resource (kubectl debug). The request carries the whole Pod; only the
// ephemeral containers it adds are judged, as containers of a Pod that has
// no others: the Pod's containers are immutable and were admitted with it
// (perhaps from an exempt controller or in audit mode), and ephemeral
// containers can be neither changed nor removed once added. The Pod is
// judged without its Application, so that a debug container is held to the
// image rules only, not to a project changed since the Pod was created.
func (h *Handler) reviewEphemeralContainers(ctx context.Context, req admission.Request) outcome {
	pod, err := decodeObject(req.Object)
	if err != nil {
		return failed(http.StatusBadRequest, fmt.Errorf("read request object: %w", err))
	}
	completeObject(pod, req)
	old, err := decodeObject(req.OldObject)
	if err != nil {
		old = nil // judge every ephemeral container
	}
	added := addedEphemeralContainers(pod, old)
	if len(added) == 0 {
		return skipped("no ephemeral container added")
	}
	spec, _ := pod["spec"].(map[string]any)
	spec = maps.Clone(spec)
	if spec == nil {
		spec = map[string]any{}
	}
	delete(spec, "containers")
	delete(spec, "initContainers")
	spec["ephemeralContainers"] = added
	judged := maps.Clone(pod)
	judged["spec"] = spec
	in, err := h.input(req, judged, nil, nil)
	if err != nil {
		return h.lookupFailed(err)
	}
	return h.judge(ctx, in)
}

// addedEphemeralContainers returns the ephemeral containers of pod that old
// lacks, by name; every one when old is nil or has none. An entry that is
// not an object, or has no name, is kept for the rules to judge.
func addedEphemeralContainers(pod, old map[string]any) []any {
	containers, ok := ephemeralContainers(pod)
	if !ok {
		return nil
	}
	before, ok := ephemeralContainers(old)
	if !ok {
		return containers
	}
	known := map[string]bool{}
	for _, c := range before {
		if m, ok := c.(map[string]any); ok {
			if name, _ := m["name"].(string); name != "" {
				known[name] = true
			}
		}
	}
	var added []any
	for _, c := range containers {
		m, ok := c.(map[string]any)
		if !ok {
			added = append(added, c)
			continue
		}
		if name, _ := m["name"].(string); name == "" || !known[name] {
			added = append(added, c)
		}
	}
	return added
}

// ephemeralContainers returns spec.ephemeralContainers of pod; ok is false
// when pod is nil or the field is absent or not a list.
func ephemeralContainers(pod map[string]any) (list []any, ok bool) {
	spec, _ := pod["spec"].(map[string]any)
	list, ok = spec["ephemeralContainers"].([]any)
	return list, ok
}
