package application

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/engine/authority"
)

// ruleSourceDenied is the rule of a source the project does not permit.
const ruleSourceDenied = "project-source-denied"

// gate judges the Application and every desired object with the shared
// evaluator at the sync enforcement point, exactly as the CLI and the
// admission webhook would, through door: the Application as fetched, the
// cluster's AppProject (never one the objects include), kinds placed by
// the destination's REST mapper as the applier places them. The door
// remembers what the boundary rules permit for the writes that follow.
func (r *Reconciler) gate(ctx context.Context, door *authority.Door, objs []*unstructured.Unstructured) (authority.Verdict, error) {
	return door.Judge(ctx, objs)
}

// judgeSpec judges the Application of tg alone, before anything is
// fetched, as the gate would.
func (r *Reconciler) judgeSpec(ctx context.Context, tg *target) (authority.Verdict, error) {
	return r.judging().Judge(ctx, tg.app, tg.project, nil, nil)
}
