package application

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// TestFinalizerGone: delete hooks run only while the API server's
// Application still holds their finalizer, whatever a stale cache shows.
func TestFinalizerGone(t *testing.T) {
	cached := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "web",
		Finalizers: []string{v1alpha1.PreDeleteFinalizerName, v1alpha1.ResourcesFinalizerName}}}
	current := cached.DeepCopy()
	current.Finalizers = []string{v1alpha1.ResourcesFinalizerName}
	tests := []struct {
		name string
		r    *Reconciler
		fin  string
		want bool
	}{
		{"removed since the cache was read", &Reconciler{apiReader: fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(current).Build()}, v1alpha1.PreDeleteFinalizerName, true},
		{"still there", &Reconciler{apiReader: fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(current).Build()}, v1alpha1.ResourcesFinalizerName, false},
		{"application gone", &Reconciler{apiReader: fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).Build()}, v1alpha1.PreDeleteFinalizerName, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.r.finalizerGone(t.Context(), cached, tc.fin)
			if err != nil || got != tc.want {
				t.Errorf("finalizerGone = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
