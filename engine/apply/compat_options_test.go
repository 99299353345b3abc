package apply

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
)

// TestSkipDryRunOnMissingResource: an object whose kind the API server
// does not serve fails its wave before anything is written, unless it
// says SkipDryRunOnMissingResource=true (itself or the Application's
// syncOptions) or its CustomResourceDefinition is in the same wave: then
// it is applied without a dry run, as in Argo CD.
func TestSkipDryRunOnMissingResource(t *testing.T) {
	widget := func(syncOptions string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("example.com/v1")
		u.SetKind("Widget")
		u.SetNamespace("shop")
		u.SetName("w")
		if syncOptions != "" {
			u.SetAnnotations(map[string]string{plan.AnnotationSyncOptions: syncOptions})
		}
		return u
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets.example.com"},
		"spec":       map[string]any{"group": "example.com", "names": map[string]any{"kind": "Widget", "plural": "widgets"}},
	}}
	const missing = "kind Widget.example.com is not served by the API server (add its CustomResourceDefinition to an earlier wave, or set SkipDryRunOnMissingResource=true)"
	tests := []struct {
		name    string
		objs    []*unstructured.Unstructured
		appOpts []string
		// want is the Widget's failure message, "" when it skips the dry run.
		want string
	}{
		{name: "without the option", objs: []*unstructured.Unstructured{widget("")}, want: missing},
		{name: "the object's annotation", objs: []*unstructured.Unstructured{widget("SkipDryRunOnMissingResource=true")}},
		{name: "the Application's syncOptions", objs: []*unstructured.Unstructured{widget("")}, appOpts: []string{"SkipDryRunOnMissingResource=true"}},
		{name: "its CustomResourceDefinition in the wave", objs: []*unstructured.Unstructured{crd, widget("")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			waves, err := plan.Build(tt.objs, tt.appOpts...)
			if err != nil {
				t.Fatal(err)
			}
			if len(waves) != 1 {
				t.Fatalf("%d waves, want 1", len(waves))
			}
			var items []*item
			var w *item
			for _, task := range waves[0].Tasks {
				it := &item{task: task, obj: task.Object, ref: RefOf(task.Object)}
				if task.Object.GetKind() == "Widget" {
					it.unknownKind, w = true, it
					items = append(items, it)
				}
			}
			// No item reaches the API server: the client is never used.
			if err := (&Applier{}).check(t.Context(), waves[0], items, WaveOptions{App: "shop"}, nil); err != nil {
				t.Fatal(err)
			}
			if w.res.Message != tt.want {
				t.Errorf("failure %q, want %q", w.res.Message, tt.want)
			}
			if skipped := tt.want == ""; w.skipDryRun != skipped || (w.res.Status == ResultSyncFailed) == skipped {
				t.Errorf("skipDryRun %v, status %q; want the dry run skipped: %v", w.skipDryRun, w.res.Status, skipped)
			}
		})
	}
}

// TestPrunePropagationPolicy: the Application's PrunePropagationPolicy
// sync option is the propagation policy of every prune's delete call
// (foreground without it), as in Argo CD.
func TestPrunePropagationPolicy(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		appOpts []string
		want    metav1.DeletionPropagation
	}{
		{name: "default", want: metav1.DeletePropagationForeground},
		{name: "foreground", appOpts: []string{"PrunePropagationPolicy=foreground"}, want: metav1.DeletePropagationForeground},
		{name: "background", appOpts: []string{"PrunePropagationPolicy=background"}, want: metav1.DeletePropagationBackground},
		{name: "orphan", appOpts: []string{"PrunePropagationPolicy=orphan"}, want: metav1.DeletePropagationOrphan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := &unstructured.Unstructured{}
			live.SetAPIVersion("v1")
			live.SetKind("ConfigMap")
			live.SetNamespace("web")
			live.SetName("old")
			v1alpha1.SetTracking(live, "shop", v1alpha1.TrackingMethodAnnotation)
			var got []metav1.DeletionPropagation
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(live.DeepCopy()).WithInterceptorFuncs(interceptor.Funcs{
				Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
					var do client.DeleteOptions
					do.ApplyOptions(opts)
					if do.PropagationPolicy != nil {
						got = append(got, *do.PropagationPolicy)
					}
					return c.Delete(ctx, obj, opts...)
				},
			}).Build()
			a, err := New(c, Options{})
			if err != nil {
				t.Fatal(err)
			}
			opts, err := plan.ParseSyncOptions(tt.appOpts...)
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Prune(t.Context(), []*unstructured.Unstructured{live}, nil, PruneOptions{
				App: "shop", PropagationPolicy: opts.PrunePropagationPolicy, AppSyncOptions: tt.appOpts,
			})
			if err != nil {
				t.Fatalf("Prune: %v (results %+v)", err, res)
			}
			if diff := cmp.Diff([]metav1.DeletionPropagation{tt.want}, got); diff != "" {
				t.Errorf("propagation of the delete calls (-want +got):\n%s", diff)
			}
		})
	}
}
