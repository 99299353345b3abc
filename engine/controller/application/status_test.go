package application

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// TestWriteApplication: a status write sends what the pass changed only,
// so a refresh request or a spec edit made meanwhile stays; the write that
// clears the operation that ran keeps a new request made meanwhile; and a
// fence another replica took meanwhile drops the write.
func TestWriteApplication(t *testing.T) {
	at := metav1.NewTime(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	ran := &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "v1"}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}
	next := &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "v2"}, InitiatedBy: v1alpha1.OperationInitiator{Username: "bob"}}
	tests := []struct {
		name      string
		stored    func(*v1alpha1.Application)
		meanwhile func(*v1alpha1.Application)
		ranOp     *v1alpha1.Operation
		fence     string
		want      func(*v1alpha1.Application)
		wantErr   error
	}{
		{
			name: "status only: others' changes stay",
			meanwhile: func(a *v1alpha1.Application) {
				a.Annotations = map[string]string{v1alpha1.AnnotationKeyRefresh: "hard"}
				a.Spec.Project = "other"
			},
			want: func(a *v1alpha1.Application) {
				a.Annotations = map[string]string{v1alpha1.AnnotationKeyRefresh: "hard"}
				a.Spec.Project = "other"
			},
		},
		{
			name:   "operation that ran is cleared",
			stored: func(a *v1alpha1.Application) { a.Operation = ran.DeepCopy() },
			ranOp:  ran,
		},
		{
			name:      "a request made meanwhile stays",
			stored:    func(a *v1alpha1.Application) { a.Operation = ran.DeepCopy() },
			meanwhile: func(a *v1alpha1.Application) { a.Operation = next.DeepCopy() },
			ranOp:     ran,
			want:      func(a *v1alpha1.Application) { a.Operation = next.DeepCopy() },
		},
		{
			name:      "fence taken by another replica",
			stored:    func(a *v1alpha1.Application) { a.Annotations = map[string]string{AnnotationOperationReplica: "r1"} },
			meanwhile: func(a *v1alpha1.Application) { a.Annotations[AnnotationOperationReplica] = "r2" },
			fence:     "r1",
			wantErr:   errFenceLost,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stored := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "web"}, Spec: v1alpha1.ApplicationSpec{Project: "default"}}
			stored.Status.Resources = []v1alpha1.ResourceStatus{{Kind: "ConfigMap", Name: "c", Status: v1alpha1.SyncStatusCodeOutOfSync}}
			if tc.stored != nil {
				tc.stored(stored)
			}
			c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(stored).Build()
			get := func() *v1alpha1.Application {
				var app v1alpha1.Application
				if err := c.Get(t.Context(), client.ObjectKeyFromObject(stored), &app); err != nil {
					t.Fatal(err)
				}
				return &app
			}
			app := get()
			orig := app.DeepCopy()
			if tc.meanwhile != nil {
				other := get()
				tc.meanwhile(other)
				if err := c.Update(t.Context(), other); err != nil {
					t.Fatal(err)
				}
			}
			app.Status.Resources[0].Status = v1alpha1.SyncStatusCodeSynced
			app.Status.ReconciledAt = &at
			if tc.fence != "" {
				delete(app.Annotations, AnnotationOperationReplica)
			}
			err := writeApplication(t.Context(), c, orig, app, tc.ranOp, tc.fence)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := get()
			want := stored.DeepCopy()
			want.ResourceVersion = got.ResourceVersion
			want.Operation = nil
			want.Status = app.Status
			if tc.want != nil {
				tc.want(want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stored application (-want +got):\n%s", diff)
			}
			if app.ResourceVersion != got.ResourceVersion {
				t.Errorf("resourceVersion %s after the write, stored %s", app.ResourceVersion, got.ResourceVersion)
			}
		})
	}
}

func TestWaitingMessage(t *testing.T) {
	web := apply.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	db := apply.Ref{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "shop", Name: "db"}
	migrate := apply.Ref{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "migrate"}
	res := apply.WaveResult{Results: []apply.ResourceResult{{Ref: web}, {Ref: db}, {Ref: migrate, Hook: true}}}
	for _, tt := range []struct {
		pending []apply.Ref
		want    string
	}{
		{nil, "one or more tasks are running"},
		{[]apply.Ref{web}, "waiting for healthy state of apps/Deployment/web"},
		{[]apply.Ref{web, db}, "waiting for healthy state of apps/Deployment/web and 1 more resources"},
		{[]apply.Ref{migrate, web, db}, "waiting for completion of hook batch/Job/migrate and 2 more resources"},
		{[]apply.Ref{migrate}, "waiting for completion of hook batch/Job/migrate"},
	} {
		if got := waitingMessage(res, tt.pending); got != tt.want {
			t.Errorf("pending %v: %q, want %q", tt.pending, got, tt.want)
		}
	}
}
