package applicationset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// appSetPass is one reconcile of one ApplicationSet.
type appSetPass struct {
	set *v1alpha1.ApplicationSet
	now time.Time
	// generated is set once the generators produced their parameters.
	generated bool
	// reason and message are the first error, which ErrorOccurred reports.
	reason, message string
	// names are every Application name generated, whether written or not:
	// none of them is deleted as no longer generated.
	names map[string]bool
	// clusters are the Argo CD cluster Secrets, as sent for generation.
	clusters []corev1.Secret
	// admitted are the Applications to write.
	admitted []*v1alpha1.Application
	// invalid and denied say why the others are not written: Argo CD's
	// validation, and the gate.
	invalid, denied []string
	// refused name the existing Applications of another project that
	// were not adopted (notAdoptedError).
	refused []string
	// rollout is the pass's RollingSync, nil without one (progressive.go).
	rollout *rollout
	// autoPrune are the Applications of a RollingSync whose template had
	// automated sync with prune on, which their requested syncs keep.
	autoPrune map[string]bool
}

// fail records err as the pass's error under reason and returns it
// marked as reported.
func (p *appSetPass) fail(reason string, err error) error {
	if p.reason == "" {
		p.reason, p.message = reason, err.Error()
	}
	return fmt.Errorf("%w: %w", errAppSetReported, err)
}

// maxParamsText bounds the parameters quoted in a denial.
const maxParamsText = 512

// paramsText describes the parameters of g for a denial. Parameters that
// hold what git files generators read are never quoted (whoever reads the
// ApplicationSet's status need not read the repository): the files are
// named instead, "read from teams/red/config.json of <repository>
// (content not quoted)". Others (list elements, clusters, directories)
// are quoted as JSON, cut to maxParamsText bytes.
func paramsText(g reposerver.Generated) string {
	if len(g.Files) == 0 {
		return quoteParams(g.Params)
	}
	names := make([]string, len(g.Files))
	for i, f := range g.Files {
		names[i] = f.Path + " of " + f.RepoURL
	}
	return "read from " + strings.Join(names, ", ") + " (content not quoted)"
}

// admit validates one generated Application as Argo CD does (its project
// exists, its destination is one cluster) and judges it with the
// policies; an Application that passes both is kept to be written.
func (r *Reconciler) admit(ctx context.Context, p *appSetPass, g reposerver.Generated) error {
	if r.rollingSync(p.set) {
		// What is judged is what is written: automated sync off.
		if p.autoPrune == nil {
			p.autoPrune = map[string]bool{}
		}
		name, _ := nestedName(g.Application)
		p.autoPrune[name] = disableAutomated(g.Application)
	}
	var app v1alpha1.Application
	b, err := json.Marshal(g.Application)
	if err == nil {
		err = json.Unmarshal(b, &app)
	}
	if err != nil {
		p.invalid = append(p.invalid, fmt.Sprintf("application %v: %v", g.Application["metadata"], err))
		return nil
	}
	project, err := r.project(ctx, app.ProjectName())
	if err != nil {
		return err
	}
	if project == nil {
		p.invalid = append(p.invalid, fmt.Sprintf("application references project %s which does not exist", app.ProjectName()))
		return nil
	}
	if msg := invalidDestination(app.Spec.Destination, p.clusters); msg != "" {
		p.invalid = append(p.invalid, "application destination spec is invalid: "+msg)
		return nil
	}
	projMap, err := policies.ObjectMap(project, v1alpha1.GroupVersion.String(), v1alpha1.AppProjectKind)
	if err != nil {
		return err
	}
	ins := policies.BuildInputs(policies.InputOptions{
		Point: policies.PointApplicationSet, ArgoCDNamespace: r.opts.Namespace,
		Projects: []map[string]any{projMap}, ImplicitDefaultProject: r.opts.ImplicitDefaultProject,
	}, []policies.Item{{Object: g.Application}})
	decisions, err := r.deps.Evaluator.EvaluateAll(ctx, ins)
	if err != nil {
		return p.fail(v1alpha1.ApplicationSetReasonErrorOccurred, fmt.Errorf("evaluate policies: %w", err))
	}
	var lines []string
	for _, d := range decisions {
		for _, v := range d.Violations {
			if v.Severity == policies.SeverityDeny {
				lines = append(lines, authority.ViolationLine(v))
			}
		}
	}
	if len(lines) > 0 {
		sort.Strings(lines)
		p.denied = append(p.denied, fmt.Sprintf("Application %s from %s with parameters %s was not written: %s",
			app.Name, g.Generator, paramsText(g), strings.Join(lines, "; ")))
		return nil
	}
	app.Namespace = p.set.Namespace
	p.admitted = append(p.admitted, &app)
	return nil
}

// quoteParams quotes a parameter set, cut to maxParamsText bytes.
func quoteParams(params map[string]any) string {
	b, err := json.Marshal(params)
	if err != nil {
		return "?"
	}
	if len(b) > maxParamsText {
		return string(b[:maxParamsText]) + "…"
	}
	return string(b)
}

// project returns the AppProject name of the control namespace, nil when
// it does not exist (read past the cache when the cache lacks it).
func (r *Reconciler) project(ctx context.Context, name string) (*v1alpha1.AppProject, error) {
	return argocd.Project(ctx, r.opts.Namespace, name, []client.Reader{r.deps.Client, r.deps.APIReader})
}

// invalidDestination says why dest names none of clusters (the Argo CD
// cluster Secrets), as Argo CD's ValidateDestination: not both a name and a
// server, and a name must be a cluster Secret's (or in-cluster). A server
// alone is not checked.
func invalidDestination(dest v1alpha1.ApplicationDestination, clusters []corev1.Secret) string {
	switch {
	case dest.Name != "" && dest.Server != "":
		return fmt.Sprintf("application destination can't have both name and server defined: %s %s", dest.Name, dest.Server)
	case dest.Name == "" || dest.Name == reposerver.InClusterName:
		return ""
	}
	for _, s := range clusters {
		if string(s.Data["name"]) == dest.Name {
			return ""
		}
	}
	return fmt.Sprintf("application references destination cluster %s which does not exist", dest.Name)
}

// write creates, updates and deletes the generated Applications as the
// ApplicationSet's applicationsSync policy permits.
func (r *Reconciler) write(ctx context.Context, p *appSetPass) error {
	policy := appSetPolicy(p.set)
	owned, err := r.owned(ctx, p.set)
	if err != nil {
		return p.fail(v1alpha1.ApplicationSetReasonErrorOccurred, err)
	}
	var errs []error
	for _, app := range p.admitted {
		err := r.createOrUpdate(ctx, p.set, app, policy)
		var na *notAdoptedError
		switch {
		case errors.As(err, &na):
			p.refused = append(p.refused, na.Error())
		case err != nil:
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		// The refusals stay in the message the failure replaces.
		for _, msg := range p.refused {
			errs = append(errs, errors.New(msg))
		}
		reason := v1alpha1.ApplicationSetReasonUpdateApplicationError
		if !policy.AllowUpdate() {
			reason = v1alpha1.ApplicationSetReasonCreateApplicationError
		}
		return p.fail(reason, errors.Join(errs...))
	}
	if !policy.AllowDelete() {
		return nil
	}
	for i := range owned {
		app := &owned[i]
		if p.names[app.Name] || !app.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.deps.Client.Delete(ctx, app); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete application %s: %w", app.Name, err))
			continue
		}
		r.event(p.set, corev1.EventTypeNormal, "Deleted", fmt.Sprintf("Deleted Application %q", app.Name))
	}
	if len(errs) > 0 {
		return p.fail(v1alpha1.ApplicationSetReasonDeleteApplicationError, errors.Join(errs...))
	}
	return nil
}

// release runs when set is being deleted: unless its policy deletes
// Applications, it removes its owner reference from the Applications it
// owns, so that the garbage collector leaves them, and then its resources
// finalizer, as Argo CD does. (Without that finalizer the garbage
// collector may delete the Applications first.)
func (r *Reconciler) release(ctx context.Context, set *v1alpha1.ApplicationSet) (time.Duration, error) {
	if !slices.Contains(set.Finalizers, v1alpha1.ResourcesFinalizerName) {
		return 0, nil
	}
	if appSetPolicy(set).AllowDelete() {
		// A RollingSync's deletionOrder Reverse.
		if requeue, err := r.deleteInReverse(ctx, set); err != nil || requeue > 0 {
			return requeue, err
		}
	} else {
		owned, err := r.owned(ctx, set)
		if err != nil {
			return 0, err
		}
		for i := range owned {
			app := &owned[i]
			patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
			app.OwnerReferences = slices.DeleteFunc(app.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == set.UID })
			if err := r.deps.Client.Patch(ctx, app, patch); err != nil && !apierrors.IsNotFound(err) {
				return 0, fmt.Errorf("release application %s: %w", app.Name, err)
			}
		}
	}
	patch := client.MergeFromWithOptions(set.DeepCopy(), client.MergeFromWithOptimisticLock{})
	set.Finalizers = slices.DeleteFunc(set.Finalizers, func(f string) bool { return f == v1alpha1.ResourcesFinalizerName })
	if err := r.deps.Client.Patch(ctx, set, patch); err != nil && !apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("remove applicationset finalizer: %w", err)
	}
	return 0, nil
}

// appSetPolicy is the ApplicationSet's applicationsSync policy, sync when
// it sets none (Argo CD's default, with policy override allowed).
func appSetPolicy(set *v1alpha1.ApplicationSet) v1alpha1.ApplicationsSyncPolicy {
	if sp := set.Spec.SyncPolicy; sp != nil && sp.ApplicationsSync != nil {
		return *sp.ApplicationsSync
	}
	return v1alpha1.ApplicationsSyncPolicySync
}

// owned lists the Applications of set's namespace whose controller is
// set.
func (r *Reconciler) owned(ctx context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error) {
	var apps v1alpha1.ApplicationList
	if err := r.deps.Client.List(ctx, &apps, client.InNamespace(set.Namespace)); err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	var out []v1alpha1.Application
	for _, a := range apps.Items {
		if ref := metav1.GetControllerOf(&a); ref != nil && ref.UID == set.UID {
			out = append(out, a)
		}
	}
	return out, nil
}

// defaultPreservedAnnotations are kept as they are live on a generated
// Application, as Argo CD keeps them, and tollgate's operation fence,
// which only the Application controller writes.
var defaultPreservedAnnotations = []string{
	"notified.notifications.argoproj.io", v1alpha1.AnnotationKeyRefresh, "argocd.argoproj.io/hydrate",
	policies.AnnotationOperationReplica,
}

// deleteHookFinalizers mark the finalizers of pre- and post-delete hooks
// (their "/cleanup" stages by prefix), which the Application controller
// adds: kept on a generated Application, as Argo CD keeps them.
var deleteHookFinalizers = []string{v1alpha1.PreDeleteFinalizerName, v1alpha1.PostDeleteFinalizerName}

// ownerReference makes set the controller of its Applications.
func ownerReference(set *v1alpha1.ApplicationSet) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.ApplicationSetKind, Name: set.Name, UID: set.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

// notAdoptedError is createOrUpdate's refusal to adopt an existing
// Application of another project. Its message is the ApplicationSet's
// condition.
type notAdoptedError struct {
	app, project, set, generated string
}

func (e *notAdoptedError) Error() string {
	return fmt.Sprintf("Application %q belongs to project %q; ApplicationSet %q generates it for project %q and does not adopt it",
		e.app, e.project, e.set, e.generated)
}

// createOrUpdate creates app, or brings the live Application of its name
// to it (unless policy is create-only or create-delete): spec, labels,
// annotations and finalizers as generated, keeping the preserved
// annotations and labels, the post-delete finalizers and the fields
// ignoreApplicationDifferences names, with a merge patch from the live
// Application. An Application without a controller is adopted when it
// belongs to the generated Application's project, as Argo CD adopts it;
// one of another project is left as it is (a *notAdoptedError): Argo CD
// would adopt it and move it, with what it deployed, into the
// ApplicationSet's project. One another controller owns is refused.
//
// The patch is guarded by the live Application's resourceVersion (read
// from the cache); when another writer (the Application controller's
// status, a person) got there first, it is read and judged again, as
// Argo CD retries its update on a conflict.
func (r *Reconciler) createOrUpdate(ctx context.Context, set *v1alpha1.ApplicationSet, app *v1alpha1.Application, policy v1alpha1.ApplicationsSyncPolicy) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		return r.createOrUpdateOnce(ctx, set, app, policy)
	})
}

// createOrUpdateOnce is one attempt of createOrUpdate.
func (r *Reconciler) createOrUpdateOnce(ctx context.Context, set *v1alpha1.ApplicationSet, app *v1alpha1.Application, policy v1alpha1.ApplicationsSyncPolicy) error {
	var found v1alpha1.Application
	err := r.deps.Client.Get(ctx, client.ObjectKeyFromObject(app), &found)
	if apierrors.IsNotFound(err) {
		app.OwnerReferences = []metav1.OwnerReference{ownerReference(set)}
		if err := r.deps.Client.Create(ctx, app); err != nil {
			return fmt.Errorf("create application %s: %w", app.Name, err)
		}
		r.event(set, corev1.EventTypeNormal, "created", fmt.Sprintf("created Application %q", app.Name))
		return nil
	}
	if err != nil {
		return fmt.Errorf("get application %s: %w", app.Name, err)
	}
	if ref := metav1.GetControllerOf(&found); ref != nil && ref.UID != set.UID {
		return fmt.Errorf("application %s is already owned by %s %s", app.Name, ref.Kind, ref.Name)
	}
	// The patch below is guarded by found's resourceVersion: a project
	// changed after this check fails it.
	if metav1.GetControllerOf(&found) == nil && found.ProjectName() != app.ProjectName() {
		return &notAdoptedError{app: found.Name, project: found.ProjectName(), set: set.Name, generated: app.ProjectName()}
	}
	if !policy.AllowUpdate() {
		return nil
	}
	want := found.DeepCopy()
	want.Spec = app.Spec
	want.Labels = keep(app.Labels, found.Labels, preservedLabels(set))
	want.Annotations = keep(app.Annotations, found.Annotations, append(preservedAnnotations(set), defaultPreservedAnnotations...))
	want.Finalizers = slices.Clone(app.Finalizers)
	for _, f := range found.Finalizers {
		hook := slices.ContainsFunc(deleteHookFinalizers, func(prefix string) bool { return strings.HasPrefix(f, prefix) })
		if hook && !slices.Contains(want.Finalizers, f) {
			want.Finalizers = append(want.Finalizers, f)
		}
	}
	if metav1.GetControllerOf(&found) == nil {
		want.OwnerReferences = append(want.OwnerReferences, ownerReference(set))
	}
	if err := keepIgnoredAppFields(ctx, set, want, &found); err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(want.Spec, found.Spec) && equality.Semantic.DeepEqual(want.ObjectMeta, found.ObjectMeta) {
		return nil
	}
	if err := r.deps.Client.Patch(ctx, want, client.MergeFromWithOptions(&found, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("update application %s: %w", app.Name, err)
	}
	r.event(set, corev1.EventTypeNormal, "updated", fmt.Sprintf("updated Application %q", app.Name))
	return nil
}

// keep returns generated with the keys of preserved taken from live.
func keep(generated, live map[string]string, preserved []string) map[string]string {
	out := maps.Clone(generated)
	for _, k := range preserved {
		if v, ok := live[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

func preservedAnnotations(set *v1alpha1.ApplicationSet) []string {
	if set.Spec.PreservedFields == nil {
		return nil
	}
	return slices.Clone(set.Spec.PreservedFields.Annotations)
}

func preservedLabels(set *v1alpha1.ApplicationSet) []string {
	if set.Spec.PreservedFields == nil {
		return nil
	}
	return set.Spec.PreservedFields.Labels
}

// keepIgnoredAppFields leaves the fields of want that the ApplicationSet's
// ignoreApplicationDifferences name (for every Application, or for want's
// name) as they are on live.
func keepIgnoredAppFields(ctx context.Context, set *v1alpha1.ApplicationSet, want, live *v1alpha1.Application) error {
	var rules []apply.IgnoreDifference
	for _, d := range set.Spec.IgnoreApplicationDifferences {
		if d.Name == "" || d.Name == want.Name {
			rules = append(rules, apply.IgnoreDifference{Group: "*", Kind: "*", JSONPointers: d.JSONPointers, JQPathExpressions: d.JQPathExpressions})
		}
	}
	if len(rules) == 0 {
		return nil
	}
	w, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return err
	}
	l, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return err
	}
	wu, lu := &unstructured.Unstructured{Object: w}, &unstructured.Unstructured{Object: l}
	if err := apply.KeepIgnored(ctx, wu, lu, rules); err != nil {
		return fmt.Errorf("spec.ignoreApplicationDifferences: %w", err)
	}
	// Only the spec and the metadata the generator writes may differ.
	kept := want.DeepCopy()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(wu.Object, kept); err != nil {
		return err
	}
	want.Spec, want.Labels, want.Annotations, want.Finalizers = kept.Spec, kept.Labels, kept.Annotations, kept.Finalizers
	return nil
}

// event records an event on set.
func (r *Reconciler) event(set *v1alpha1.ApplicationSet, eventtype, reason, note string) {
	if r.deps.Recorder != nil {
		r.deps.Recorder.Eventf(set, nil, eventtype, reason, reason, note)
	}
}
