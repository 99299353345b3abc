package application

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/engine/desired"
	"github.com/tollgate-dev/tollgate/internal/objdiff"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// DiffDependencies are what Diff works with; all are required.
type DiffDependencies struct {
	// Client reads the Argo CD Secrets (repository credentials, clusters)
	// and the SSH known hosts of the control-plane namespace.
	Client client.Client
	// Config reaches the control-plane cluster, which is the in-cluster
	// destination.
	Config *rest.Config
	// Scheme knows the built-in types and v1alpha1.
	Scheme *runtime.Scheme
	// Manifests fetches and renders the Application's sources.
	Manifests reposerver.Generator
	// Evaluator judges the objects a diff would read against the
	// Application's project by the boundary rules (authority.BoundaryRules),
	// as the sync's door does: the controller's, or one built from the
	// same policy configuration.
	Evaluator Evaluator
}

// AppDiff is the difference between an Application's desired state and its
// destination.
type AppDiff struct {
	// Revisions are the commits rendered, one per source.
	Revisions []string
	// Objects are the desired objects that are not hooks and the live
	// objects the Application tracks that are no longer desired, sorted by
	// group, kind, namespace and name.
	Objects []ObjectDiff
	// Warnings name the hook annotations Argo CD does not know, which are
	// ignored.
	Warnings []string
}

// Modified reports whether any object differs.
func (d *AppDiff) Modified() bool {
	return slices.ContainsFunc(d.Objects, func(o ObjectDiff) bool { return o.Modified })
}

// ObjectDiff is one object of an AppDiff. A Secret's data (and its
// last-applied-configuration annotation) is masked on both sides.
type ObjectDiff struct {
	Ref apply.Ref
	// Live is the live object without status, server-maintained metadata
	// and the Application's ignored differences; nil when it does not
	// exist.
	Live map[string]any
	// Target is the server-side dry-run apply of the desired object,
	// normalized in the same way (the desired object itself when there is
	// no live one); nil when the object is to be pruned or the dry run was
	// rejected.
	Target map[string]any
	// Modified is set when the object is not in sync: it differs, is
	// missing, is to be pruned or could not be compared.
	Modified bool
	// RequiresPruning is set for a live object tracked by the Application
	// that is no longer desired.
	RequiresPruning bool
	// Error is the API server's rejection of the dry run.
	Error string
}

// Differ compares Applications with their destinations for one process
// (the web UI for one person, or one CLI command): the destination
// clusters' clients it builds (REST mapper, discovery, authority) are kept
// across comparisons, so only the first diff of a cluster pays for its
// discovery. Close it when done. It is safe for concurrent use.
type Differ struct {
	r      *Reconciler
	client client.Client
}

// NewDiffer returns a Differ working with deps and opts.
func NewDiffer(deps DiffDependencies, opts Options) (*Differ, error) {
	if deps.Client == nil {
		return nil, errors.New("diff: client is nil")
	}
	if deps.Evaluator == nil {
		return nil, errors.New("diff: evaluator is nil")
	}
	r, err := New(Dependencies{
		Client: deps.Client, APIReader: deps.Client, Config: deps.Config, Scheme: deps.Scheme,
		Evaluator: deps.Evaluator, Manifests: deps.Manifests,
	}, opts)
	if err != nil {
		return nil, err
	}
	return &Differ{r: r, client: deps.Client}, nil
}

// Close stops what the Differ's clusters started.
func (d *Differ) Close() { d.r.clusters.stop() }

// Diff compares app once with a Differ of its own (Differ.Diff).
func Diff(ctx context.Context, deps DiffDependencies, opts Options, app *v1alpha1.Application) (*AppDiff, error) {
	d, err := NewDiffer(deps, opts)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Diff(ctx, app)
}

// Diff compares the desired state of app with its destination as the
// engine's comparison does, and changes nothing: the same sources at their
// target revisions (an operation in progress is not looked at), fetched
// and rendered by deps.Manifests with the repository credentials of the
// control-plane namespace, the same desired objects (destination namespace
// defaulted, tracking annotation set, hooks and ignored objects left out),
// the same server-side dry run with opts.FieldManager and the same
// ignoreDifferences; and the live objects it tracks that are no longer
// desired, which a sync with prune would delete.
//
// Live objects are read through the destination's authority.Door, with
// the project checks of a sync: the Application's destination and every
// desired object, then every live object to prune, must be permitted by
// the AppProject's boundary rules (a missing project permits nothing), and
// a project that permits only its own clusters must own the destination's.
// Otherwise Diff returns a *authority.RefusedError naming each object and
// rule, and nothing of the refused objects is read or returned: a remote
// cluster's credentials show nobody what the project would not let the
// Application write. The other rules (the policy gate) do not apply: a
// diff is shown even when a sync would be refused for, say, a latest tag.
func (d *Differ) Diff(ctx context.Context, app *v1alpha1.Application) (*AppDiff, error) {
	r := d.r
	p, err := d.prepare(ctx, app)
	if err != nil {
		return nil, err
	}
	cl, door, state, instance := p.cluster, p.door, p.state, p.instance
	if msg := cl.scope.Unmanaged(state.Objects); msg != "" {
		return nil, fmt.Errorf("compare with live state: %s", msg)
	}
	objs := state.NonHooks()
	diffs, err := door.DiffDetailed(ctx, objs, r.ignoreDifferences(app))
	switch {
	case authority.IsRefused(err):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("compare with live state: %w", err)
	}
	prune, err := prunable(ctx, cl.auth, door, instance, objs, app.Status.Resources)
	if err != nil {
		return nil, err
	}
	out := &AppDiff{Revisions: state.Revisions, Warnings: state.HookWarnings, Objects: make([]ObjectDiff, 0, len(diffs)+len(prune))}
	for _, d := range diffs {
		out.Objects = append(out.Objects, ObjectDiff{
			Ref: d.Ref, Live: d.NormalizedLive, Target: d.PredictedLive,
			Modified: d.Status != apply.StatusSynced, Error: d.Error,
		})
	}
	for _, live := range prune {
		out.Objects = append(out.Objects, ObjectDiff{Ref: apply.RefOf(live), Live: apply.Normalized(live), Modified: true, RequiresPruning: true})
	}
	for i := range out.Objects {
		if o := &out.Objects[i]; o.Ref.Group == "" && o.Ref.Kind == "Secret" {
			objdiff.HideSecretData(o.Live, o.Target)
		}
	}
	slices.SortStableFunc(out.Objects, func(a, b ObjectDiff) int {
		return compareResources(
			v1alpha1.ResourceStatus{Group: a.Ref.Group, Kind: a.Ref.Kind, Namespace: a.Ref.Namespace, Name: a.Ref.Name},
			v1alpha1.ResourceStatus{Group: b.Ref.Group, Kind: b.Ref.Kind, Namespace: b.Ref.Namespace, Name: b.Ref.Name})
	})
	return out, nil
}

// prepared is what a diff and a desired state have in common: the
// destination's cluster and door, and the built desired state.
type prepared struct {
	cluster  *cluster
	door     *authority.Door
	state    *desired.State
	instance string
}

// prepare resolves app's destination, checks its project as Diff says and
// builds its desired state.
func (d *Differ) prepare(ctx context.Context, app *v1alpha1.Application) (*prepared, error) {
	r := d.r
	var cm corev1.ConfigMap
	switch err := d.client.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: ArgoCDConfigMap}, &cm); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("diff: read %s: %w", ArgoCDConfigMap, err)
	}
	if err := r.ApplyArgoCDConfigMap(cm.Data); err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	sources := app.Sources()
	if len(sources) == 0 {
		return nil, errors.New("diff: spec.source or spec.sources must be set")
	}
	secrets, err := r.argoSecrets(ctx)
	if err != nil {
		return nil, err
	}
	cl, err := r.clusters.resolve(ctx, app.Spec.Destination, secrets)
	if err != nil {
		return nil, err
	}
	project, err := r.project(ctx, app)
	if err != nil {
		return nil, err
	}
	if project != nil && !project.IsAppNamespacePermitted(app, r.opts.Namespace) {
		return nil, v1alpha1.ErrProjectNotPermitted(app)
	}
	if msg := projectScopedCluster(project, app.Spec.Destination, cl.server, secrets); msg != "" {
		return nil, &authority.RefusedError{Verb: authority.VerbDiff, Project: app.ProjectName(), Violations: []policies.Violation{{
			Rule: "project-destination-denied", Severity: policies.SeverityDeny,
			Object:  policies.ObjectRef{Kind: v1alpha1.ApplicationKind, Namespace: app.Namespace, Name: app.Name},
			Message: msg,
		}}}
	}
	// Reads and dry runs with the controller's rights, as a comparison;
	// nothing is written, so nobody is impersonated.
	door := cl.auth.For(app, project, authority.Impersonation{})
	// The project's sourceRepos say where chart dependencies may come
	// from, as in a comparison; a diff is not gated, so no signature is
	// checked. Branch and tag names are resolved afresh, as for a refresh.
	req, err := r.manifestRequest(ctx, &target{cluster: cl, app: app, sources: sources, secrets: secrets, project: project}, 0, false)
	if err != nil {
		return nil, err
	}
	resp, err := r.builder.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	state := r.builder.State(req, resp, desired.Destination{Namespace: app.Spec.Destination.Namespace, Mapper: cl.mapper, Managed: r.managed(cl.server)})
	if err := state.Build(ctx); err != nil {
		return nil, err
	}
	return &prepared{cluster: cl, door: door, state: state, instance: app.InstanceName(r.opts.Namespace)}, nil
}

// Desired returns the desired objects of app that are not hooks, as the
// engine's comparison builds them and as Diff compares them (the same
// sources, render, project checks, namespace defaulting and tracking
// metadata), sorted by group, kind, namespace and name. A Secret's data
// is masked (objdiff.HideSecretData). The objects must be permitted by the
// project's boundary rules, as Diff requires (a *authority.RefusedError
// otherwise); no object of the destination is read, and nothing is changed.
func (d *Differ) Desired(ctx context.Context, app *v1alpha1.Application) ([]*unstructured.Unstructured, error) {
	p, err := d.prepare(ctx, app)
	if err != nil {
		return nil, err
	}
	if err := p.door.Permit(ctx, authority.VerbDiff, p.state.NonHooks()); err != nil {
		return nil, err
	}
	objs := slices.Clone(p.state.NonHooks())
	for i, o := range objs {
		if o.GroupVersionKind().Group == "" && o.GetKind() == "Secret" {
			o = o.DeepCopy()
			objdiff.HideSecretData(o.Object, nil)
			objs[i] = o
		}
	}
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		return compareResources(
			v1alpha1.ResourceStatus{Group: a.GroupVersionKind().Group, Kind: a.GetKind(), Namespace: a.GetNamespace(), Name: a.GetName()},
			v1alpha1.ResourceStatus{Group: b.GroupVersionKind().Group, Kind: b.GetKind(), Namespace: b.GetNamespace(), Name: b.GetName()})
	})
	return objs, nil
}

// prunable reads the live objects the application instance tracks that
// are not among objs, hooks excepted, as compare finds them; recorded are
// the resources of the Application's status, whose kinds are searched too.
// They are found by their tracking metadata, which whoever may write an
// object can copy onto it: door must permit every one (a
// *authority.RefusedError otherwise) before any is read in full; the
// listing reads their metadata only, and it stays in this process.
func prunable(ctx context.Context, a *authority.Authority, door *authority.Door, instance string, objs []*unstructured.Unstructured, recorded []v1alpha1.ResourceStatus) ([]*unstructured.Unstructured, error) {
	owned, err := a.ListOwned(ctx, instance, kindsOf(objs, recorded))
	if err != nil {
		return nil, fmt.Errorf("compare with live state: %w", err)
	}
	wanted := make(map[apply.Ref]bool, len(objs))
	for _, o := range objs {
		wanted[refKey(apply.RefOf(o))] = true
	}
	var candidates []*unstructured.Unstructured
	var refs []apply.Ref
	for _, o := range owned {
		if ref := apply.RefOf(o); !wanted[refKey(ref)] && !plan.IsHook(o) {
			candidates = append(candidates, o)
			refs = append(refs, ref)
		}
	}
	if err := door.Permit(ctx, authority.VerbDiff, candidates); err != nil {
		return nil, err
	}
	live, err := a.Live(ctx, refs)
	if err != nil {
		return nil, fmt.Errorf("compare with live state: %w", err)
	}
	// Deleted meanwhile: nothing to prune.
	return slices.DeleteFunc(live, func(o *unstructured.Unstructured) bool { return o == nil }), nil
}
