package appset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/jsonvalue"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// MaxParameterSets bounds the parameter sets one generator, and one
// ApplicationSet, may produce: a matrix of two long lists would otherwise
// make the process that generates them hold millions of Applications.
const MaxParameterSets = 10000

// MaxApplicationBytes bounds one generated Application's JSON: etcd's
// default request limit (--max-request-bytes, 1.5 MiB), which the API
// server would refuse it at anyway. A template that repeats a string
// without end is stopped in the process that executes it, before the
// repo-server and the controller decode what it made.
const MaxApplicationBytes = 1536 << 10

// GitReader checks out the repositories of git generators.
type GitReader interface {
	// Checkout returns a directory holding repoURL at revision ("" is the
	// default branch), which the generator only reads.
	Checkout(ctx context.Context, repoURL, revision string) (string, error)
}

// Sources are what the generators read. A nil field refuses the generators
// that need it, naming them.
type Sources struct {
	// Git serves git generators.
	Git GitReader
	// Clusters are Argo CD's cluster Secrets, for clusters generators:
	// every Secret the caller knows in the Argo CD namespace (those without
	// the label argocd.argoproj.io/secret-type=cluster are skipped), best
	// as reposerver.ClusterSecretsForGeneration leaves them, without credentials.
	Clusters func(ctx context.Context) ([]corev1.Secret, error)
	// Permit, when set, is asked before a git generator (field, e.g.
	// spec.generators[0].git) reads repoURL, as rendered; its error
	// refuses the generator and nothing is read (reposerver.GitAccess.Check).
	Permit func(ctx context.Context, field, repoURL string) error
	// SCM serves pull request and SCM provider generators.
	SCM SCMLister
	// Plugins serves plugin generators.
	Plugins PluginCaller
	// Decisions are the cluster decisions of clusterDecisionResource
	// generators, by the generator's field, as the controller read them
	// (reposerver.AppSetRequest.Decisions).
	Decisions map[string]reposerver.ClusterDecisions
}

// ErrNotGeneratedHere is wrapped by the error of a generator that needs
// what only the controller and its repo-server have (a provider's API, a
// plugin, a cluster decision resource): tollgate test notes such an
// ApplicationSet rather than failing on it.
var ErrNotGeneratedHere = errors.New("not generated here")

// UnsupportedError refuses a field of an ApplicationSet tollgate does not
// implement, naming it.
type UnsupportedError struct {
	// Field is the JSON path of the field, e.g. spec.generators[0].plugin.
	Field string
	// Why says what is not implemented.
	Why string
}

func (e *UnsupportedError) Error() string {
	return e.Field + " is not supported: " + e.Why
}

// Error is a generation error with the reason Argo CD reports it under
// (ApplicationGenerationFromParamsError or RenderTemplateParamsError).
type Error struct {
	Reason string
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ReasonOf is the reason Argo CD reports a generation error under: an
// *Error's, ApplicationGenerationFromParamsError for an unsupported field,
// "" for any other error.
func ReasonOf(err error) string {
	var ge *Error
	var ue *UnsupportedError
	switch {
	case errors.As(err, &ge):
		return ge.Reason
	case errors.As(err, &ue):
		return v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError
	}
	return ""
}

// Generate renders the Applications of set: for each top-level generator
// in order, its parameter sets (filtered by its selector), each rendering
// the generator's template over spec.template, with spec.templatePatch
// applied, the resources finalizer added unless the template sets
// finalizers or preserveResourcesOnDeletion is on, and the namespace
// forced to the ApplicationSet's, as Argo CD does. The first error ends
// the generation: Argo CD then changes nothing.
func Generate(ctx context.Context, set *v1alpha1.ApplicationSet, src Sources) ([]reposerver.Generated, error) {
	spec := &set.Spec
	r, err := newRenderer(spec.GoTemplate, spec.GoTemplateOptions)
	if err != nil {
		return nil, &Error{Reason: v1alpha1.ApplicationSetReasonRenderTemplateParamsError, Err: err}
	}
	g := &generator{r: r, src: src, setName: set.Name}
	base, err := toMap(spec.Template)
	if err != nil {
		return nil, err
	}
	var out []reposerver.Generated
	for i, gen := range spec.Generators {
		field := fmt.Sprintf("spec.generators[%d]", i)
		raw, err := toMap(gen)
		if err != nil {
			return nil, err
		}
		sets, err := g.params(ctx, field, raw, nil, 0)
		if err != nil {
			return nil, &Error{Reason: v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError, Err: err}
		}
		tmpl := mergeTemplate(v1alpha1.GeneratorTemplate(raw), base)
		for _, s := range sets {
			app, err := g.render(tmpl, s.params, spec)
			if err != nil {
				return nil, &Error{Reason: v1alpha1.ApplicationSetReasonRenderTemplateParamsError, Err: fmt.Errorf("%s: %w", field, err)}
			}
			app["metadata"].(map[string]any)["namespace"] = set.Namespace
			if err := applicationSize(app); err != nil {
				return nil, &Error{Reason: v1alpha1.ApplicationSetReasonRenderTemplateParamsError, Err: fmt.Errorf("%s: %w", field, err)}
			}
			out = append(out, reposerver.Generated{Application: app, Params: s.params, Generator: field, Files: s.files})
		}
		if len(out) > MaxParameterSets {
			return nil, &Error{Reason: v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError,
				Err: fmt.Errorf("the generators produce more than %d Applications", MaxParameterSets)}
		}
	}
	return out, nil
}

// applicationSize refuses a generated Application whose JSON passes
// MaxApplicationBytes, naming it.
func applicationSize(app map[string]any) error {
	data, err := json.Marshal(app)
	if err != nil {
		return fmt.Errorf("encode the generated Application: %w", err)
	}
	if len(data) > MaxApplicationBytes {
		name, _ := app["metadata"].(map[string]any)["name"].(string)
		return fmt.Errorf("the generated Application %q is %d bytes, more than the %d an Application may be (etcd's default request limit)", name, len(data), MaxApplicationBytes)
	}
	return nil
}

// render renders one Application from the template with params, then
// applies the template patch, the finalizer default and the apiVersion and
// kind. With no parameters the template is used as it is, as in Argo CD.
func (g *generator) render(tmpl map[string]any, params map[string]any, spec *v1alpha1.ApplicationSetSpec) (map[string]any, error) {
	rendered := any(deepCopy(tmpl))
	if len(params) > 0 {
		var err error
		if rendered, err = g.r.renderValue(rendered, params); err != nil {
			return nil, err
		}
	}
	t, _ := rendered.(map[string]any)
	meta, _ := t["metadata"].(map[string]any)
	app := map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       v1alpha1.ApplicationKind,
		"metadata":   applicationMeta(meta),
		"spec":       t["spec"],
	}
	if app["spec"] == nil {
		app["spec"] = map[string]any{}
	}
	// As Argo CD: the resources finalizer is the default of a rendered
	// template, before templatePatch, whose finalizers merge with it.
	if len(params) > 0 {
		md := app["metadata"].(map[string]any)
		if fins, _ := md["finalizers"].([]any); len(fins) == 0 && (spec.SyncPolicy == nil || !spec.SyncPolicy.PreserveResourcesOnDeletion) {
			md["finalizers"] = []any{v1alpha1.ResourcesFinalizerName}
		}
	}
	if spec.TemplatePatch != nil {
		var err error
		if app, err = g.patch(app, *spec.TemplatePatch, params); err != nil {
			return nil, err
		}
	}
	return app, nil
}

// applicationMeta keeps the metadata fields Argo CD copies from a
// template.
func applicationMeta(meta map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"name", "namespace", "labels", "annotations", "finalizers"} {
		if v, ok := meta[k]; ok && v != nil {
			out[k] = v
		}
	}
	return out
}

// mergeTemplate fills what a generator's template leaves empty from the
// ApplicationSet's, as Argo CD does with mergo: a value the generator's
// template sets (not empty, false or 0) wins, maps merge key by key.
func mergeTemplate(gen, base map[string]any) map[string]any {
	out := deepCopy(base)
	if gen == nil {
		return out
	}
	return mergeNonZero(deepCopy(gen), out)
}

// mergeNonZero fills the zero values of dst from src, recursively.
func mergeNonZero(dst, src map[string]any) map[string]any {
	for k, sv := range src {
		dv, ok := dst[k]
		switch {
		case !ok || isZero(dv):
			dst[k] = sv
		default:
			dm, dIsMap := dv.(map[string]any)
			sm, sIsMap := sv.(map[string]any)
			if dIsMap && sIsMap {
				dst[k] = mergeNonZero(dm, sm)
			}
		}
	}
	return dst
}

func isZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case bool:
		return !v
	case float64:
		return v == 0
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// toMap converts a typed value to its JSON object.
func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// fromMap decodes a JSON object into a typed value, naming field in the
// error.
func fromMap(field string, m any, v any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s.%s: want %s, got %s", field, te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

// deepCopy copies a decoded JSON object.
func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return jsonvalue.Copy(m).(map[string]any)
}
