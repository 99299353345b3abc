package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// appNamespace creates a namespace named prefix plus a random suffix and
// deletes it when the test ends.
func appNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = env.Client.Delete(ctx, ns)
	})
	return ns.Name
}

// TestApplicationsInAnyNamespace: the engine of strictNS (resync 10
// minutes) also serves the Applications of tenantAppNamespaces, as Argo
// CD's application.namespaces. One in such a namespace that its project
// lists in sourceNamespaces syncs, tracked as "<namespace>_<name>", and a
// live edit is healed from the watch; one whose project does not list its
// namespace gets Argo CD's UnknownError and nothing is applied, its
// requested sync is refused, and listing the namespace in the project
// lets it sync; one in a namespace that is not served is never reconciled.
func TestApplicationsInAnyNamespace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		"manifests/cm.yaml": configMap("settings", "v1"),
		"other/cm.yaml":     configMap("other", "v1"),
	})
	permitted := appNamespace(t, "tenant-apps-a-")
	refused := appNamespace(t, "tenant-apps-b-")
	unserved := appNamespace(t, "outside-apps-")
	f.cp = strictNS
	f.create(repositorySecret(strictNS, f.name, map[string]string{"url": f.repoURL, "insecure": "true"}))
	f.editProject = func(p *v1alpha1.AppProject) { p.Spec.SourceNamespaces = []string{permitted} }
	f.project()

	app := func(ns, path string, auto *v1alpha1.SyncPolicyAutomated) *v1alpha1.Application {
		a := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: ns},
			Spec: v1alpha1.ApplicationSpec{
				Project:     f.name,
				Source:      &v1alpha1.ApplicationSource{RepoURL: f.repoURL, Path: path, TargetRevision: gitserver.DefaultBranch},
				Destination: v1alpha1.ApplicationDestination{Server: inCluster, Namespace: f.ns},
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: auto, Retry: &v1alpha1.RetryStrategy{}},
			},
		}
		f.create(a)
		return a
	}
	read := func(a *v1alpha1.Application) *v1alpha1.Application {
		t.Helper()
		var out v1alpha1.Application
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(a), &out); err != nil {
			t.Fatalf("get application: %v", err)
		}
		return &out
	}
	waitFor := func(a *v1alpha1.Application, desc string, cond func(*v1alpha1.Application) bool) *v1alpha1.Application {
		t.Helper()
		var last *v1alpha1.Application
		eventually(t, desc, func() (bool, string) {
			last = read(a)
			return cond(last), describeApp(last)
		})
		return last
	}

	// Permitted: synced and tracked under "<namespace>_<name>".
	f.cp = permitted
	app(permitted, "manifests", automated(true, true))
	f.waitSynced(f.head)
	var cm corev1.ConfigMap
	if err := f.get(&cm, "settings"); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%s_%s:/ConfigMap:%s/settings", permitted, f.name, f.ns); cm.Annotations[v1alpha1.AnnotationKeyTrackingID] != want {
		t.Errorf("tracking id %q, want %q", cm.Annotations[v1alpha1.AnnotationKeyTrackingID], want)
	}
	// A live edit is seen from the watch (the resync is 10 minutes away).
	if err := env.Client.Patch(t.Context(), &cm, client.RawPatch(types.MergePatchType, []byte(`{"data":{"key":"edited by hand"}}`))); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the live edit is healed", func() (bool, string) {
		if err := f.get(&cm, "settings"); err != nil {
			return false, err.Error()
		}
		return cm.Data["key"] == "v1", fmt.Sprint(cm.Data)
	})

	// Not permitted by the project: Argo CD's condition, nothing applied,
	// a requested sync refused.
	b := app(refused, "other", automated(true, false))
	msg := fmt.Sprintf("application '%s' in namespace '%s' is not permitted to use project '%s'", f.name, refused, f.name)
	waitFor(b, "refused for its namespace", func(a *v1alpha1.Application) bool {
		m, ok := condition(a, v1alpha1.ApplicationConditionUnknownError)
		return ok && m == msg
	})
	edit(t, b, func(a *v1alpha1.Application) {
		a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "tester"}}
	})
	got := waitFor(b, "its sync refused", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return a.Operation == nil && st != nil && st.Phase == v1alpha1.OperationError
	})
	if want := "failed to load application project: " + msg; got.Status.OperationState.Message != want {
		t.Errorf("operation message %q, want %q (Argo CD's)", got.Status.OperationState.Message, want)
	}
	var other corev1.ConfigMap
	if err := f.get(&other, "other"); !apierrors.IsNotFound(err) {
		t.Errorf("the refused Application's ConfigMap: %v, want not found", err)
	}

	// Not served: never reconciled.
	c := app(unserved, "other", automated(true, false))
	consistently(t, "an Application of a namespace not served is left alone", 3*time.Second, func() (bool, string) {
		a := read(c)
		return a.Status.ReconciledAt == nil && len(a.Status.Conditions) == 0, describeApp(a)
	})

	// The project lists the namespace: the refused Application syncs, its
	// condition cleared.
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: strictNS}}
	edit(t, proj, func(p *v1alpha1.AppProject) {
		p.Spec.SourceNamespaces = append(p.Spec.SourceNamespaces, "tenant-apps-b-*")
	})
	waitFor(b, "synced once its namespace is permitted", func(a *v1alpha1.Application) bool {
		_, refusedStill := condition(a, v1alpha1.ApplicationConditionUnknownError)
		return !refusedStill && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Health.Status == v1alpha1.HealthStatusHealthy
	})
	if err := f.get(&other, "other"); err != nil {
		t.Errorf("the ConfigMap of the Application permitted since: %v", err)
	}
}
