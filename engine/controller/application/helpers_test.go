package application

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/engine/desired"
	"github.com/tollgate-dev/tollgate/policies"
)

func TestOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "zero value takes defaults"},
		{name: "negative resync", opts: Options{Resync: -time.Second}, wantErr: "resync -1s is negative"},
		{name: "jitter too large", opts: Options{Jitter: 1}, wantErr: "jitter 1 is not in [0, 1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := tc.opts.withDefaults()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Namespace != "argocd" || o.Resync != DefaultResync || o.FieldManager != "tollgate" || o.Now == nil || o.Float64 == nil {
				t.Errorf("defaults not filled: %+v", o)
			}
		})
	}
}

func TestRequeueJitter(t *testing.T) {
	for _, tc := range []struct {
		rand float64
		want time.Duration
	}{{0, 90 * time.Second}, {0.5, 100 * time.Second}, {0.999999, 100*time.Second + 9999990*time.Microsecond}} {
		o, err := Options{Resync: 100 * time.Second, Float64: func() float64 { return tc.rand }}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		if got := o.requeueAfter(); got.Round(time.Millisecond) != tc.want.Round(time.Millisecond) {
			t.Errorf("requeueAfter with rand %g = %s, want %s", tc.rand, got, tc.want)
		}
	}
}

func TestVerdictMessage(t *testing.T) {
	v := authority.Verdict{Denied: []policies.Violation{
		{Rule: "no-latest-tag", Message: "image web:latest is not pinned", Object: policies.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}},
		{Rule: "project-resource-denied", Message: "ClusterRole is not allowed", Object: policies.ObjectRef{Kind: "ClusterRole", Name: "admin"}},
	}}
	want := "[no-latest-tag] Deployment/shop/web: image web:latest is not pinned\n[project-resource-denied] ClusterRole/admin: ClusterRole is not allowed"
	if got := v.Message(); got != want {
		t.Errorf("message:\n%s\nwant:\n%s", got, want)
	}
}

func TestFingerprintRefsAndCovers(t *testing.T) {
	recorded := []v1alpha1.ResourceStatus{
		{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "a"},
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: "old", RequiresPruning: true},
	}
	desiredObjs, err := desired.Objects([]map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "ns"}}}, "ns", "app", "", meta.NewDefaultRESTMapper(nil))
	if err != nil {
		t.Fatal(err)
	}
	refs := fingerprintRefs(desiredObjs, recorded)
	want := []apply.Ref{
		{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "a"},
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: "old"},
	}
	if diff := cmp.Diff(want, refs); diff != "" {
		t.Errorf("refs (-want +got):\n%s", diff)
	}
	newPrunable := apply.Ref{Version: "v1", Kind: "Secret", Namespace: "ns", Name: "new"}
	if !covers(refs, want[:1]) || covers(refs, []apply.Ref{newPrunable}) {
		t.Errorf("covers: want true for a known ref and false for %v", newPrunable)
	}
}

// TestManagedRefs: of the resources an Application's status records, a
// namespaced cluster's are watched and fingerprinted only inside its
// scope; a kind the cluster does not know is kept (the fingerprint fails
// on it).
func TestManagedRefs(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, meta.RESTScopeRoot)
	refs := []apply.Ref{
		{Version: "v1", Kind: "ConfigMap", Namespace: "web", Name: "in"},
		{Version: "v1", Kind: "ConfigMap", Namespace: "billing", Name: "out"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "cluster"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Namespace: "web", Name: "forged-namespace"},
		{Group: "example.com", Version: "v1", Kind: "Gone", Namespace: "billing", Name: "unknown"},
	}
	for name, tc := range map[string]struct {
		scope apply.Scope
		want  []string
	}{
		"whole cluster":          {want: []string{"in", "out", "cluster", "forged-namespace", "unknown"}},
		"namespaced":             {scope: apply.Scope{Namespaces: []string{"web"}}, want: []string{"in", "unknown"}},
		"with cluster resources": {scope: apply.Scope{Namespaces: []string{"web"}, ClusterResources: true}, want: []string{"in", "cluster", "forged-namespace", "unknown"}},
	} {
		cl := &cluster{mapper: mapper, scope: tc.scope}
		var got []string
		for _, r := range cl.managed(slices.Clone(refs)) {
			got = append(got, r.Name)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestApplicationChangedPredicate(t *testing.T) {
	base := func() *v1alpha1.Application {
		a := &v1alpha1.Application{}
		a.Spec.Project = "p"
		a.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced
		return a
	}
	now := metav1.Now()
	tests := []struct {
		name   string
		change func(*v1alpha1.Application)
		want   bool
	}{
		{name: "status only (the controller's own write)", change: func(a *v1alpha1.Application) { a.Status.Sync.Status = v1alpha1.SyncStatusCodeOutOfSync }, want: false},
		{name: "spec", change: func(a *v1alpha1.Application) { a.Spec.Project = "q" }, want: true},
		{name: "operation", change: func(a *v1alpha1.Application) { a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}} }, want: true},
		{name: "finalizers", change: func(a *v1alpha1.Application) { a.Finalizers = []string{v1alpha1.ResourcesFinalizerName} }, want: true},
		{name: "deletion", change: func(a *v1alpha1.Application) { a.DeletionTimestamp = &now }, want: true},
		{name: "refresh requested", change: func(a *v1alpha1.Application) {
			a.Annotations = map[string]string{v1alpha1.AnnotationKeyRefresh: v1alpha1.RefreshTypeNormal}
		}, want: true},
		{name: "other annotation", change: func(a *v1alpha1.Application) { a.Annotations = map[string]string{"team": "web"} }, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old, updated := base(), base()
			tc.change(updated)
			if got := applicationChanged().Update(event.UpdateEvent{ObjectOld: old, ObjectNew: updated}); got != tc.want {
				t.Errorf("Update() = %v, want %v", got, tc.want)
			}
		})
	}
}
