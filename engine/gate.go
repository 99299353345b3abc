package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
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
	lines := make([]string, 0, len(v.denied))
	for _, x := range v.denied {
		lines = append(lines, violationLine(x))
	}
	return strings.Join(lines, "\n")
}

func violationLine(v policies.Violation) string {
	ref := v.Object.Kind
	if v.Object.Namespace != "" {
		ref += "/" + v.Object.Namespace
	}
	ref += "/" + v.Object.Name
	return fmt.Sprintf("[%s] %s: %s", v.Rule, ref, v.Message)
}

// gate judges the Application and every desired object with the shared
// evaluator at the sync enforcement point, exactly as the CLI and the
// admission webhook would. project is nil when the AppProject does not
// exist; it is the cluster's, never one the objects include. mapper is the
// destination's REST mapper, which places kinds as the applier does (nil
// when there are no objects to place).
func (r *Reconciler) gate(ctx context.Context, app *v1alpha1.Application, project *v1alpha1.AppProject, objs []*unstructured.Unstructured, mapper meta.RESTMapper) (verdict, error) {
	appMap, err := toMap(app, v1alpha1.ApplicationGroupVersionKind.GroupVersion().String(), v1alpha1.ApplicationKind)
	if err != nil {
		return verdict{}, err
	}
	var projects []map[string]any
	if project != nil {
		p, err := toMap(project, v1alpha1.GroupVersion.String(), v1alpha1.AppProjectKind)
		if err != nil {
			return verdict{}, err
		}
		projects = append(projects, p)
	}
	items := make([]policies.Item, 0, len(objs)+1)
	items = append(items, policies.Item{Object: appMap})
	for _, o := range objs {
		items = append(items, policies.Item{Object: o.Object, Application: appMap})
	}
	opts := policies.InputOptions{
		Point:                  policies.PointSync,
		ArgoCDNamespace:        r.opts.Namespace,
		Projects:               projects,
		ImplicitDefaultProject: r.opts.ImplicitDefaultProject,
	}
	if mapper != nil {
		opts.Scope = mapperScope{mapper}
	}
	ins := policies.BuildInputs(opts, items)
	// The live Application carries this controller's own operation fence;
	// a rendered Application carrying one is denied.
	ins[0].Context.ReservedAnnotations = nil
	decisions, err := r.evaluator.EvaluateAll(ctx, ins)
	if err != nil {
		return verdict{}, fmt.Errorf("evaluate policies: %w", err)
	}
	var v verdict
	for _, d := range decisions {
		for _, x := range d.Violations {
			switch x.Severity {
			case policies.SeverityDeny:
				v.denied = append(v.denied, x)
			case policies.SeverityWarn:
				v.warnings = append(v.warnings, x)
			}
		}
	}
	slices.SortStableFunc(v.denied, func(a, b policies.Violation) int {
		return strings.Compare(violationLine(a), violationLine(b))
	})
	return v, nil
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

// toMap converts a typed object to the plain map the policies read, with
// apiVersion and kind set (objects from the cache carry no TypeMeta).
func toMap(obj runtime.Object, apiVersion, kind string) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %s: %w", kind, err)
	}
	m["apiVersion"], m["kind"] = apiVersion, kind
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	return m, nil
}
