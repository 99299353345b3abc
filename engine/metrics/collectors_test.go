package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/google/go-cmp/cmp"
	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// apps lists fixed Applications, each with its destination server.
type apps struct {
	items   []*v1alpha1.Application
	servers []string
	err     error
}

func (a apps) EachApplication(_ context.Context, fn func(*v1alpha1.Application, string)) error {
	for i, app := range a.items {
		fn(app, a.servers[i])
	}
	return a.err
}

func TestAppCollector(t *testing.T) {
	synced := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "guestbook"},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "team",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://user:s3cret@GitHub.com/Org/Guestbook.git/"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		},
		Status: v1alpha1.ApplicationStatus{
			Sync:   v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced},
			Health: v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy},
		},
	}
	// New: no status yet, a sync requested, automation switched off,
	// several sources (the first one's repository), an scp-style address.
	syncing := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "new"},
		Spec: v1alpha1.ApplicationSpec{
			Sources: []v1alpha1.ApplicationSource{
				{RepoURL: "git@gitlab.example.com:platform/charts.git"},
				{RepoURL: "https://github.com/org/values"},
			},
			Destination: v1alpha1.ApplicationDestination{Name: "prod", Namespace: "api"},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Enabled: new(bool)}},
		},
		Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}},
	}
	// Being deleted, from a Helm repository that is no Git URL.
	deleting := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "old", DeletionTimestamp: &metav1.Time{Time: time.Unix(1, 0)}},
		Spec: v1alpha1.ApplicationSpec{
			Source:      &v1alpha1.ApplicationSource{RepoURL: "ghcr.io/org/charts", Chart: "old"},
			Destination: v1alpha1.ApplicationDestination{Name: "gone", Namespace: "old"},
		},
		Status: v1alpha1.ApplicationStatus{
			Sync:   v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeOutOfSync},
			Health: v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusMissing},
		},
		Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}},
	}
	c := NewAppCollector(t.Context(), apps{
		items:   []*v1alpha1.Application{synced, syncing, deleting},
		servers: []string{"https://kubernetes.default.svc", "https://prod.example.com:6443", ""},
	})
	want := `
# HELP argocd_app_info Information about an Application: its sync and health status, destination, repository, automation and operation (Argo CD's metric).
# TYPE argocd_app_info gauge
argocd_app_info{autosync_enabled="false",dest_namespace="api",dest_server="https://prod.example.com:6443",health_status="Unknown",name="new",namespace="argocd",operation="sync",project="default",repo="ssh://git@gitlab.example.com/platform/charts",sync_status="Unknown"} 1
argocd_app_info{autosync_enabled="false",dest_namespace="old",dest_server="",health_status="Missing",name="old",namespace="argocd",operation="delete",project="default",repo="ghcr.io/org/charts",sync_status="OutOfSync"} 1
argocd_app_info{autosync_enabled="true",dest_namespace="web",dest_server="https://kubernetes.default.svc",health_status="Healthy",name="guestbook",namespace="argocd",operation="",project="team",repo="https://github.com/Org/Guestbook",sync_status="Synced"} 1
`
	if diff := cmp.Diff(strings.TrimLeft(want, "\n"), exposition(t, c)); diff != "" {
		t.Errorf("exposition (-want +got):\n%s", diff)
	}
}

// TestAppCollectorListFails reports what was listed before the error.
func TestAppCollectorListFails(t *testing.T) {
	c := NewAppCollector(t.Context(), apps{err: errors.New("cache not synced")})
	if got := exposition(t, c); got != "" {
		t.Errorf("collected:\n%s\nwant nothing", got)
	}
}

type clusters []ClusterInfo

func (cs clusters) EachCluster(fn func(ClusterInfo)) {
	for _, c := range cs {
		fn(c)
	}
}

func TestClusterCollector(t *testing.T) {
	c := NewClusterCollector(clusters{
		{Server: "https://kubernetes.default.svc", Name: "in-cluster", Version: "v1.33.2", Kinds: 4, Objects: 120},
		{Server: "https://prod.example.com:6443", Name: "prod", Version: "v1.29.3-gke.100", Kinds: 1, Objects: 7},
		{Server: "https://new.example.com", Name: "new"},
	})
	want := `
# HELP argocd_cluster_api_resource_objects Objects in the controller's cache of a destination cluster (Argo CD's metric).
# TYPE argocd_cluster_api_resource_objects gauge
argocd_cluster_api_resource_objects{server="https://kubernetes.default.svc"} 120
argocd_cluster_api_resource_objects{server="https://new.example.com"} 0
argocd_cluster_api_resource_objects{server="https://prod.example.com:6443"} 7
# HELP argocd_cluster_api_resources Kinds of a destination cluster whose objects the controller's cache watches (Argo CD's metric).
# TYPE argocd_cluster_api_resources gauge
argocd_cluster_api_resources{server="https://kubernetes.default.svc"} 4
argocd_cluster_api_resources{server="https://new.example.com"} 0
argocd_cluster_api_resources{server="https://prod.example.com:6443"} 1
# HELP argocd_cluster_info Information about a destination cluster the controller holds clients of (Argo CD's metric).
# TYPE argocd_cluster_info gauge
argocd_cluster_info{k8s_version="",name="new",server="https://new.example.com"} 1
argocd_cluster_info{k8s_version="v1.29.3",name="prod",server="https://prod.example.com:6443"} 1
argocd_cluster_info{k8s_version="v1.33.2",name="in-cluster",server="https://kubernetes.default.svc"} 1
`
	if diff := cmp.Diff(strings.TrimLeft(want, "\n"), exposition(t, c)); diff != "" {
		t.Errorf("exposition (-want +got):\n%s", diff)
	}
}

func TestAppSyncedAndReconciled(t *testing.T) {
	m := NewMetrics()
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "guestbook"}, Spec: v1alpha1.ApplicationSpec{Project: "team"}}
	const server = "https://kubernetes.default.svc"
	sync := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
	dryRun := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{DryRun: true}}
	for _, st := range []*v1alpha1.OperationState{
		{Operation: sync, Phase: v1alpha1.OperationSucceeded},
		{Operation: sync, Phase: v1alpha1.OperationSucceeded},
		{Operation: dryRun, Phase: v1alpha1.OperationSucceeded},
		{Operation: sync, Phase: v1alpha1.OperationFailed},
		{Operation: sync, Phase: v1alpha1.OperationError},
		{Operation: sync, Phase: v1alpha1.OperationRunning}, // not ended: not counted
		nil,
	} {
		m.AppSynced(app, server, st)
	}
	want := `
# HELP argocd_app_sync_total Operations of Applications that ended, by phase (Succeeded, Failed, Error) and whether they were dry runs (Argo CD's metric).
# TYPE argocd_app_sync_total counter
argocd_app_sync_total{dest_server="https://kubernetes.default.svc",dry_run="false",name="guestbook",namespace="argocd",phase="Error",project="team"} 1
argocd_app_sync_total{dest_server="https://kubernetes.default.svc",dry_run="false",name="guestbook",namespace="argocd",phase="Failed",project="team"} 1
argocd_app_sync_total{dest_server="https://kubernetes.default.svc",dry_run="false",name="guestbook",namespace="argocd",phase="Succeeded",project="team"} 2
argocd_app_sync_total{dest_server="https://kubernetes.default.svc",dry_run="true",name="guestbook",namespace="argocd",phase="Succeeded",project="team"} 1
`
	if diff := cmp.Diff(strings.TrimLeft(want, "\n"), exposition(t, m.argo.appSyncs)); diff != "" {
		t.Errorf("exposition (-want +got):\n%s", diff)
	}

	m.AppReconciled("argocd", server, 300*time.Millisecond)
	m.AppReconciled("argocd", server, 20*time.Second)
	want = `
# HELP argocd_app_reconcile Time to compare one Application with its destination, in seconds (Argo CD's metric; syncs are not included).
# TYPE argocd_app_reconcile histogram
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="0.25"} 0
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="0.5"} 1
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="1"} 1
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="2"} 1
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="4"} 1
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="8"} 1
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="16"} 1
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="+Inf"} 2
argocd_app_reconcile_sum{dest_server="https://kubernetes.default.svc",namespace="argocd"} 20.3
argocd_app_reconcile_count{dest_server="https://kubernetes.default.svc",namespace="argocd"} 2
`
	if diff := cmp.Diff(strings.TrimLeft(want, "\n"), exposition(t, m.argo.appReconcile)); diff != "" {
		t.Errorf("exposition (-want +got):\n%s", diff)
	}
}
