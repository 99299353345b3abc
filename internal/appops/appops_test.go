package appops

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestRefusals: what a person cannot ask for is a RefusedError (the CLI's
// exit 2, the UI's message), a rollback with automated sync on says so as
// Argo CD does, and nothing is written. The requests themselves are
// tested through `tollgate app` (cmd/tollgate).
func TestRefusals(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	auto := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "auto"},
		Spec:   v1alpha1.ApplicationSpec{SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}},
		Status: v1alpha1.ApplicationStatus{History: []v1alpha1.RevisionHistory{{ID: 1}, {ID: 2}}}}
	busy := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "busy"}, Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(auto, busy).Build()
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "argocd", Name: name} }

	_, err := Rollback(t.Context(), c, key("auto"), "", false, "alice")
	if !errors.Is(err, ErrAutomatedRollback) || !isRefused(err) {
		t.Errorf("rollback with automated sync: %v", err)
	}
	if err := Sync(t.Context(), c, key("busy"), SyncOptions{}, "alice"); !isRefused(err) || err.Error() != "application busy already has an operation in progress" {
		t.Errorf("sync during an operation: %v", err)
	}
	if err := Sync(t.Context(), c, key("gone"), SyncOptions{}, "alice"); !isRefused(err) || err.Error() != "application gone not found in namespace argocd" {
		t.Errorf("sync of a missing application: %v", err)
	}
	got, err := Get(t.Context(), c, key("auto"))
	if err != nil || got.Operation != nil {
		t.Errorf("a refused rollback wrote an operation: %+v, %v", got.Operation, err)
	}
}

func isRefused(err error) bool {
	var re *RefusedError
	return errors.As(err, &re)
}

// TestSyncCopiesTheRetryStrategy: a requested sync is retried as the
// spec's syncPolicy.retry says, as Argo CD's API server copies it into the
// operation.
func TestSyncCopiesTheRetryStrategy(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	retry := v1alpha1.RetryStrategy{Limit: 3, Backoff: &v1alpha1.Backoff{Duration: "10s"}}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "web"},
		Spec: v1alpha1.ApplicationSpec{SyncPolicy: &v1alpha1.SyncPolicy{Retry: &retry}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(app).Build()
	key := types.NamespacedName{Namespace: "argocd", Name: "web"}
	if err := Sync(t.Context(), c, key, SyncOptions{Prune: true}, "alice"); err != nil {
		t.Fatal(err)
	}
	got, err := Get(t.Context(), c, key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Operation == nil || got.Operation.Retry.Limit != 3 || got.Operation.Retry.Backoff == nil || got.Operation.Retry.Backoff.Duration != "10s" {
		t.Errorf("operation = %+v, want the spec's retry strategy", got.Operation)
	}
}
