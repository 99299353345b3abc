package appops

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

func newClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

func createTestApp() *v1alpha1.Application {
	a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd", Labels: map[string]string{"team": "a"}}}
	a.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/a.git", Path: "web"}
	a.Spec.Destination.Server = "https://kubernetes.default.svc"
	return a
}

// TestCreate: Argo CD's create with upsert: created, unchanged when
// equal, refused when different, updated with upsert (labels merged).
func TestCreate(t *testing.T) {
	c := newClient(t)
	req := createTestApp()
	req.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
	if got, err := Create(t.Context(), c, req, false); err != nil || got != Created {
		t.Fatalf("create: %q, %v", got, err)
	}
	key := types.NamespacedName{Namespace: "argocd", Name: "web"}
	stored, err := Get(t.Context(), c, key)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Operation != nil || stored.Spec.Project != "default" {
		t.Errorf("stored: operation %v, project %q; want none and default", stored.Operation, stored.Spec.Project)
	}
	if got, err := Create(t.Context(), c, createTestApp(), false); err != nil || got != Unchanged {
		t.Fatalf("same again: %q, %v", got, err)
	}
	other := createTestApp()
	other.Spec.Source.Path = "api"
	other.Labels = map[string]string{"tier": "web"}
	_, err = Create(t.Context(), c, other.DeepCopy(), false)
	var re *RefusedError
	if !errors.Is(err, ErrSpecDiffers) || !errors.As(err, &re) || err.Error() != "existing application spec is different, use upsert flag to force update" {
		t.Fatalf("different without upsert: %v", err)
	}
	if got, err := Create(t.Context(), c, other, true); err != nil || got != Updated {
		t.Fatalf("upsert: %q, %v", got, err)
	}
	stored, err = Get(t.Context(), c, key)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"team": "a", "tier": "web"}, stored.Labels); diff != "" || stored.Spec.Source.Path != "api" {
		t.Errorf("labels (-want +got):\n%s\npath %q", diff, stored.Spec.Source.Path)
	}
}

// TestPatchRequest: argocd app patch's json and merge patches; the status
// is not written; bad patches are refused.
func TestPatchRequest(t *testing.T) {
	app := createTestApp()
	app.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced
	c := newClient(t, app)
	key := types.NamespacedName{Namespace: "argocd", Name: "web"}
	got, err := PatchRequest(t.Context(), c, key, `[{"op": "replace", "path": "/spec/source/path", "value": "newPath"}, {"op": "replace", "path": "/status/sync/status", "value": "OutOfSync"}]`, "")
	if err != nil || got.Spec.Source.Path != "newPath" {
		t.Fatalf("json patch: %v, path %q", err, got.Spec.Source.Path)
	}
	if got, err = PatchRequest(t.Context(), c, key, `{"spec": {"source": {"targetRevision": "master"}}, "metadata": {"labels": {"team": null}}}`, PatchTypeMerge); err != nil {
		t.Fatal(err)
	}
	stored, err := Get(t.Context(), c, key)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Spec.Source.Path != "newPath" || stored.Spec.Source.TargetRevision != "master" || len(stored.Labels) != 0 || stored.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
		t.Errorf("stored: source %+v, labels %v, sync %s", stored.Spec.Source, stored.Labels, stored.Status.Sync.Status)
	}
	for _, tc := range []struct{ patch, typ, want string }{
		{`{"op": "replace"}`, "json", "error decoding json patch: "},
		{`[{"op": "remove", "path": "/spec/nope"}]`, "json", "error applying patch: "},
		{`{}`, "strategic", "Patch type 'strategic' is not supported"},
	} {
		_, err := PatchRequest(t.Context(), c, key, tc.patch, tc.typ)
		var re *RefusedError
		if err == nil || !errors.As(err, &re) || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
			t.Errorf("%s %s: %v, want a refusal starting %q", tc.typ, tc.patch, err, tc.want)
		}
	}
}
