package webhook

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
)

// maxListedApplications bounds the Application names a DELETE warning lists.
const maxListedApplications = 10

// reviewProject judges an AppProject. CREATE and UPDATE judge the new
// project itself (every time: a project permitting the Argo CD namespace is
// never admitted, even if it already did; an UPDATE of metadata alone when
// it changes the exemption annotation or the tracking metadata), on its own
// or, when an Application tracks it, as that Application's resource, then
// warn about every existing Application the change newly breaks. DELETE is
// allowed, with a warning when Applications still use the project.
func (h *Handler) reviewProject(ctx context.Context, req admission.Request) outcome {
	if req.Operation == admissionv1.Delete {
		return h.projectDeleted(ctx, req)
	}
	obj, old, out, ok := h.objectToJudge(req)
	if !ok {
		return out
	}
	// The rules judge obj as sent; its typed form says which Applications
	// to check against it.
	after, err := decodeAs[v1alpha1.AppProject](obj)
	if err != nil {
		return failed(http.StatusBadRequest, fmt.Errorf("read request object: decode AppProject: %w", err))
	}
	// Argo CD reads AppProjects only from its own namespace: one elsewhere
	// governs no Application (app-namespace reports it).
	var apps []*v1alpha1.Application
	if after.Name != "" && after.Namespace == h.argocdNS {
		if apps, err = h.applicationsOf(ctx, after.Name); err != nil {
			return h.lookupFailed(err)
		}
	}
	// An AppProject an Application deploys (app of apps) is that
	// Application's resource: judged against its project, as the engine's
	// gate and the CLI judge it, so that its own exemption annotation grants
	// nothing to whoever writes the root Application's repository.
	owner, ownerProj, err := h.ownerAndProject(ctx, obj, false)
	if err != nil {
		return h.lookupFailed(err)
	}
	in, err := h.input(req, obj, owner, ownerProj)
	if err != nil {
		return h.lookupFailed(err)
	}
	if in.Context.ExistingApplications, err = h.existingApplications(apps); err != nil {
		return h.lookupFailed(err)
	}
	out = h.judge(ctx, h.claimed(req, in))
	if out.err != nil || len(apps) == 0 {
		return out
	}
	// The project the Applications were judged against until now: the
	// stored one for an UPDATE, none for a CREATE (for "default", Argo
	// CD's implicit project when configured: see inputOptions).
	var before *v1alpha1.AppProject
	if old != nil {
		before, _ = decodeAs[v1alpha1.AppProject](old)
	}
	out.warnings = append(out.warnings, h.tightening(ctx, after.Name, before, after, apps)...)
	return out
}

// tightening judges each Application against the project before and after
// the change and returns one warning per Application that the change newly
// makes violate a deny rule, up to maxProjectWarnings, then a summary. A
// failed evaluation ends the check with a warning saying so: the project
// change itself was judged already.
func (h *Handler) tightening(ctx context.Context, project string, before, after *v1alpha1.AppProject, apps []*v1alpha1.Application) []string {
	couldNot := func(err error) string {
		h.metrics.evaluationErrors.Inc()
		return fmt.Sprintf("could not check the %d Applications of AppProject %q against this change: %v", len(apps), project, err)
	}
	beforeOpts, err := h.reviewedInputOptions(before)
	if err != nil {
		return []string{couldNot(err)}
	}
	afterOpts, err := h.reviewedInputOptions(after)
	if err != nil {
		return []string{couldNot(err)}
	}
	var lines []string
	broken := 0
	for _, app := range apps {
		newly, err := h.newViolations(ctx, app, beforeOpts, afterOpts)
		if err != nil {
			return append(lines, couldNot(err))
		}
		if len(newly) == 0 {
			continue
		}
		broken++
		lineParts := make([]string, len(newly))
		for i, v := range newly {
			h.metrics.tighteningViolations.WithLabelValues(v.Rule).Inc()
			lineParts[i] = violationLine(v)
		}
		if broken <= h.maxProjectWarnings {
			lines = append(lines, fmt.Sprintf("application %q would violate %s", h.applicationRef(app), strings.Join(lineParts, "; ")))
		}
	}
	if more := broken - h.maxProjectWarnings; more > 0 {
		lines = append(lines, fmt.Sprintf("%d more Applications would violate AppProject %q after this change", more, project))
	}
	return lines
}

// newViolations returns the deny violations app has with the project of
// after and not with the project of before (inputOptions of each).
func (h *Handler) newViolations(ctx context.Context, app *v1alpha1.Application, before, after policies.InputOptions) ([]policies.Violation, error) {
	ins, err := h.storedApplicationInputs(app, before, after)
	if err != nil {
		return nil, err
	}
	old, err := h.evaluator().Evaluate(ctx, ins[0])
	if err != nil {
		return nil, err
	}
	cur, err := h.evaluator().Evaluate(ctx, ins[1])
	if err != nil {
		return nil, err
	}
	type key struct{ rule, msg string }
	had := make(map[key]bool, len(old.Violations))
	for _, v := range old.Violations {
		had[key{v.Rule, v.Message}] = true
	}
	var out []policies.Violation
	for _, v := range cur.Violations {
		if v.Severity == policies.SeverityDeny && !had[key{v.Rule, v.Message}] {
			out = append(out, v)
		}
	}
	return out, nil
}

// projectDeleted allows deleting an AppProject, warning when Applications
// still use it: Argo CD stops reconciling them.
func (h *Handler) projectDeleted(ctx context.Context, req admission.Request) outcome {
	if req.Namespace != h.argocdNS || req.Name == "" {
		return skipped("DELETE is not judged")
	}
	apps, err := h.applicationsOf(ctx, req.Name)
	if err != nil {
		// Deleting is never blocked over a warning that cannot be given.
		h.metrics.evaluationErrors.Inc()
		return outcome{note: "list Applications failed", warnings: []string{
			fmt.Sprintf("could not check which Applications use AppProject %q: %v", req.Name, err),
		}}
	}
	if len(apps) == 0 {
		return skipped("DELETE of an unused AppProject")
	}
	names := make([]string, 0, min(len(apps), maxListedApplications))
	for _, app := range apps[:min(len(apps), maxListedApplications)] {
		names = append(names, fmt.Sprintf("%q", h.applicationRef(app)))
	}
	list := strings.Join(names, ", ")
	if len(apps) > maxListedApplications {
		list += fmt.Sprintf(" and %d more", len(apps)-maxListedApplications)
	}
	return outcome{warnings: []string{fmt.Sprintf(
		"AppProject %q is still used by %d Application(s): %s; Argo CD stops reconciling them (project-not-found) until the project is recreated or they move to another project",
		req.Name, len(apps), list)}}
}

// applicationRef names an Application for a warning: its name in the Argo
// CD namespace, "<namespace>/<name>" elsewhere.
func (h *Handler) applicationRef(app *v1alpha1.Application) string {
	if app.Namespace != "" && app.Namespace != h.argocdNS {
		return app.Namespace + "/" + app.Name
	}
	return app.Name
}
