package authority

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
)

// BoundaryRules are the rules a Door judges every write by: those that keep
// an Application's objects inside its AppProject.
var BoundaryRules = []string{"project-destination-denied", "project-resource-denied", "protected-namespace"}

// Judging is how the engine turns an Application, its AppProject and
// objects into policy inputs at the sync enforcement point: the gate's
// full evaluation and a Door's boundary checks share it.
type Judging struct {
	Evaluator Evaluator
	// Namespace is the control-plane (Argo CD) namespace.
	Namespace string
	// ImplicitDefaultProject makes a missing "default" project Argo CD's
	// allow-all default.
	ImplicitDefaultProject bool
}

// Verdict is the outcome of judging an Application and objects.
type Verdict struct {
	// Denied are the violations of severity deny, sorted by ViolationLine.
	Denied []policies.Violation
	// Warnings are the violations of severity warn.
	Warnings []policies.Violation
}

// Allowed reports whether nothing was denied.
func (v Verdict) Allowed() bool { return len(v.Denied) == 0 }

// Denies reports whether rule denied something.
func (v Verdict) Denies(rule string) bool {
	return slices.ContainsFunc(v.Denied, func(x policies.Violation) bool { return x.Rule == rule })
}

// Message is one ViolationLine per denial.
func (v Verdict) Message() string {
	lines := make([]string, 0, len(v.Denied))
	for _, x := range v.Denied {
		lines = append(lines, ViolationLine(x))
	}
	return strings.Join(lines, "\n")
}

// ViolationLine formats a violation as `[rule] Kind/ns/name: message`.
func ViolationLine(v policies.Violation) string {
	ref := v.Object.Kind
	if v.Object.Namespace != "" {
		ref += "/" + v.Object.Namespace
	}
	ref += "/" + v.Object.Name
	return fmt.Sprintf("[%s] %s: %s", v.Rule, ref, v.Message)
}

// Judge evaluates app (with its project, nil when missing) and objs with
// every rule. mapper places kinds as the destination serves them; nil uses
// the built-in table (no objects to place).
func (j Judging) Judge(ctx context.Context, app *v1alpha1.Application, project *v1alpha1.AppProject, objs []*unstructured.Unstructured, mapper meta.RESTMapper) (Verdict, error) {
	v, _, err := j.bind(app, project, mapper).judge(ctx, objs)
	return v, err
}

// bound is a Judging bound to one Application and project, remembering
// which objects the boundary rules permit.
type bound struct {
	j       Judging
	app     *v1alpha1.Application
	project *v1alpha1.AppProject
	mapper  meta.RESTMapper

	convert sync.Once
	// appMap is the Application as policy input, without its runtime
	// state (policies.WithoutRuntimeState).
	appMap     map[string]any
	opts       policies.InputOptions
	convertErr error

	mu sync.Mutex
	// permitted remembers the boundary outcome per object key: true when
	// no boundary rule denies it.
	permitted map[objectKey]bool
	// appJudged is set once the Application itself has been judged, and
	// appBoundary are then its boundary-rule denials (its destination).
	appJudged   bool
	appBoundary []policies.Violation
}

// objectKey is what the boundary rules read of an object, besides the
// Application and its project.
type objectKey struct {
	group, kind, namespace, name string
}

func keyOf(obj *unstructured.Unstructured) objectKey {
	gvk := obj.GroupVersionKind()
	return objectKey{gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName()}
}

// bind binds j to app and project; nothing is converted until judge.
func (j Judging) bind(app *v1alpha1.Application, project *v1alpha1.AppProject, mapper meta.RESTMapper) *bound {
	return &bound{j: j, app: app, project: project, mapper: mapper, permitted: map[objectKey]bool{}}
}

// inputs converts the Application and the project to policy input, once.
func (b *bound) inputs() error {
	b.convert.Do(func() {
		var app map[string]any
		app, b.convertErr = policies.ObjectMap(b.app, v1alpha1.ApplicationGroupVersionKind.GroupVersion().String(), v1alpha1.ApplicationKind)
		if b.convertErr != nil {
			return
		}
		// The live Application's status is this controller's own output:
		// the rules judge its spec and metadata.
		b.appMap = policies.WithoutRuntimeState(app)
		b.opts = policies.InputOptions{
			Point:                  policies.PointSync,
			ArgoCDNamespace:        b.j.Namespace,
			ImplicitDefaultProject: b.j.ImplicitDefaultProject,
		}
		if b.project != nil {
			var p map[string]any
			if p, b.convertErr = policies.ObjectMap(b.project, v1alpha1.GroupVersion.String(), v1alpha1.AppProjectKind); b.convertErr != nil {
				return
			}
			b.opts.Projects = []map[string]any{p}
		}
		if b.mapper != nil {
			b.opts.Scope = mapperScope{b.mapper}
		}
	})
	return b.convertErr
}

// judge evaluates the Application and objs with every rule, and remembers
// the boundary outcome of each object. boundary are the boundary-rule
// denials among the verdict's.
func (b *bound) judge(ctx context.Context, objs []*unstructured.Unstructured) (v Verdict, boundary []policies.Violation, err error) {
	if err := b.inputs(); err != nil {
		return Verdict{}, nil, err
	}
	items := make([]policies.Item, 0, len(objs)+1)
	items = append(items, policies.Item{Object: b.appMap})
	for _, o := range objs {
		items = append(items, policies.Item{Object: o.Object, Application: b.appMap})
	}
	ins := policies.BuildInputs(b.opts, items)
	// The live Application carries this controller's own operation fence;
	// a rendered Application carrying one is denied.
	ins[0].Context.ReservedAnnotations = nil
	decisions, err := b.j.Evaluator.EvaluateAll(ctx, ins)
	if err != nil {
		return Verdict{}, nil, fmt.Errorf("evaluate policies: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, d := range decisions {
		ok := true
		var app []policies.Violation
		for _, x := range d.Violations {
			switch x.Severity {
			case policies.SeverityDeny:
				v.Denied = append(v.Denied, x)
				if slices.Contains(BoundaryRules, x.Rule) {
					ok = false
					if i > 0 {
						boundary = append(boundary, x)
					} else {
						app = append(app, x)
					}
				}
			case policies.SeverityWarn:
				v.Warnings = append(v.Warnings, x)
			}
		}
		if i > 0 {
			b.permitted[keyOf(objs[i-1])] = ok
		} else {
			b.appJudged, b.appBoundary = true, app
		}
	}
	slices.SortStableFunc(v.Denied, func(a, b policies.Violation) int {
		return strings.Compare(ViolationLine(a), ViolationLine(b))
	})
	return v, boundary, nil
}

// admit records objs as permitted by an earlier verdict.
func (b *bound) admit(objs []*unstructured.Unstructured) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, o := range objs {
		b.permitted[keyOf(o)] = true
	}
}

// permit judges objs by the boundary rules (those judged before are not
// evaluated again) and returns a *RefusedError naming every object the
// project does not permit, or nil. With application, the Application
// itself is judged by them too (its destination, as the gate judges it).
func (b *bound) permit(ctx context.Context, verb string, objs []*unstructured.Unstructured, application bool) error {
	if b.project == nil && !(b.j.ImplicitDefaultProject && b.app.ProjectName() == "default") {
		if len(objs) == 0 && !application {
			return nil
		}
		return &RefusedError{Verb: verb, Project: b.app.ProjectName(), Violations: []policies.Violation{{
			Rule: "project-not-found", Severity: policies.SeverityDeny,
			Object:  policies.ObjectRef{Kind: v1alpha1.ApplicationKind, Namespace: b.app.Namespace, Name: b.app.Name},
			Message: fmt.Sprintf("AppProject %q does not exist, so it permits nothing", b.app.ProjectName()),
		}}}
	}
	var unjudged, refused []*unstructured.Unstructured
	b.mu.Lock()
	for _, o := range objs {
		ok, judged := b.permitted[keyOf(o)]
		switch {
		case !judged:
			unjudged = append(unjudged, o)
		case !ok:
			refused = append(refused, o)
		}
	}
	appJudged := b.appJudged
	b.mu.Unlock()
	var violations []policies.Violation
	if application && !appJudged && len(unjudged) == 0 {
		// Judge the Application alone.
		if _, _, err := b.judge(ctx, nil); err != nil {
			return fmt.Errorf("%s: %w", verb, err)
		}
	}
	if len(unjudged) > 0 {
		_, boundary, err := b.judge(ctx, unjudged)
		if err != nil {
			return fmt.Errorf("%s: %w", verb, err)
		}
		violations = boundary
	}
	if len(refused) > 0 {
		// Judged before with every rule; judge again for the messages.
		_, boundary, err := b.judge(ctx, refused)
		if err != nil {
			return fmt.Errorf("%s: %w", verb, err)
		}
		violations = append(violations, boundary...)
	}
	if application {
		b.mu.Lock()
		violations = append(violations, b.appBoundary...)
		b.mu.Unlock()
	}
	if len(violations) == 0 {
		return nil
	}
	slices.SortStableFunc(violations, func(a, b policies.Violation) int {
		return strings.Compare(ViolationLine(a), ViolationLine(b))
	})
	violations = slices.CompactFunc(violations, func(a, b policies.Violation) bool { return ViolationLine(a) == ViolationLine(b) })
	return &RefusedError{Verb: verb, Project: b.app.ProjectName(), Violations: violations}
}

// VerbDiff is the verb of a refused diff (Door.DiffDetailed, and the
// live objects a diff would show as to be pruned).
const VerbDiff = "diff"

// RefusedError is a write the Application's project does not permit:
// nothing of it was written; or a diff it does not permit: no live object
// of it is shown.
type RefusedError struct {
	// Verb is what was refused: "sync", "prune", "delete", "diff", ...
	Verb    string
	Project string
	// Violations name each object and rule, sorted.
	Violations []policies.Violation
}

// Error lists the refused objects, one ViolationLine each.
func (e *RefusedError) Error() string {
	lines := make([]string, 0, len(e.Violations))
	for _, v := range e.Violations {
		lines = append(lines, ViolationLine(v))
	}
	done := "nothing was written"
	if e.Verb == VerbDiff {
		done = "no live object is shown"
	}
	return fmt.Sprintf("%s refused: AppProject %q does not permit it, %s:\n%s", e.Verb, e.Project, done, strings.Join(lines, "\n"))
}

// IsRefused reports whether err is or wraps a *RefusedError.
func IsRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}

// mapperScope places kinds by a destination's REST mapper: what the
// cluster serves, with the scope it serves it in.
type mapperScope struct {
	mapper meta.RESTMapper
}

// Scope implements policies.KindScope.
func (m mapperScope) Scope(group, kind string) (clusterScoped, known bool) {
	mapping, err := m.mapper.RESTMapping(schema.GroupKind{Group: group, Kind: kind})
	if err != nil {
		return false, false
	}
	return mapping.Scope.Name() == meta.RESTScopeNameRoot, true
}
