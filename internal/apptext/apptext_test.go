package apptext

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// The full text of stored Applications is held by the goldens of
// `tollgate app get` (cmd/tollgate/testdata/app-get); these cases pin the
// rules of each section.
func TestWrite(t *testing.T) {
	started := metav1.NewTime(time.Date(2030, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600)))
	finished := metav1.NewTime(started.Add(90 * time.Second))
	bare := func() *v1alpha1.Application {
		return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "web"}}
	}
	tests := []struct {
		name string
		app  func() *v1alpha1.Application
		want string
	}{
		{
			name: "never compared: the summary alone",
			app:  bare,
			want: `Name:               argocd/web
Project:
Server:
Namespace:
Sync Policy:        Manual
Sync Status:        Unknown
Health Status:      Unknown
`,
		},
		{
			name: "requested operation, multi-line condition",
			app: func() *v1alpha1.Application {
				a := bare()
				a.Spec.Project = "team-web"
				a.Spec.Destination = v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: "web"}
				a.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://example.com/r.git", Chart: "web", TargetRevision: "1.2.0"}
				a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{SyncOptions: []string{"CreateNamespace=true", "Prune=false"}}
				a.Status.Health = v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusDegraded, Message: "1 of 2 replicas"}
				a.Operation = &v1alpha1.Operation{InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}
				a.Status.Conditions = []v1alpha1.ApplicationCondition{{Type: "ComparisonError", Message: "render:\n\tline one\nline two"}, {Type: "Warning", Message: "tab\there"}}
				return a
			},
			want: `Name:               argocd/web
Project:            team-web
Server:             in-cluster
Namespace:          web
Repo:               https://example.com/r.git
Target:             1.2.0
Chart:              web
Sync Policy:        Manual
Sync Options:       CreateNamespace=true, Prune=false
Sync Status:        Unknown
Health Status:      Degraded (1 of 2 replicas)
Pending Operation:  Sync requested by alice

CONDITION        MESSAGE
ComparisonError  render:
                  line one
                 line two
Warning          tab here
`,
		},
		{
			name: "last operation and resources, hooks from its result",
			app: func() *v1alpha1.Application {
				a := bare()
				a.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://example.com/r.git"}
				a.Status.Sync = v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: "abc"}
				a.Status.Health.Status = v1alpha1.HealthStatusHealthy
				a.Status.Resources = []v1alpha1.ResourceStatus{
					{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "web", Status: v1alpha1.SyncStatusCodeSynced, Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy}, SyncWave: 1},
				}
				a.Status.OperationState = &v1alpha1.OperationState{
					Operation:  v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "main"}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}},
					Phase:      v1alpha1.OperationSucceeded,
					Message:    "successfully synced",
					StartedAt:  started,
					FinishedAt: &finished,
					SyncResult: &v1alpha1.SyncOperationResult{Revision: "abc", Resources: []v1alpha1.ResourceResult{
						{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "web", Message: "deployment.apps/web configured"},
						{Kind: "Job", Namespace: "web", Name: "migrate", HookType: "PreSync", HookPhase: v1alpha1.OperationSucceeded, Status: "Synced", Message: "job completed"},
					}},
				}
				return a
			},
			want: `Name:               argocd/web
Project:
Server:
Namespace:
Repo:               https://example.com/r.git
Sync Policy:        Manual
Sync Status:        Synced to HEAD (abc)
Health Status:      Healthy

Operation:          Sync
Sync Revision:      abc
Initiated By:       automated sync
Phase:              Succeeded
Start:              2030-01-02T02:04:05Z
Finished:           2030-01-02T02:05:35Z
Duration:           1m30s
Message:            successfully synced

GROUP  KIND        NAMESPACE  NAME     STATUS     HEALTH   WAVE  HOOK     MESSAGE
apps   Deployment  web        web      Synced     Healthy  1              deployment.apps/web configured
       Job         web        migrate  Succeeded                 PreSync  job completed
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			if err := Write(&out, tc.app()); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncStatusAndPolicy(t *testing.T) {
	const sha = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
	single := func(target string, st v1alpha1.SyncStatus) *v1alpha1.Application {
		a := &v1alpha1.Application{}
		a.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://example.com/r.git", TargetRevision: target}
		a.Status.Sync = st
		return a
	}
	off := false
	tests := []struct {
		name       string
		app        *v1alpha1.Application
		wantStatus string
	}{
		{name: "never compared", app: single("main", v1alpha1.SyncStatus{}), wantStatus: "Unknown"},
		{name: "synced to a branch", app: single("main", v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: sha}), wantStatus: "Synced to main (1a2b3c4)"},
		{name: "out of sync from the default target", app: single("", v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeOutOfSync, Revision: sha}), wantStatus: "OutOfSync from HEAD (1a2b3c4)"},
		{name: "target is the revision", app: single("v1.2.0", v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: "v1.2.0"}), wantStatus: "Synced to v1.2.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := syncStatus(tc.app); got != tc.wantStatus {
				t.Errorf("syncStatus = %q, want %q", got, tc.wantStatus)
			}
		})
	}
	policies := []struct {
		policy *v1alpha1.SyncPolicy
		want   string
	}{
		{nil, "Manual"},
		{&v1alpha1.SyncPolicy{SyncOptions: []string{"CreateNamespace=true"}}, "Manual"},
		{&v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, Enabled: &off}}, "Manual"},
		{&v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}, "Automated"},
		{&v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true, AllowEmpty: true}}, "Automated (Prune, SelfHeal, AllowEmpty)"},
	}
	for _, tc := range policies {
		if got := syncPolicy(tc.policy); got != tc.want {
			t.Errorf("syncPolicy(%+v) = %q, want %q", tc.policy, got, tc.want)
		}
	}
}
