package applicationset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestUpdateKeepsDeleteHookFinalizers: the finalizers of pre- and
// post-delete hooks, which the Application controller adds, stay on a
// generated Application the ApplicationSet updates, as in Argo CD; the
// ApplicationSet and the Application controller would otherwise rewrite
// them in turn.
func TestUpdateKeepsDeleteHookFinalizers(t *testing.T) {
	app := func(finalizers ...string) *v1alpha1.Application {
		return &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd", Finalizers: finalizers},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/config.git", Path: "web"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"},
			},
		}
	}
	live := app(v1alpha1.ResourcesFinalizerName, v1alpha1.PreDeleteFinalizerName, v1alpha1.PostDeleteFinalizerName+"/cleanup", "example.com/by-hand")
	got := writeOwned(t, compatSet(v1alpha1.ApplicationSetSpec{}), live, app(v1alpha1.ResourcesFinalizerName))
	want := []string{v1alpha1.ResourcesFinalizerName, v1alpha1.PreDeleteFinalizerName, v1alpha1.PostDeleteFinalizerName + "/cleanup"}
	if diff := cmp.Diff(want, got.Finalizers); diff != "" {
		t.Errorf("finalizers (-want +got):\n%s", diff)
	}
}
