package engine

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/policies"
)

// verdict is the outcome of the gate for one desired state.
type verdict struct {
	// denied are the violations of severity deny, sorted.
	denied []policies.Violation
	// warnings are the violations of severity warn.
	warnings []policies.Violation
}

// allowed reports whether nothing was denied.
func (v verdict) allowed() bool { return len(v.denied) == 0 }

// ruleSourceDenied is the rule of a source the project does not permit.
const ruleSourceDenied = "project-source-denied"

// denies reports whether rule denied something.
func (v verdict) denies(rule string) bool {
	for _, x := range v.denied {
		if x.Rule == rule {
			return true
		}
	}
	return false
}

// message is one line per denial: `[rule] Kind/ns/name: message`.
func (v verdict) message() string {
	return authority.Verdict{Denied: v.denied}.Message()
}

// violationLine formats a violation as `[rule] Kind/ns/name: message`.
func violationLine(v policies.Violation) string { return authority.ViolationLine(v) }

// gate judges the Application and every desired object with the shared
// evaluator at the sync enforcement point, exactly as the CLI and the
// admission webhook would, through door: the Application as fetched, the
// cluster's AppProject (never one the objects include), kinds placed by
// the destination's REST mapper as the applier places them. The door
// remembers what the boundary rules permit for the writes that follow.
func (r *Reconciler) gate(ctx context.Context, door *authority.Door, objs []*unstructured.Unstructured) (verdict, error) {
	v, err := door.Judge(ctx, objs)
	return verdict{denied: v.Denied, warnings: v.Warnings}, err
}

// judgeSpec judges the Application of tg alone, before anything is
// fetched, as the gate would.
func (r *Reconciler) judgeSpec(ctx context.Context, tg *target) (verdict, error) {
	v, err := r.judging().Judge(ctx, tg.app, tg.project, nil, nil)
	return verdict{denied: v.Denied, warnings: v.Warnings}, err
}
