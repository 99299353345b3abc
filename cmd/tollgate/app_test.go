package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

func fakeAppClient(t *testing.T, apps ...*v1alpha1.Application) client.Client {
	t.Helper()
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme)
	for _, a := range apps {
		b = b.WithObjects(a)
	}
	return b.Build()
}

func TestRequestSync(t *testing.T) {
	single := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd"}}
	single.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://example.com/r.git", TargetRevision: "main"}
	multi := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "multi", Namespace: "argocd"}}
	multi.Spec.Sources = []v1alpha1.ApplicationSource{{RepoURL: "https://example.com/a.git", TargetRevision: "main"}, {RepoURL: "https://example.com/v.git", TargetRevision: "v2", Ref: "values"}}
	busy := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "busy", Namespace: "argocd"}, Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}}
	tests := []struct {
		name     string
		app      string
		opts     appSyncOptions
		want     *v1alpha1.Operation
		wantErr  string
		wantCode int
	}{
		{
			name: "plain sync",
			app:  "web",
			want: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{SyncStrategy: &v1alpha1.SyncStrategy{Hook: &v1alpha1.SyncStrategyHook{}}}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}},
		},
		{
			name: "prune and revision",
			app:  "web",
			opts: appSyncOptions{prune: true, revision: "v1.2.0"},
			want: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Prune: true, Revision: "v1.2.0", SyncStrategy: &v1alpha1.SyncStrategy{Hook: &v1alpha1.SyncStrategyHook{}}}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}},
		},
		{
			name: "revision of a multi-source application goes to the first source",
			app:  "multi",
			opts: appSyncOptions{revision: "abc123"},
			want: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revisions: []string{"abc123", "v2"}, SyncStrategy: &v1alpha1.SyncStrategy{Hook: &v1alpha1.SyncStrategyHook{}}}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}},
		},
		{
			name: "argocd's flags",
			app:  "web",
			opts: appSyncOptions{dryRun: true, strategy: "apply", force: true, applyOutOfSyncOnly: true, serverSide: true,
				resources: []string{"apps:Deployment:shop/web", "!:ConfigMap:*"}, retryLimit: 2, retryBackoffDuration: 5 * time.Second, retryBackoffMaxTime: 3 * time.Minute, retryBackoffFactor: 2},
			want: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{
				DryRun: true, SyncStrategy: &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{Force: true}},
				Resources:   []v1alpha1.SyncOperationResource{{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, {Kind: "ConfigMap", Name: "*", Exclude: true}},
				SyncOptions: []string{"ApplyOutOfSyncOnly=true", "ServerSideApply=true"},
			}, Retry: v1alpha1.RetryStrategy{Limit: 2, Backoff: &v1alpha1.Backoff{Duration: "5s", MaxDuration: "3m0s", Factor: ptr.To[int64](2)}},
				InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}},
		},
		{name: "missing application", app: "nope", wantErr: "application nope not found in namespace argocd", wantCode: exitUsage},
		{name: "operation in progress", app: "busy", wantErr: "application busy already has an operation in progress", wantCode: exitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeAppClient(t, single.DeepCopy(), multi.DeepCopy(), busy.DeepCopy())
			key := types.NamespacedName{Namespace: "argocd", Name: tc.app}
			req, err := tc.opts.request()
			if err != nil {
				t.Fatal(err)
			}
			err = asUsage(appops.Sync(t.Context(), c, key, req, "alice"))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || exitCode(err) != tc.wantCode {
					t.Fatalf("error = %v (exit %d), want %q (exit %d)", err, exitCode(err), tc.wantErr, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got v1alpha1.Application
			if err := c.Get(t.Context(), key, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Operation); diff != "" {
				t.Errorf("operation (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWaitForSync(t *testing.T) {
	done := func(phase v1alpha1.OperationPhase, msg string) *v1alpha1.Application {
		a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd"}}
		a.Status.OperationState = &v1alpha1.OperationState{Phase: phase, Message: msg}
		return a
	}
	pruneSkipped := done(v1alpha1.OperationSucceeded, "successfully synced")
	pruneSkipped.Status.OperationState.SyncResult = &v1alpha1.SyncOperationResult{Resources: []v1alpha1.ResourceResult{{Kind: "ConfigMap", Name: "old", Status: v1alpha1.ResultCodePruneSkipped}}}
	running := done(v1alpha1.OperationRunning, "syncing")
	running.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
	tests := []struct {
		name     string
		app      *v1alpha1.Application
		wantOut  string
		wantErr  string
		wantCode int
		check    syncCheck
	}{
		{name: "succeeded", app: done(v1alpha1.OperationSucceeded, "successfully synced (3 resources)"), wantOut: "application web: Succeeded: successfully synced (3 resources)\n"},
		{name: "refused", app: done(v1alpha1.OperationFailed, "sync refused by policy"), wantOut: "application web: Failed: sync refused by policy\n", wantCode: exitDenied},
		{name: "still running", app: running, wantErr: "application web: sync did not finish within 1.5s", wantCode: exitDenied},
		{name: "a failed dry run is only shown", app: done(v1alpha1.OperationFailed, "one or more objects failed to apply"), check: syncCheck{dryRun: true},
			wantOut: "application web: Failed: one or more objects failed to apply\n"},
		{name: "pruning left undone", app: pruneSkipped, wantOut: "application web: Succeeded: successfully synced\n",
			wantErr: "application web: 1 resources require pruning", wantCode: exitDenied},
		{name: "pruning left undone by a partial sync", app: pruneSkipped, check: syncCheck{partial: true}, wantOut: "application web: Succeeded: successfully synced\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeAppClient(t, tc.app)
			var out bytes.Buffer
			err := waitForSync(t.Context(), c, types.NamespacedName{Namespace: "argocd", Name: "web"}, 1500*time.Millisecond, tc.check, &out)
			if out.String() != tc.wantOut {
				t.Errorf("output = %q, want %q", out.String(), tc.wantOut)
			}
			switch {
			case tc.wantCode == 0 && err != nil:
				t.Fatalf("error = %v, want none", err)
			case tc.wantCode != 0 && (err == nil || exitCode(err) != tc.wantCode || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error = %v (exit %d), want %q (exit %d)", err, exitCode(err), tc.wantErr, tc.wantCode)
			}
		})
	}
}

func TestControllerRepoServerAndAppSyncUsageErrors(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"controller", "--resync", "0s"}, "invalid --resync 0s: must be positive"},
		{[]string{"controller", "--status-processors", "0"}, "invalid --status-processors 0: must be positive"},
		{[]string{"controller", "--concurrency", "0"}, "invalid --status-processors 0: must be positive"},
		{[]string{"controller", "--operation-processors", "0"}, "invalid --operation-processors 0: must be positive"},
		{[]string{"controller", "--sharding", "static"}, `invalid --sharding "static": want none or dynamic`},
		{[]string{"controller", "--sharding", "dynamic", "--leader-elect"}, "--sharding dynamic and --leader-elect exclude each other"},
		{[]string{"controller", "--shard-lease-duration", "1s"}, "invalid --shard-lease-duration 1s: at least 3s"},
		{[]string{"controller", "--kubeconfig", "/nonexistent/kubeconfig"}, "load kubeconfig /nonexistent/kubeconfig"},
		{[]string{"controller", "--render-timeout", "0s"}, "invalid --render-timeout 0s: must be positive"},
		{[]string{"controller", "--render-memory", "lots"}, `invalid --render-memory "lots": want a positive quantity such as 1Gi`},
		{[]string{"controller", "--fetch-timeout", "-1s"}, "invalid --fetch-timeout -1s: must be positive"},
		{[]string{"controller", "--max-fetch-bytes", "0"}, `invalid --max-fetch-bytes "0": want a positive quantity such as 1Gi`},
		{[]string{"controller", "--reconcile-timeout", "0s"}, "invalid --reconcile-timeout 0s: must be positive"},
		{[]string{"controller", "--sync-timeout", "-1s"}, "invalid --sync-timeout -1s: must not be negative"},
		{[]string{"controller", "--parallelism", "-1"}, "invalid --parallelism -1: must not be negative"},
		{[]string{"repo-server"}, "--cert-dir is required: the repo-server serves only HTTPS"},
		{[]string{"repo-server", "--cert-dir", "/nonexistent"}, "--cert-dir /nonexistent"},
		{[]string{"repo-server", "--cert-dir", "/tmp", "--render-memory", "0"}, `invalid --render-memory "0"`},
		{[]string{"app", "sync"}, "name an Application, or give --selector or --project"},
		{[]string{"app", "sync", "web", "--timeout", "-1s"}, "must not be negative"},
		{[]string{"app", "sync", "web", "--strategy", "replace"}, "unknown sync strategy: 'replace'"},
		{[]string{"app", "sync", "web", "--resource", "Deployment:web"}, "resource should have GROUP:KIND:NAME, but instead got: Deployment:web"},
		{[]string{"app", "sync", "web", "--kubeconfig", "/nonexistent/kubeconfig"}, "load kubeconfig /nonexistent/kubeconfig"},
		{[]string{"app"}, "missing subcommand: see tollgate app --help"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCLI(t, nil, tc.args...)
			if r.code != exitUsage || !strings.Contains(r.err, tc.wantErr) {
				t.Errorf("exit %d, error %q; want exit %d and an error containing %q", r.code, r.err, exitUsage, tc.wantErr)
			}
		})
	}
}

func TestConfirmDeletion(t *testing.T) {
	c := fakeAppClient(t, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd", Annotations: map[string]string{"keep": "me"}}})
	at := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	key := types.NamespacedName{Namespace: "argocd", Name: "web"}
	if err := confirmDeletion(t.Context(), c, key, at); err != nil {
		t.Fatal(err)
	}
	var got v1alpha1.Application
	if err := c.Get(t.Context(), key, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"keep": "me", v1alpha1.AnnotationKeyDeletionApproved: "2030-01-02T03:04:05Z"}
	if diff := cmp.Diff(want, got.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if !got.IsDeletionConfirmed(at) || got.IsDeletionConfirmed(at.Add(time.Second)) {
		t.Error("IsDeletionConfirmed: want approved for a deletion started at the approval's second, not one second later")
	}
	err := confirmDeletion(t.Context(), c, types.NamespacedName{Namespace: "argocd", Name: "nope"}, at)
	if err == nil || exitCode(err) != exitUsage {
		t.Errorf("missing application: %v (exit %d), want a usage error", err, exitCode(err))
	}
}

func TestTerminateOperation(t *testing.T) {
	running := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd"},
		Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}}
	running.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning, Message: "waiting"}
	idle := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "idle", Namespace: "argocd"}}
	c := fakeAppClient(t, running, idle)
	key := types.NamespacedName{Namespace: "argocd", Name: "web"}
	if err := terminateOperation(t.Context(), c, key); err != nil {
		t.Fatal(err)
	}
	var got v1alpha1.Application
	if err := c.Get(t.Context(), key, &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.OperationState.Phase != v1alpha1.OperationTerminating || got.Status.OperationState.Message != "waiting" || got.Operation == nil {
		t.Errorf("after terminate-op: phase %s, message %q, operation %v", got.Status.OperationState.Phase, got.Status.OperationState.Message, got.Operation)
	}
	err := terminateOperation(t.Context(), c, types.NamespacedName{Namespace: "argocd", Name: "idle"})
	if err == nil || err.Error() != "application idle has no operation in progress" || exitCode(err) != exitUsage {
		t.Errorf("no operation: %v (exit %d)", err, exitCode(err))
	}
}

// TestAppTargetKey: NAME is in -N or the control-plane namespace;
// NAMESPACE/NAME (Argo CD's qualified name) says its own.
func TestAppTargetKey(t *testing.T) {
	for _, tc := range []struct {
		o    appTarget
		want types.NamespacedName
	}{
		{appTarget{name: "web", namespace: "argocd"}, types.NamespacedName{Namespace: "argocd", Name: "web"}},
		{appTarget{name: "web", namespace: "argocd", appNamespace: "team-a"}, types.NamespacedName{Namespace: "team-a", Name: "web"}},
		{appTarget{name: "team-b/web", namespace: "argocd", appNamespace: "team-a"}, types.NamespacedName{Namespace: "team-b", Name: "web"}},
	} {
		if got := tc.o.key(); got != tc.want {
			t.Errorf("%+v: key %v, want %v", tc.o, got, tc.want)
		}
	}
}

// TestListApps: argocd app list's filters, -N/-A and -o name, over a fake
// API server.
func TestListApps(t *testing.T) {
	app := func(ns, name, project, repo, path, server string, lbl map[string]string) *v1alpha1.Application {
		a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbl}}
		a.Spec.Project = project
		a.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: repo, Path: path}
		a.Spec.Destination.Server = server
		return a
	}
	const gitA, gitB, inCluster = "https://git.example.com/a.git", "https://git.example.com/b.git", "https://kubernetes.default.svc"
	c := fakeAppClient(t,
		app("argocd", "web", "team-a", gitA, "apps/web", inCluster, map[string]string{"app.kubernetes.io/instance": "root"}),
		app("argocd", "db", "team-b", gitB, "apps/db", "https://prod.example.com", nil),
		app("team-a", "api", "team-a", gitA, "apps/api", inCluster, map[string]string{"app.kubernetes.io/instance": "root"}),
	)
	for _, tc := range []struct {
		name string
		o    appListOptions
		want string
	}{
		{"control-plane namespace", appListOptions{}, "db\nweb\n"},
		{"-N", appListOptions{appNamespace: "team-a"}, "team-a/api\n"},
		{"-A", appListOptions{allNamespaces: true}, "db\nweb\nteam-a/api\n"},
		{"-l", appListOptions{allNamespaces: true, selector: "app.kubernetes.io/instance=root"}, "web\nteam-a/api\n"},
		{"-l notin", appListOptions{allNamespaces: true, selector: "app.kubernetes.io/instance notin (root)"}, "db\n"},
		{"-p", appListOptions{allNamespaces: true, projects: []string{"team-b"}}, "db\n"},
		{"-r", appListOptions{allNamespaces: true, repo: gitA}, "web\nteam-a/api\n"},
		{"-c", appListOptions{allNamespaces: true, cluster: "https://prod.example.com"}, "db\n"},
		{"-P", appListOptions{allNamespaces: true, path: "apps/api"}, "team-a/api\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.namespace, tc.o.output = "argocd", appListName
			var out bytes.Buffer
			if err := listApps(t.Context(), &out, c, tc.o); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got %q, want %q", out.String(), tc.want)
			}
		})
	}
	if err := (appListOptions{output: "table"}).check(); exitCode(err) != exitUsage {
		t.Errorf("unknown format: %v", err)
	}
	if err := (appListOptions{output: appListWide, selector: "a in ("}).check(); exitCode(err) != exitUsage {
		t.Errorf("bad selector: %v", err)
	}
}
