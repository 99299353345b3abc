package applicationset

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// TestDeleteInReverse: an ApplicationSet with deletionOrder Reverse,
// being deleted, deletes its Applications from the last step to the
// first, each once the one before is gone, and then lets go of its
// finalizer; an Application no step selects is left to the garbage
// collector, as in Argo CD.
func TestDeleteInReverse(t *testing.T) {
	set := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd", UID: types.UID("set-uid"),
		Finalizers: []string{v1alpha1.ResourcesFinalizerName}, DeletionTimestamp: &metav1.Time{Time: time.Unix(1000, 0)}}}
	set.Spec.Strategy = &v1alpha1.ApplicationSetStrategy{Type: v1alpha1.ApplicationSetStrategyRollingSync, DeletionOrder: "reverse",
		RollingSync: &v1alpha1.ApplicationSetRolloutStrategy{Steps: steps(t, `[{matchExpressions: [{key: env, operator: In, values: [dev]}]},
		  {matchExpressions: [{key: env, operator: In, values: [prod]}]}]`)}}
	objs := []client.Object{set}
	for name, env := range map[string]string{"web-dev": "dev", "web-prod": "prod", "web-other": "other"} {
		a := labelled(name, map[string]string{"env": env})
		a.Namespace, a.OwnerReferences, a.Finalizers = "argocd", []metav1.OwnerReference{ownerReference(set)}, []string{v1alpha1.ResourcesFinalizerName}
		objs = append(objs, a)
	}
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(objs...).Build()
	r := &Reconciler{deps: Dependencies{Client: c, APIReader: c}}
	terminating := func() []string {
		var apps v1alpha1.ApplicationList
		if err := c.List(t.Context(), &apps); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range apps.Items {
			if a.DeletionTimestamp != nil {
				out = append(out, a.Name)
			}
		}
		return out
	}
	gone := func(name string) {
		a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: name}}
		if err := c.Patch(t.Context(), a, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
			t.Fatal(err)
		}
	}
	release := func(wantRequeue time.Duration, wantTerminating ...string) {
		t.Helper()
		var live v1alpha1.ApplicationSet
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(set), &live); err != nil {
			t.Fatal(err)
		}
		requeue, err := r.release(t.Context(), &live)
		if err != nil || requeue != wantRequeue {
			t.Fatalf("release = %s, %v; want %s", requeue, err, wantRequeue)
		}
		if diff := cmp.Diff(wantTerminating, terminating()); diff != "" {
			t.Errorf("terminating (-want +got):\n%s", diff)
		}
	}
	release(reverseDeletionRequeue, "web-prod")
	release(reverseDeletionRequeue, "web-prod") // not gone yet: dev waits
	gone("web-prod")
	release(reverseDeletionRequeue, "web-dev")
	gone("web-dev")
	release(0)
	var live v1alpha1.ApplicationSet
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(set), &live); err == nil {
		t.Errorf("applicationset kept its finalizers %v", live.Finalizers)
	}
}

// TestSyncPendingConflict: a RollingSync whose sync request meets a
// conflict (the Application changed since the cache read it, its status
// say, which need not requeue the ApplicationSet) asks again within a
// second instead of waiting for the next poll.
func TestSyncPendingConflict(t *testing.T) {
	app := labelled("web-prod", map[string]string{"env": "prod"})
	app.Namespace = "argocd"
	conflicts := 0
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(app).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			conflicts++
			return apierrors.NewConflict(schema.GroupResource{Group: "argoproj.io", Resource: "applications"}, obj.GetName(), errors.New("changed"))
		},
	}).Build()
	r := &Reconciler{deps: Dependencies{Client: c, APIReader: c}}
	p := &appSetPass{set: &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd"}}, rollout: &rollout{
		statuses: []v1alpha1.ApplicationSetApplicationStatus{{Application: "web-prod", Status: v1alpha1.ProgressiveSyncPending, Step: "1"}},
		toSync:   map[string]bool{"web-prod": true},
	}}
	if err := r.syncPending(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if conflicts != 1 || !p.rollout.again {
		t.Errorf("conflicts %d, again %v; want one conflict and the pass asked again", conflicts, p.rollout.again)
	}
}
