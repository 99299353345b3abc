package webhook

import (
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
)

// This file is where the webhook's typed Applications and AppProjects
// become Rego input: everywhere else they stay v1alpha1 types. The object
// under review is never converted: the rules judge it as it was sent (or,
// in the audit, as it is stored), unknown fields and all, and an
// Application under review is its own Input.Application.

// input assembles the Input of obj, the object under review, the way the
// CLI and the engine do (policies.BuildInputs): app is the Application
// that owns obj (nil: none, or obj is an Application, which is its own)
// and proj the AppProject read from the cache (nil: none). A request
// without a namespace is about a cluster-scoped object, whatever its kind.
func (h *Handler) input(req admission.Request, obj map[string]any, app *v1alpha1.Application, proj *v1alpha1.AppProject) (policies.Input, error) {
	return h.inputAt(policies.PointAdmission, obj, app, proj, clusterScoped(req, obj))
}

// inputAt assembles the Input of obj at point.
func (h *Handler) inputAt(point policies.EnforcementPoint, obj map[string]any, app *v1alpha1.Application, proj *v1alpha1.AppProject, clusterScoped bool) (policies.Input, error) {
	opts, err := h.inputOptions(proj)
	if err != nil {
		return policies.Input{}, err
	}
	opts.Point = point
	item := policies.Item{Object: obj}
	if app != nil {
		if item.Application, err = h.maps.application(app); err != nil {
			return policies.Input{}, err
		}
	}
	in := policies.BuildInputs(opts, []policies.Item{item})[0]
	in.Context.ClusterScoped = clusterScoped
	return in, nil
}

// inputOptions are the options of BuildInputs at admission: the project
// from the cache (nil: none, or Argo CD's implicit default project when
// configured), never one from the object under review.
func (h *Handler) inputOptions(proj *v1alpha1.AppProject) (policies.InputOptions, error) {
	return h.inputOptionsWith(proj, h.maps.project)
}

// reviewedInputOptions are inputOptions with a project a review carries
// (its object or oldObject, to compare the Applications against): it has
// the stored project's uid, and may have its resourceVersion while its
// content differs, so its map is converted afresh, never kept.
func (h *Handler) reviewedInputOptions(proj *v1alpha1.AppProject) (policies.InputOptions, error) {
	return h.inputOptionsWith(proj, func(p *v1alpha1.AppProject) (map[string]any, error) {
		return policies.ObjectMap(p, v1alpha1.GroupVersion.String(), v1alpha1.AppProjectKind)
	})
}

func (h *Handler) inputOptionsWith(proj *v1alpha1.AppProject, projectMap func(*v1alpha1.AppProject) (map[string]any, error)) (policies.InputOptions, error) {
	opts := policies.InputOptions{
		Point:                  policies.PointAdmission,
		ArgoCDNamespace:        h.argocdNS,
		ImplicitDefaultProject: h.cfg.ImplicitDefaultProject,
	}
	if proj != nil {
		m, err := projectMap(proj)
		if err != nil {
			return opts, err
		}
		opts.Projects = []map[string]any{m}
	}
	return opts, nil
}

// storedApplicationInputs returns the Inputs of app, an Application from
// the cache judged on its own, one for each of opts (inputOptions of the
// projects to compare).
func (h *Handler) storedApplicationInputs(app *v1alpha1.Application, opts ...policies.InputOptions) ([]policies.Input, error) {
	m, err := h.maps.application(app)
	if err != nil {
		return nil, err
	}
	ins := make([]policies.Input, len(opts))
	for i, o := range opts {
		ins[i] = policies.BuildInputs(o, []policies.Item{{Object: m}})[0]
	}
	return ins, nil
}

// existingApplications returns apps as Context.ExistingApplications holds
// them.
func (h *Handler) existingApplications(apps []*v1alpha1.Application) ([]map[string]any, error) {
	if len(apps) == 0 {
		return nil, nil
	}
	out := make([]map[string]any, len(apps))
	for i, app := range apps {
		m, err := h.maps.application(app)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// clusterScoped reports whether obj is cluster-scoped: a built-in
// cluster-scoped kind, or any object the request names no namespace for.
func clusterScoped(req admission.Request, obj map[string]any) bool {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return req.Namespace == "" || policies.IsClusterScoped(policies.GroupOf(apiVersion), kind)
}
