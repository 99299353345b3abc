package application

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// requestedApplication returns app as a sync operation asks for it: a copy
// whose spec.source or spec.sources are the operation's when it sets them (a
// rollback, `app sync --source`, anyone patching operation.sync), and whose
// targetRevisions are the operation's revision (the first source) or
// revisions (one per source) where set. This Application is the one judged
// before anything is fetched (judgeBeforeFetch), the one whose sources are
// fetched, and the one the gate judges with the rendered objects.
func requestedApplication(app *v1alpha1.Application, op *v1alpha1.SyncOperation) *v1alpha1.Application {
	out := app.DeepCopy()
	switch {
	case len(op.Sources) > 0:
		out.Spec.Source, out.Spec.Sources = nil, make([]v1alpha1.ApplicationSource, len(op.Sources))
		for i := range op.Sources {
			op.Sources[i].DeepCopyInto(&out.Spec.Sources[i])
		}
	case op.Source != nil:
		out.Spec.Source, out.Spec.Sources = op.Source.DeepCopy(), nil
	}
	revs := op.RevisionsFor(out.Spec.HasMultipleSources())
	switch {
	case out.Spec.HasMultipleSources():
		for i := range out.Spec.Sources {
			if i < len(revs) && revs[i] != "" {
				out.Spec.Sources[i].TargetRevision = revs[i]
			}
		}
	case out.Spec.Source != nil && len(revs) > 0 && revs[0] != "":
		out.Spec.Source.TargetRevision = revs[0]
	}
	return out
}

// judgeBeforeFetch judges the Application as it is about to be fetched
// (tg.app: spec, or for a sync operation a copy with the operation's
// sources and revisions in its spec) before anything is fetched, with the
// same evaluator and project as the gate: nothing is fetched, let alone
// applied, from a source the project does not permit. For an operation any
// denial fails it (conditions PolicyViolation and SyncError, operation
// state Failed naming the rules); otherwise only a source the project does
// not permit (project-source-denied) ends the pass here, and other denials
// are left to the gate, which lists the rendered objects' too. After a
// denial the last comparison is forgotten, so the next pass judges spec
// again and clears the conditions once it is allowed.
//
// A spec and project allowed before (same identity, without the render and
// the revisions) are not judged again: the verdict depends on nothing else.
//
// The outcome is the denial's (stepGate); an allowed spec has none, as the
// gate has yet to judge what it renders.
func (r *Reconciler) judgeBeforeFetch(ctx context.Context, p *pass, tg *target) (bool, outcome, error) {
	var id string
	if tg.op == nil {
		var err error
		if id, err = identity(tg.app, tg.project, "", "", nil); err != nil {
			return false, outcome{}, err
		}
		if r.allowedBefore(p.key, id) {
			return true, outcome{}, nil
		}
	}
	v, err := r.judgeSpec(ctx, tg)
	if err != nil {
		return false, outcome{}, err
	}
	if v.Allowed() || (tg.op == nil && !v.Denies(ruleSourceDenied)) {
		if id != "" {
			r.rememberAllowed(p.key, id)
		}
		return true, outcome{}, nil
	}
	ctrl.LoggerFrom(ctx).Info("Refused by policy before fetching", "operation", tg.op != nil, "denials", len(v.Denied))
	denied := r.deny(p, v, nil)
	r.forget(p.key)
	return false, denied, nil
}
