package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/engine/plan"
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
	owned, err := cl.auth.ListOwned(ctx, instance, kindsOf(objs, app.Status.Resources))
	if err != nil {
		return nil, fmt.Errorf("compare with live state: %w", err)
	}
	// Sized exactly: a comparison may be kept for idle resyncs, one per
	// Application.
	n := len(diffs) + len(owned)
	c := &comparison{diffs: diffs, shared: map[apply.Ref]string{},
		resources: make([]v1alpha1.ResourceStatus, 0, n), refs: make([]apply.Ref, 0, n)}
	wanted := map[apply.Ref]bool{}
	for i, d := range diffs {
		obj := objs[i]
		wanted[refKey(d.Ref)] = true
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
	}
	slices.SortStableFunc(c.resources, compareResources)
	c.status = v1alpha1.SyncStatusCodeSynced
	for _, rs := range c.resources {
		if rs.Status != v1alpha1.SyncStatusCodeSynced {
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
