package policies

import (
	"fmt"
	"reflect"
	"slices"
)

// AnnotationOperationReplica is the annotation with which tollgate's
// controller fences a running operation to one controller replica: while
// it names a live replica, every other replica leaves the Application
// alone. Only the controller may write it (rule reserved-annotation).
const AnnotationOperationReplica = "tollgate.dev/operation-replica"

// reservedAnnotations are the Application annotations only tollgate's
// controller writes.
var reservedAnnotations = []string{AnnotationOperationReplica}

// ruleReservedAnnotation is the rule id of a reserved annotation written
// by anyone but the controller.
const ruleReservedAnnotation = "reserved-annotation"

// ReservedAnnotationsOf returns the reserved annotations an Application
// carries, in a fixed order; nil for any other object.
func ReservedAnnotationsOf(obj map[string]any) []string {
	if !isKind(obj, "argoproj.io", "Application") {
		return nil
	}
	annotations, _ := nestedMap(obj, "metadata", "annotations")
	var out []string
	for _, key := range reservedAnnotations {
		if _, ok := annotations[key]; ok {
			out = append(out, key)
		}
	}
	return out
}

// ReservedAnnotationChanges returns the reserved annotations that differ
// (added, changed or removed) between two versions of an Application; old
// is nil for a new one.
func ReservedAnnotationChanges(old, cur map[string]any) []string {
	if !isKind(cur, "argoproj.io", "Application") {
		return nil
	}
	before, _ := nestedMap(old, "metadata", "annotations")
	after, _ := nestedMap(cur, "metadata", "annotations")
	var out []string
	for _, key := range reservedAnnotations {
		b, hadB := before[key]
		a, hasA := after[key]
		if hadB != hasA || !reflect.DeepEqual(b, a) {
			out = append(out, key)
		}
	}
	return out
}

// reservedAnnotationViolations denies each annotation of
// Context.ReservedAnnotations.
func reservedAnnotationViolations(in Input) []Violation {
	out := make([]Violation, 0, len(in.Context.ReservedAnnotations))
	for _, key := range slices.Compact(slices.Sorted(slices.Values(in.Context.ReservedAnnotations))) {
		out = append(out, Violation{
			Rule:     ruleReservedAnnotation,
			Severity: SeverityDeny,
			Message: fmt.Sprintf("the annotation %q of %s is reserved for tollgate's controller, which writes it while a sync runs to keep the other controller replicas away; a manifest or a user may not set, change or remove it",
				key, describeObject(in.Object)),
			Path: []any{"metadata", "annotations", key},
		})
	}
	return out
}
