package notification

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/notify"
	"github.com/tollgate-dev/tollgate/policies"
)

// TestRecord: the notified state is written on the Application as it is
// on the server, even when the one the notifier judged is stale, and
// removing it keeps the annotations others added meanwhile.
func TestRecord(t *testing.T) {
	const state = `{"[0].abc:on-deployed:slack:ops":1}`
	tests := []struct {
		name      string
		stored    map[string]string
		meanwhile map[string]string
		state     string
		want      map[string]string
	}{
		{name: "first state", state: state, want: map[string]string{notify.AnnotationNotified: state}},
		{
			name:      "state removed, refresh requested meanwhile",
			stored:    map[string]string{notify.AnnotationNotified: state},
			meanwhile: map[string]string{notify.AnnotationNotified: state, v1alpha1.AnnotationKeyRefresh: "normal"},
			want:      map[string]string{v1alpha1.AnnotationKeyRefresh: "normal"},
		},
		{
			name:      "state set, fence taken meanwhile",
			meanwhile: map[string]string{policies.AnnotationOperationReplica: "r1"},
			state:     state,
			want:      map[string]string{policies.AnnotationOperationReplica: "r1", notify.AnnotationNotified: state},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := v1alpha1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			stored := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "web", Annotations: tc.stored}}
			patches := 0
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).WithInterceptorFuncs(interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					patches++
					return c.Patch(ctx, obj, patch, opts...)
				},
			}).Build()
			var app v1alpha1.Application
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(stored), &app); err != nil {
				t.Fatal(err)
			}
			if tc.meanwhile != nil {
				other := app.DeepCopy()
				other.Annotations = tc.meanwhile
				if err := c.Update(t.Context(), other); err != nil {
					t.Fatal(err)
				}
			}
			n := New(c, "argocd", nil, nil, notify.DispatcherOptions{}, logr.Discard())
			if err := n.record(t.Context(), &app, tc.state); err != nil {
				t.Fatal(err)
			}
			var got v1alpha1.Application
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(stored), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			wantPatches := 1
			if tc.meanwhile != nil {
				wantPatches = 2 // a conflict, then the write
			}
			if patches != wantPatches {
				t.Errorf("%d patches, want %d", patches, wantPatches)
			}
		})
	}
}

// TestProject: an Application's project is its own only when the project
// lets Applications of its namespace use it (sourceNamespaces); otherwise
// a template sees no appProject and the repo functions read nothing with
// the project's sourceRepos and credentials.
func TestProject(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "shop"},
		Spec: v1alpha1.AppProjectSpec{SourceNamespaces: []string{"team-a"}, SourceRepos: []string{"*"}}}
	n := New(fake.NewClientBuilder().WithScheme(scheme).WithObjects(proj).Build(), "argocd", nil, nil, notify.DefaultDispatcherOptions(), logr.Discard())
	for ns, want := range map[string]bool{"argocd": true, "team-a": true, "team-b": false} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: v1alpha1.ApplicationSpec{Project: "shop"}}
		got, err := n.project(t.Context(), app)
		if err != nil || (got != nil) != want {
			t.Errorf("Application in %s: project %v, %v; want it: %v", ns, got, err, want)
		}
	}
}
