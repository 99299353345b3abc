package appops

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// reconciledApp is an Application as the controller writes it after a
// sync: resources in the status, the history, the last operation with a
// result per resource, annotations and managed fields.
func reconciledApp(resources int) *v1alpha1.Application {
	at := func(m int) *metav1.Time {
		t := metav1.NewTime(time.Date(2030, 1, 2, 3, m, 0, 0, time.UTC))
		return &t
	}
	src := v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/platform/config.git", Path: "apps/billing", TargetRevision: "main"}
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "argocd", Name: "billing", ResourceVersion: "41", UID: "0b3f7c8e-0000-4000-8000-000000000001",
			Generation: 3, CreationTimestamp: *at(0),
			Labels:      map[string]string{"team": "billing"},
			Annotations: map[string]string{"notifications.argoproj.io/subscribe.on-sync-failed.slack": "billing-alerts"},
			Finalizers:  []string{"resources-finalizer.argocd.argoproj.io"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "argoproj.io/v1alpha1", FieldsType: "FieldsV1",
					FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:destination":{"f:namespace":{},"f:server":{}},"f:project":{},"f:source":{"f:path":{},"f:repoURL":{},"f:targetRevision":{}}}}`)}},
				{Manager: "tollgate", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "argoproj.io/v1alpha1", FieldsType: "FieldsV1",
					FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{".":{},"f:health":{},"f:history":{},"f:operationState":{},"f:reconciledAt":{},"f:resources":{},"f:summary":{},"f:sync":{}}}`)}},
			},
		},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "billing",
			Source:      &src,
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "billing"},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}, SyncOptions: []string{"CreateNamespace=true"}},
		},
	}
	rev := "0123456789abcdef0123456789abcdef01234567"
	st := &app.Status
	result := &v1alpha1.SyncOperationResult{Revision: rev, Source: src}
	for i := range resources {
		kind, group, version := "ConfigMap", "", "v1"
		if i%3 == 1 {
			kind, group, version = "Deployment", "apps", "v1"
		}
		name := fmt.Sprintf("billing-%02d", i)
		st.Resources = append(st.Resources, v1alpha1.ResourceStatus{Group: group, Version: version, Kind: kind, Namespace: "billing", Name: name,
			Status: v1alpha1.SyncStatusCodeSynced, Health: &v1alpha1.HealthStatus{Status: "Healthy"}})
		result.Resources = append(result.Resources, v1alpha1.ResourceResult{Group: group, Version: version, Kind: kind, Namespace: "billing", Name: name,
			Status: "Synced", Message: kind + " " + name + " configured", SyncPhase: "Sync"})
		st.Summary.Images = append(st.Summary.Images, fmt.Sprintf("registry.example.com/billing/api-%d:1.4.2", i))
	}
	st.Sync = v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: rev, ComparedTo: v1alpha1.ComparedTo{Source: src, Destination: app.Spec.Destination}}
	st.Health = v1alpha1.HealthStatus{Status: "Healthy", LastTransitionTime: at(5)}
	for i := range 10 {
		st.History = append(st.History, v1alpha1.RevisionHistory{ID: int64(i + 1), Revision: rev, DeployedAt: *at(i), DeployStartedAt: at(i), Source: src,
			InitiatedBy: v1alpha1.OperationInitiator{Automated: true}})
	}
	st.OperationState = &v1alpha1.OperationState{Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: rev, Prune: true}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}},
		Phase: v1alpha1.OperationSucceeded, Message: "successfully synced (all tasks run)", SyncResult: result, StartedAt: *at(9), FinishedAt: at(10)}
	st.Conditions = []v1alpha1.ApplicationCondition{{Type: v1alpha1.ApplicationConditionOrphanedResourceWarning, Message: "1 orphaned resource", LastTransitionTime: at(1)}}
	st.ReconciledAt, st.SourceType = at(11), "Directory"
	return app
}

// TestPatchData checks that the patch computed from the changed fields is
// client.MergeFrom's patch of the whole Application, with and without the
// lock, and that nothing is sent when nothing changed.
func TestPatchData(t *testing.T) {
	full := func() *v1alpha1.Application { return reconciledApp(50) }
	tests := []struct {
		name  string
		base  func() *v1alpha1.Application
		edit  func(*v1alpha1.Application)
		empty bool
	}{
		{name: "nothing changed", base: full, edit: func(*v1alpha1.Application) {}, empty: true},
		{name: "nil and empty lists encode alike", base: full, edit: func(a *v1alpha1.Application) { a.Spec.IgnoreDifferences = []v1alpha1.ResourceIgnoreDifferences{} }, empty: true},
		{name: "reconciledAt", base: full, edit: func(a *v1alpha1.Application) {
			a.Status.ReconciledAt = &metav1.Time{Time: time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)}
		}},
		{name: "one resource's health", base: full, edit: func(a *v1alpha1.Application) {
			a.Status.Resources[7].Health = &v1alpha1.HealthStatus{Status: "Degraded", Message: "0/1 ready"}
		}},
		{name: "conditions removed", base: full, edit: func(a *v1alpha1.Application) { a.Status.Conditions = nil }},
		{name: "annotation removed, label added", base: full, edit: func(a *v1alpha1.Application) {
			delete(a.Annotations, "notifications.argoproj.io/subscribe.on-sync-failed.slack")
			a.Labels["tier"] = "1"
		}},
		{name: "last annotation removed", base: full, edit: func(a *v1alpha1.Application) { a.Annotations = map[string]string{} }},
		{name: "operation set", base: full, edit: func(a *v1alpha1.Application) {
			a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Prune: true}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}
		}},
		{name: "automated sync off", base: full, edit: func(a *v1alpha1.Application) { a.Spec.SyncPolicy.Automated = nil }},
		{name: "operation state and history", base: full, edit: func(a *v1alpha1.Application) {
			a.Status.OperationState.Phase = v1alpha1.OperationRunning
			a.Status.History = a.Status.History[1:]
		}},
		{name: "status emptied", base: full, edit: func(a *v1alpha1.Application) { a.Status = v1alpha1.ApplicationStatus{} }},
		{name: "the only change empties the status but for an unchanged field", base: sparseApp, edit: func(a *v1alpha1.Application) { a.Status.Conditions = nil }},
		{name: "status emptied, sparse", base: sparseApp, edit: func(a *v1alpha1.Application) { a.Status = v1alpha1.ApplicationStatus{} }},
		{name: "status filled from empty", base: func() *v1alpha1.Application {
			return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "new", ResourceVersion: "1"}}
		}, edit: func(a *v1alpha1.Application) { a.Status = reconciledApp(3).Status }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.base()
			app := base.DeepCopy()
			tc.edit(app)
			for _, lock := range []bool{false, true} {
				got, err := patchData(base, app, lock)
				if err != nil {
					t.Fatal(err)
				}
				if tc.empty {
					if got != nil {
						t.Errorf("lock %t: patch %s, want none", lock, got)
					}
					continue
				}
				var opts []client.MergeFromOption
				if lock {
					opts = append(opts, client.MergeFromWithOptimisticLock{})
				}
				want, err := client.MergeFromWithOptions(base, opts...).Data(app)
				if err != nil {
					t.Fatal(err)
				}
				if !jsonpatch.Equal(got, want) {
					t.Errorf("lock %t: patch\n got %s\nwant %s", lock, got, want)
				}
			}
			if diff := cmp.Diff(tc.base(), base); diff != "" {
				t.Errorf("base changed (-want +got):\n%s", diff)
			}
		})
	}
}

// sparseApp is an Application whose status has two fields: a change that
// removes one must not remove the status whole.
func sparseApp() *v1alpha1.Application {
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "sparse", ResourceVersion: "3"}}
	app.Status.Conditions = []v1alpha1.ApplicationCondition{{Type: "SyncError", Message: "boom"}}
	app.Status.SourceType = "Helm"
	return app
}

func newFakeClient(t *testing.T, patches *int, apps ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(apps...).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			*patches++
			return c.Patch(ctx, obj, patch, opts...)
		},
	}).Build()
}

func TestPatch(t *testing.T) {
	stored := reconciledApp(50)
	stored.ResourceVersion = ""
	var patches int
	c := newFakeClient(t, &patches, stored)
	read := func() *v1alpha1.Application {
		var app v1alpha1.Application
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(stored), &app); err != nil {
			t.Fatal(err)
		}
		return &app
	}

	t.Run("nothing changed, nothing sent", func(t *testing.T) {
		app := read()
		for _, o := range []PatchOptions{{}, {Lock: true}, {MetadataOnly: true}} {
			if err := Patch(t.Context(), c, app.DeepCopy(), app, o); err != nil {
				t.Fatal(err)
			}
		}
		if patches != 0 {
			t.Errorf("%d patches sent, want none", patches)
		}
	})

	t.Run("metadata-only answer", func(t *testing.T) {
		app := read()
		base := app.DeepCopy()
		app.Status.ReconciledAt = &metav1.Time{Time: time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)}
		app.Status.Resources[3].Health = &v1alpha1.HealthStatus{Status: "Progressing"}
		if err := Patch(t.Context(), c, base, app, PatchOptions{Lock: true, MetadataOnly: true}); err != nil {
			t.Fatal(err)
		}
		got := read()
		if app.ResourceVersion == base.ResourceVersion || app.ResourceVersion != got.ResourceVersion {
			t.Errorf("resourceVersion %s after the write (read %s, stored %s), want the stored one", app.ResourceVersion, base.ResourceVersion, got.ResourceVersion)
		}
		if diff := cmp.Diff(got, app); diff != "" {
			t.Errorf("app after the write (-stored +app):\n%s", diff)
		}
	})

	t.Run("without the lock, others' changes stay", func(t *testing.T) {
		app := read()
		base := app.DeepCopy()
		other := read()
		other.Annotations[v1alpha1.AnnotationKeyRefresh] = v1alpha1.RefreshTypeNormal
		if err := c.Update(t.Context(), other); err != nil {
			t.Fatal(err)
		}
		app.Status.Conditions = nil
		if err := Patch(t.Context(), c, base, app, PatchOptions{MetadataOnly: true}); err != nil {
			t.Fatal(err)
		}
		got := read()
		if got.Annotations[v1alpha1.AnnotationKeyRefresh] != v1alpha1.RefreshTypeNormal || got.Status.Conditions != nil || len(got.Status.Resources) != 50 {
			t.Errorf("after the write: annotations %v, conditions %v, %d resources", got.Annotations, got.Status.Conditions, len(got.Status.Resources))
		}
	})

	t.Run("with the lock, a lost race is a conflict", func(t *testing.T) {
		app := read()
		other := read()
		other.Labels["moved"] = "yes"
		if err := c.Update(t.Context(), other); err != nil {
			t.Fatal(err)
		}
		before := patches
		err := Edit(t.Context(), c, app, "request sync of", func(a *v1alpha1.Application) {
			a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
		})
		if !apierrors.IsConflict(err) {
			t.Fatalf("error %v, want a conflict", err)
		}
		const want = "request sync of billing: the application changed meanwhile, try again: "
		if msg := err.Error(); !strings.HasPrefix(msg, want) {
			t.Errorf("error %q, want it to start with %q", msg, want)
		}
		if patches != before+1 || read().Operation != nil {
			t.Errorf("%d patches, operation %v: want one refused patch", patches-before, read().Operation)
		}
	})

	t.Run("missing application", func(t *testing.T) {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "gone", ResourceVersion: "1"}}
		err := Edit(t.Context(), c, app, "set sync policy of", func(a *v1alpha1.Application) { a.Spec.Project = "p" })
		if !apierrors.IsNotFound(err) || !strings.HasPrefix(err.Error(), "set sync policy of gone: ") {
			t.Errorf("error %v, want not found", err)
		}
	})
}

// BenchmarkPatchData measures the patch of a controller's status write on
// an Application of 50 resources (idle: a resync that changes reconciledAt
// only; health: one resource's health changed too), beside
// client.MergeFrom's patch of the whole Application.
func BenchmarkPatchData(b *testing.B) {
	base := reconciledApp(50)
	reconciled := func(a *v1alpha1.Application) {
		a.Status.ReconciledAt = &metav1.Time{Time: time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)}
	}
	for _, bc := range []struct {
		name string
		edit func(*v1alpha1.Application)
	}{
		{"unchanged", func(*v1alpha1.Application) {}},
		{"idle", reconciled},
		{"health", func(a *v1alpha1.Application) {
			reconciled(a)
			a.Status.Resources[7].Health = &v1alpha1.HealthStatus{Status: "Degraded"}
			a.Status.Health.Status = "Degraded"
		}},
	} {
		app := base.DeepCopy()
		bc.edit(app)
		b.Run(bc.name+"/changed-fields", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := patchData(base, app, false); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/MergeFrom", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := client.MergeFrom(base).Data(app); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
