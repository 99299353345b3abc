package application

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
	"github.com/tollgate-dev/tollgate/engine/authority"
)

// comparison is the outcome of comparing the desired objects of an
// Application with the live ones.
type comparison struct {
	status    v1alpha1.SyncStatusCode
	resources []v1alpha1.ResourceStatus
	health    v1alpha1.HealthStatus
	// diffs are the per-object results, in the order of the desired
	// objects that are not hooks.
	diffs []apply.ResourceDiff
	// owned are the live objects tracked by the Application that are no
	// longer desired, hooks excepted (metadata only): what a prune would
	// delete. Kept for idle resyncs, so usually empty.
	owned []*unstructured.Unstructured
	// shared maps desired objects tracked by another Application to a
	// message; they are never applied.
	shared map[apply.Ref]string
	// drift is true when a desired object that is not shared is OutOfSync.
	drift bool
	// refs are the objects whose resourceVersions fingerprint the live
	// state: every desired object and every owned one. compareAndRemember
	// checks them against the memo's refs and clears them.
	refs []apply.Ref
	// versions are the resourceVersions of the desired objects as
	// compared (versionsOf); compareAndRemember fingerprints with them and
	// clears them.
	versions map[apply.Ref]string
}

// versionsOf returns the resourceVersions of the live objects of diffs,
// read from the API server, by refKey ("-" for one that does not exist).
func versionsOf(diffs []apply.ResourceDiff) map[apply.Ref]string {
	out := make(map[apply.Ref]string, len(diffs))
	for _, d := range diffs {
		rv := "-"
		if d.Live != nil {
			rv = d.Live.GetResourceVersion()
		}
		out[refKey(d.Ref)] = rv
	}
	return out
}

// sharedMessage lists the shared objects, one per line, sorted.
func (c *comparison) sharedMessage() string {
	lines := make([]string, 0, len(c.shared))
	for _, m := range c.shared {
		lines = append(lines, m)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// isShared reports whether obj is tracked by another Application.
func (c *comparison) isShared(obj *unstructured.Unstructured) bool {
	_, ok := c.shared[refKey(apply.RefOf(obj))]
	return ok
}

// compareIgnoreExtraneous is the compare option of a live object that
// keeps the Application Synced while the object awaits pruning, as in Argo
// CD: it is still shown OutOfSync, and a sync with prune deletes it.
const compareIgnoreExtraneous = "IgnoreExtraneous"

// hasCompareOption reports whether obj's argocd.argoproj.io/compare-options
// annotation (comma-separated) holds opt.
func hasCompareOption(obj *unstructured.Unstructured, opt string) bool {
	return slices.Contains(plan.SplitList(obj.GetAnnotations()[v1alpha1.AnnotationKeyCompareOptions]), opt)
}

// resourceRef is the ref of a resource status.
func resourceRef(rs v1alpha1.ResourceStatus) apply.Ref {
	return apply.Ref{Group: rs.Group, Version: rs.Version, Kind: rs.Kind, Namespace: rs.Namespace, Name: rs.Name}
}

// refKey drops the version of a ref: one object is served under several.
func refKey(r apply.Ref) apply.Ref {
	r.Version = ""
	return r
}

// compare diffs the desired objects (hooks excepted) against the cluster by
// server-side dry run, finds the live objects the Application tracks that
// are no longer desired, and assesses the health of every live object.
func (r *Reconciler) compare(ctx context.Context, door *authority.Door, cl *cluster, app *v1alpha1.Application, desired []*unstructured.Unstructured, instance string) (*comparison, error) {
	var objs []*unstructured.Unstructured
	for _, d := range desired {
		if !plan.IsHook(d) {
			objs = append(objs, d)
		}
	}
	diffs, err := door.Diff(ctx, objs, r.ignoreDifferences(app))
	if err != nil {
		return nil, fmt.Errorf("compare with live state: %w", err)
	}
	wanted := make(map[apply.Ref]bool, len(diffs))
	for _, d := range diffs {
		wanted[refKey(d.Ref)] = true
	}
	owned, err := cl.listOwned(ctx, instance, kindsOf(objs, app.Status.Resources), r.opts.TrackingMethod, func(ref apply.Ref) bool { return wanted[refKey(ref)] })
	if err != nil {
		return nil, fmt.Errorf("compare with live state: %w", err)
	}
	// Sized exactly: a comparison may be kept for idle resyncs, one per
	// Application.
	n := len(diffs) + len(owned)
	c := &comparison{diffs: diffs, shared: map[apply.Ref]string{}, versions: versionsOf(diffs),
		resources: make([]v1alpha1.ResourceStatus, 0, n), refs: make([]apply.Ref, 0, n)}
	for i, d := range diffs {
		obj := objs[i]
		c.refs = append(c.refs, d.Ref)
		wave, _ := plan.WaveOf(obj)
		health := r.resourceHealth(d.Live)
		rs := v1alpha1.ResourceStatus{
			Group: d.Ref.Group, Version: d.Ref.Version, Kind: d.Ref.Kind,
			Namespace: d.Ref.Namespace, Name: d.Ref.Name,
			Status: v1alpha1.SyncStatusCode(d.Status), SyncWave: int64(wave), Health: health,
		}
		if owner := otherOwner(d.Live, instance, r.opts.TrackingMethod); owner != "" {
			c.shared[refKey(d.Ref)] = fmt.Sprintf("%s is part of application %s and is not applied by this one", d.Ref, owner)
		} else if rs.Status != v1alpha1.SyncStatusCodeSynced {
			c.drift = true
		}
		c.resources = append(c.resources, rs)
	}
	managed := r.managed(cl.server)
	extraneous := map[apply.Ref]bool{}
	for _, o := range owned {
		ref := apply.RefOf(o)
		if wanted[refKey(ref)] || plan.IsHook(o) || !managed(ref.Group, ref.Kind) {
			continue
		}
		c.owned = append(c.owned, o)
		c.refs = append(c.refs, ref)
		c.resources = append(c.resources, v1alpha1.ResourceStatus{
			Group: ref.Group, Version: ref.Version, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name,
			Status: v1alpha1.SyncStatusCodeOutOfSync, RequiresPruning: true,
		})
		if hasCompareOption(o, compareIgnoreExtraneous) {
			extraneous[ref] = true
		}
	}
	slices.SortStableFunc(c.resources, compareResources)
	c.status = v1alpha1.SyncStatusCodeSynced
	for _, rs := range c.resources {
		if rs.Status != v1alpha1.SyncStatusCodeSynced && !(rs.RequiresPruning && extraneous[resourceRef(rs)]) {
			c.status = v1alpha1.SyncStatusCodeOutOfSync
			break
		}
	}
	c.health = worstHealth(c.resources)
	// The comparison may be kept for idle resyncs: drop what is no longer
	// needed (live objects; owned objects' managed fields).
	for i := range c.diffs {
		c.diffs[i].Live = nil
	}
	for _, o := range c.owned {
		o.SetManagedFields(nil)
	}
	return c, nil
}

// otherOwner returns the application instance that tracks live under
// method (v1alpha1.OwnerOf), when it is not instance; else "".
func otherOwner(live *unstructured.Unstructured, instance string, method v1alpha1.TrackingMethod) string {
	if live == nil || v1alpha1.OwnedBy(live, instance, method) {
		return ""
	}
	owner, _ := v1alpha1.OwnerOf(live, method, v1alpha1.OwnerOptions{})
	return owner
}

// kindsOf returns the kinds to look for owned objects in: those of the
// desired objects and those recorded in the status by earlier syncs.
func kindsOf(objs []*unstructured.Unstructured, recorded []v1alpha1.ResourceStatus) []schema.GroupVersionKind {
	seen := map[schema.GroupKind]bool{}
	var out []schema.GroupVersionKind
	add := func(gvk schema.GroupVersionKind) {
		if gvk.Kind == "" || gvk.Version == "" || seen[gvk.GroupKind()] {
			return
		}
		seen[gvk.GroupKind()] = true
		out = append(out, gvk)
	}
	for _, o := range objs {
		add(o.GroupVersionKind())
	}
	for _, r := range recorded {
		add(schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind})
	}
	return out
}

// ignoreDifferences returns argocd-cm's system-level ignoreDifferences
// and the Application's, as Argo CD merges them.
func (r *Reconciler) ignoreDifferences(app *v1alpha1.Application) []apply.IgnoreDifference {
	var system []apply.IgnoreDifference
	if s := r.settings.Load(); s != nil {
		system = s.IgnoreDifferences
	}
	out := make([]apply.IgnoreDifference, 0, len(system)+len(app.Spec.IgnoreDifferences))
	out = append(out, system...)
	for _, d := range app.Spec.IgnoreDifferences {
		out = append(out, apply.IgnoreDifference{
			Group: d.Group, Kind: d.Kind, Name: d.Name, Namespace: d.Namespace,
			JSONPointers: d.JSONPointers, JQPathExpressions: d.JQPathExpressions,
			ManagedFieldsManagers: d.ManagedFieldsManagers,
		})
	}
	return out
}

func compareResources(a, b v1alpha1.ResourceStatus) int {
	return cmp.Or(
		cmp.Compare(a.Group, b.Group),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name),
	)
}

// managed returns whether argocd-cm's resource exclusions and inclusions
// let the engine manage a kind on the cluster at server.
func (r *Reconciler) managed(server string) func(group, kind string) bool {
	s := r.settings.Load()
	return func(group, kind string) bool { return s.Managed(group, kind, server) }
}

// comparison returns the comparison of the desired state with the cluster:
// the memo of the last one when nothing changed since (fresh is false), or
// a new one after the policy gate allowed the desired state, with the
// outcomes of building the objects and of the gate. A nil comparison
// without error means there is none to make (the gate denied the objects,
// or the cluster Secret does not let the engine manage one of them); the
// outcomes say why.
func (r *Reconciler) comparison(ctx context.Context, p *pass, tg *target, state *desiredState) (cmp *comparison, fresh bool, outs []outcome, err error) {
	app, cl := p.app, tg.cluster
	log := ctrl.LoggerFrom(ctx)
	switch m := r.recall(p.key, state.identity); {
	case m == nil:
		log.V(1).Info("Comparing in full", "reason", "no comparison to reuse")
	case app.Operation != nil:
		log.V(1).Info("Comparing in full", "reason", "sync requested")
	default:
		fp, err := fingerprint(ctx, cl, m.refs, nil)
		if err == nil && fp == m.fingerprint {
			r.metrics.Compares.WithLabelValues("reused").Inc()
			return m.cmp, false, nil, nil
		}
		reason := "live objects changed"
		if err != nil {
			reason = err.Error()
		}
		log.V(1).Info("Comparing in full", "reason", reason)
	}
	if err := state.Build(ctx); err != nil {
		return nil, false, nil, err
	}
	built := outcome{step: stepBuilt, raised: map[string]string{}}
	if len(state.HookWarnings) > 0 {
		built.raised[v1alpha1.ApplicationConditionUnknownHookWarning] = strings.Join(state.HookWarnings, "; ")
	}
	if len(state.Excluded) > 0 {
		built.raised[v1alpha1.ApplicationConditionExcludedResourceWarning] =
			"excluded by resource.exclusions/inclusions of argocd-cm, neither applied nor compared: " + strings.Join(state.Excluded, ", ")
	}
	outs = []outcome{built}
	if msg := cl.scope.Unmanaged(state.Objects); msg != "" {
		// As Argo CD, whose cluster cache in namespaced mode (a cluster
		// Secret with namespaces) refuses to load the live state: nothing
		// is compared, and a sync ends as its SyncAppState ends it.
		msg = "Failed to load live state: " + msg
		outs = append(outs, raise(stepFailed, v1alpha1.ApplicationConditionComparisonError, msg))
		if tg.op != nil {
			outs = append(outs, r.refuseOperation(p, tg.op, v1alpha1.ApplicationConditionComparisonError+": "+msg))
		}
		return nil, false, outs, nil
	}
	// The objects are judged with the Application as fetched.
	v, err := r.gate(ctx, tg.door, gated(app, tg.op, state.Objects))
	if err != nil {
		return nil, false, outs, err
	}
	if !v.Allowed() {
		return nil, false, append(outs, r.deny(p, v, state.Revisions)), nil
	}
	outs = append(outs, outcome{step: stepGate}) // allowed: a refusal is over
	cmp, err = r.compareAndRemember(ctx, p, tg, state)
	if err != nil {
		return nil, false, outs, err
	}
	return cmp, true, outs, nil
}

// compareAndRemember compares in full and remembers the comparison for idle
// resyncs, with the fingerprint of the live objects taken just before it.
func (r *Reconciler) compareAndRemember(ctx context.Context, p *pass, tg *target, state *desiredState) (*comparison, error) {
	cl := tg.cluster
	refs := cl.managed(fingerprintRefs(state.NonHooks(), p.app.Status.Resources))
	r.watchLive(ctx, cl, refs)
	cmp, err := r.compare(ctx, tg.door, cl, p.app, state.Objects, p.instance)
	if err != nil {
		r.forget(p.key)
		return nil, err
	}
	// The versions compared, not the cache's: after a sync the cache may
	// not hold the applies yet, and the next pass would compare in full
	// again for nothing.
	fp, fpErr := fingerprint(ctx, cl, refs, cmp.versions)
	cmp.versions = nil
	r.metrics.Compares.WithLabelValues("full").Inc()
	covered := covers(refs, cmp.refs)
	cmp.refs = nil // checked; the memo keeps refs
	if fpErr == nil && state.identity != "" && covered {
		r.remember(p.key, &memo{identity: state.identity, renderKey: state.RenderKey, fingerprint: fp, at: r.opts.Now(), cmp: cmp, refs: refs})
	} else {
		r.forget(p.key)
	}
	return cmp, nil
}

// fingerprintRefs are the objects whose resourceVersions stand for the live
// state: the desired objects and every resource recorded in the status
// (which includes those awaiting pruning).
func fingerprintRefs(objs []*unstructured.Unstructured, recorded []v1alpha1.ResourceStatus) []apply.Ref {
	seen := make(map[apply.Ref]bool, len(objs)+len(recorded))
	// Kept in the memo: sized for the desired objects, as the recorded
	// resources are usually the same ones.
	out := make([]apply.Ref, 0, len(objs))
	add := func(ref apply.Ref) {
		if !seen[refKey(ref)] {
			seen[refKey(ref)] = true
			out = append(out, ref)
		}
	}
	for _, o := range objs {
		add(apply.RefOf(o))
	}
	for _, rs := range recorded {
		add(apply.Ref{Group: rs.Group, Version: rs.Version, Kind: rs.Kind, Namespace: rs.Namespace, Name: rs.Name})
	}
	return out
}

// managed returns the refs of objects cl's scope holds: a resource the
// status records (the status is the Application's, which its writer may
// set) outside a namespaced cluster's namespaces, or of a cluster-scoped
// kind there without clusterResources, is neither watched nor
// fingerprinted, as Argo CD's cluster cache never lists it. A kind the
// cluster does not know is kept, for the fingerprint to fail on.
func (cl *cluster) managed(refs []apply.Ref) []apply.Ref {
	if len(cl.scope.Namespaces) == 0 {
		return refs
	}
	return slices.DeleteFunc(refs, func(ref apply.Ref) bool {
		nss, err := cl.scope.ListNamespaces(cl.mapper, ref.GroupVersionKind())
		if err != nil {
			return false
		}
		return len(nss) == 0 || ref.Namespace != "" && !cl.scope.Manages(ref.Namespace)
	})
}

// covers reports whether every ref of b is in a.
func covers(a, b []apply.Ref) bool {
	in := make(map[apply.Ref]bool, len(a))
	for _, r := range a {
		in[refKey(r)] = true
	}
	for _, r := range b {
		if !in[refKey(r)] {
			return false
		}
	}
	return true
}

// recordComparison writes a comparison into the status, and returns its
// outcome (stepCompared).
func (r *Reconciler) recordComparison(p *pass, cmp *comparison, state *desiredState, srcs []v1alpha1.ApplicationSource) outcome {
	st := &p.app.Status
	st.Resources = cmp.resources
	st.Health.Status, st.Health.Message = cmp.health.Status, cmp.health.Message
	sync := v1alpha1.SyncStatus{
		Status: cmp.status,
		ComparedTo: v1alpha1.ComparedTo{
			Destination:       p.app.Spec.Destination,
			IgnoreDifferences: p.app.Spec.IgnoreDifferences,
		},
	}
	if p.app.Spec.HasMultipleSources() {
		sync.Revisions = state.Revisions
		sync.ComparedTo.Sources = srcs
	} else {
		sync.Revision = state.Revisions[0]
		sync.ComparedTo.Source = srcs[0]
	}
	st.Sync = sync
	if st.Health.Status != p.orig.Status.Health.Status {
		st.Health.LastTransitionTime = &p.now
	}
	if len(cmp.shared) > 0 {
		return raise(stepCompared, v1alpha1.ApplicationConditionSharedResourceWarning, cmp.sharedMessage())
	}
	return outcome{step: stepCompared}
}
