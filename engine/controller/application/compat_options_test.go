package application

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
	"github.com/tollgate-dev/tollgate/engine/authority"
)

// TestCreateNamespaceOption: CreateNamespace=true in the Application's
// syncOptions makes the sync create its destination namespace (with
// managedNamespaceMetadata's labels and annotations), as in Argo CD; without
// the option, or without a destination namespace, there is none.
func TestCreateNamespaceOption(t *testing.T) {
	app := func(namespace string, meta *v1alpha1.ManagedNamespaceMetadata) *v1alpha1.Application {
		a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd"}}
		a.Spec.Destination = v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: namespace}
		a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{ManagedNamespaceMetadata: meta}
		return a
	}
	meta := &v1alpha1.ManagedNamespaceMetadata{Labels: map[string]string{"team": "web"}, Annotations: map[string]string{"owner": "web-team"}}
	tests := []struct {
		name    string
		app     *v1alpha1.Application
		options []string
		want    *authority.Namespace
	}{
		{name: "CreateNamespace=true", app: app("web", nil), options: []string{"CreateNamespace=true"}, want: &authority.Namespace{Name: "web"}},
		{
			name: "with managedNamespaceMetadata", app: app("web", meta), options: []string{"CreateNamespace=true"},
			want: &authority.Namespace{Name: "web", Labels: meta.Labels, Annotations: meta.Annotations},
		},
		{name: "without the option", app: app("web", meta)},
		{name: "CreateNamespace=false", app: app("web", meta), options: []string{"CreateNamespace=false"}},
		{name: "no destination namespace", app: app("", nil), options: []string{"CreateNamespace=true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := plan.ParseSyncOptions(tt.options...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, managedNamespace(tt.app, opts)); diff != "" {
				t.Errorf("namespace the sync creates (-want +got):\n%s", diff)
			}
		})
	}
}
