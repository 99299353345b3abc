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

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// brakeApp is an Application with automated sync and three deployments.
func brakeApp() *v1alpha1.Application {
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "billing", Namespace: "argocd"}}
	app.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/config.git", Path: "apps/billing", TargetRevision: "main"}
	app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}, SyncOptions: []string{"CreateNamespace=true"}}
	at := func(h int) metav1.Time { return metav1.NewTime(time.Date(2030, 1, 2, h, 0, 0, 0, time.UTC)) }
	src := func(rev string) v1alpha1.ApplicationSource {
		s := *app.Spec.Source
		s.TargetRevision = rev
		return s
	}
	app.Status.History = []v1alpha1.RevisionHistory{
		{ID: 1, Revision: "1111111111111111111111111111111111111111", DeployedAt: at(1), Source: src("main"), InitiatedBy: v1alpha1.OperationInitiator{Automated: true}},
		{ID: 2, Revision: "2222222222222222222222222222222222222222", DeployedAt: at(2), Source: src("v1.2.0"), InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}},
		{ID: 3, Revision: "3333333333333333333333333333333333333333", DeployedAt: at(3), Source: src("main")},
	}
	return app
}

func TestSetSyncPolicy(t *testing.T) {
	tests := []struct {
		name    string
		opts    appSetOptions
		changed []string
		want    *v1alpha1.SyncPolicyAutomated
		wantMsg string
		wantErr string
	}{
		{name: "brake", opts: appSetOptions{syncPolicy: "none"}, wantMsg: "automated sync turned off"},
		{name: "on again, keeping the flags", opts: appSetOptions{syncPolicy: "automated"}, want: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}, wantMsg: "automated sync turned on (prune true, selfHeal true)"},
		{name: "on without self-heal", opts: appSetOptions{syncPolicy: "automated", selfHeal: false}, changed: []string{"self-heal"}, want: &v1alpha1.SyncPolicyAutomated{Prune: true}, wantMsg: "automated sync turned on (prune true, selfHeal false)"},
		{name: "no policy", opts: appSetOptions{}, wantErr: "--sync-policy is required: none or automated"},
		{name: "bad policy", opts: appSetOptions{syncPolicy: "auto"}, wantErr: `invalid --sync-policy "auto": want none or automated`},
		{name: "flags without automated", opts: appSetOptions{syncPolicy: "none"}, changed: []string{"auto-prune"}, wantErr: "--self-heal and --auto-prune need --sync-policy automated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeAppClient(t, brakeApp())
			tc.opts.appTarget = appTarget{name: "billing", namespace: "argocd"}
			tc.opts.changed = func(f string) bool { return strings.Contains(strings.Join(tc.changed, ","), f) }
			msg, err := setSyncPolicy(t.Context(), c, tc.opts)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || exitCode(err) != exitUsage {
					t.Fatalf("error = %v (exit %d), want %q", err, exitCode(err), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got v1alpha1.Application
			if err := c.Get(t.Context(), types.NamespacedName{Namespace: "argocd", Name: "billing"}, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Spec.SyncPolicy.Automated); diff != "" || msg != tc.wantMsg {
				t.Errorf("automated (-want +got):\n%s\nmessage %q, want %q", diff, msg, tc.wantMsg)
			}
			if diff := cmp.Diff([]string{"CreateNamespace=true"}, got.Spec.SyncPolicy.SyncOptions); diff != "" {
				t.Errorf("sync options changed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteHistory(t *testing.T) {
	var out bytes.Buffer
	if err := writeHistory(&out, brakeApp().Status.History); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "app-history.golden", out.String())
	out.Reset()
	if err := writeHistory(&out, nil); err != nil || out.String() != "no deployments recorded\n" {
		t.Errorf("empty history: %q, %v", out.String(), err)
	}
}

func TestRequestRollback(t *testing.T) {
	manual := brakeApp()
	manual.Spec.SyncPolicy.Automated = nil
	disabled := brakeApp()
	disabled.Name = "disabled"
	disabled.Spec.SyncPolicy.Automated.Enabled = ptr.To(false)
	tests := []struct {
		name    string
		app     *v1alpha1.Application
		opts    appRollbackOptions
		want    *v1alpha1.SyncOperation
		wantErr string
	}{
		{
			name: "to the deployment before the last",
			app:  manual,
			want: &v1alpha1.SyncOperation{Revision: "2222222222222222222222222222222222222222", Source: &manual.Status.History[1].Source},
		},
		{
			name: "to a given deployment, pruning",
			app:  disabled,
			opts: appRollbackOptions{id: "1", prune: true},
			want: &v1alpha1.SyncOperation{Revision: "1111111111111111111111111111111111111111", Source: &manual.Status.History[0].Source, Prune: true},
		},
		{name: "automated sync on", app: brakeApp(), wantErr: "rollback cannot be initiated when auto-sync is enabled: turn it off first with tollgate app set billing --sync-policy none"},
		{name: "unknown deployment", app: manual, opts: appRollbackOptions{id: "9"}, wantErr: "no deployment 9 in the history (see tollgate app history)"},
		{name: "not a number", app: manual, opts: appRollbackOptions{id: "v1"}, wantErr: `invalid deployment ID "v1": want a number from tollgate app history`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeAppClient(t, tc.app.DeepCopy())
			tc.opts.appTarget = appTarget{name: tc.app.Name, namespace: "argocd"}
			_, err := requestRollback(t.Context(), c, tc.opts, "alice")
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || exitCode(err) != exitUsage {
					t.Fatalf("error = %v (exit %d), want %q", err, exitCode(err), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got v1alpha1.Application
			if err := c.Get(t.Context(), types.NamespacedName{Namespace: "argocd", Name: tc.app.Name}, &got); err != nil {
				t.Fatal(err)
			}
			want := &v1alpha1.Operation{Sync: tc.want, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}
			if diff := cmp.Diff(want, got.Operation); diff != "" {
				t.Errorf("operation (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteAppList(t *testing.T) {
	a := brakeApp()
	a.Status.Sync = v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: "3333333333333333333333333333333333333333"}
	a.Status.Health.Status = "Healthy"
	b := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd"}}
	b.Spec.Project = "team-web"
	b.Status.Sync = v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeOutOfSync, Revisions: []string{"4444444444444444444444444444444444444444", "v1.2.0"}}
	b.Status.Conditions = []v1alpha1.ApplicationCondition{{Type: v1alpha1.ApplicationConditionPolicyViolation}, {Type: v1alpha1.ApplicationConditionSyncError}}
	var out bytes.Buffer
	if err := writeAppList(&out, []v1alpha1.Application{*a, *b}, "argocd", true); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "app-list.golden", out.String())
}

func TestWaitForApps(t *testing.T) {
	synced := brakeApp()
	synced.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced
	synced.Status.Health.Status = "Progressing"
	degraded := brakeApp()
	degraded.Name, degraded.Labels = "api", map[string]string{"tier": "back"}
	degraded.Status.Sync.Status, degraded.Status.Health.Status = v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusDegraded
	c := fakeAppClient(t, synced, degraded)
	var out bytes.Buffer
	o := appWaitOptions{appTarget: appTarget{namespace: "argocd"}, names: []string{"billing"}, sync: true, timeout: secondsOrDuration(time.Second)}
	if err := waitForApps(t.Context(), c, o, 10*time.Millisecond, &out); err != nil || out.String() != "application billing: Synced and Progressing\n" {
		t.Errorf("--sync: %v, %q", err, out.String())
	}
	o.sync, o.health, o.timeout = false, true, secondsOrDuration(50*time.Millisecond)
	err := waitForApps(t.Context(), c, o, 10*time.Millisecond, &out)
	if err == nil || exitCode(err) != exitDenied || !strings.Contains(err.Error(), "still Synced and Progressing after 50ms") {
		t.Errorf("--health on a progressing application: %v (exit %d)", err, exitCode(err))
	}
	out.Reset()
	o.names, o.selector, o.degraded = nil, "tier=back", true
	if err := waitForApps(t.Context(), c, o, 10*time.Millisecond, &out); err != nil || out.String() != "application api: Synced and Degraded\n" {
		t.Errorf("-l with --health --degraded: %v, %q", err, out.String())
	}
	o.names, o.selector = []string{"nope"}, ""
	if err := waitForApps(t.Context(), c, o, 10*time.Millisecond, &out); err == nil || exitCode(err) != exitUsage {
		t.Errorf("missing application: %v (exit %d)", err, exitCode(err))
	}
	out.Reset()
	o.delete = true
	if err := waitForApps(t.Context(), c, o, 10*time.Millisecond, &out); err != nil || out.String() != "application nope: deleted\n" {
		t.Errorf("--delete of a missing application: %v, %q", err, out.String())
	}
	if w := (appWaitOptions{}).waitOptions(time.Second); !w.Sync || !w.Health || !w.Operation || w.Timeout <= 0 {
		t.Errorf("no flags: %+v, want sync, health and operation without bound (argocd's)", w)
	}
}

func TestWriteWindows(t *testing.T) {
	app := brakeApp()
	app.Spec.Destination = v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "billing"}
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	proj.Spec.SyncWindows = []v1alpha1.SyncWindow{
		{Kind: "deny", Schedule: "0 10 * * *", Duration: "1h", Applications: []string{"*"}, ManualSync: true, Description: "change freeze"},
		{Kind: "allow", Schedule: "0 22 * * *", Duration: "2h", Namespaces: []string{"billing"}, TimeZone: "Europe/Paris"},
		{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"web-*"}},
	}
	var out bytes.Buffer
	if err := writeWindows(&out, proj, app, time.Date(2030, 1, 7, 10, 30, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "app-windows.golden", out.String())
	proj.Spec.SyncWindows[0].Schedule = "often"
	if err := writeWindows(&out, proj, app, time.Now()); err == nil || exitCode(err) != exitUsage {
		t.Errorf("bad schedule: %v (exit %d), want a usage error", err, exitCode(err))
	}
}

// TestWriteProjWindows: argocd proj windows list's table.
func TestWriteProjWindows(t *testing.T) {
	proj := &v1alpha1.AppProject{}
	proj.Spec.SyncWindows = []v1alpha1.SyncWindow{
		{Kind: "allow", Schedule: "0 9 * * *", Duration: "8h", Applications: []string{"web-*"}, ManualSync: true, TimeZone: "Europe/Berlin"},
		{Kind: "deny", Schedule: "0 0 * * 6", Duration: "48h", Namespaces: []string{"prod", "billing"}, Clusters: []string{"*"}, SyncOverrun: true, AndOperator: true},
	}
	var out bytes.Buffer
	// Monday 10:00 in Berlin: the allow window is open, the weekend's deny is not.
	if err := writeProjWindows(&out, proj, time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	want := `ID  STATUS    KIND   SCHEDULE   DURATION  APPLICATIONS  NAMESPACES    CLUSTERS  MANUALSYNC  SYNCOVERRUN  TIMEZONE       USEANDOPERATOR  
0   Active    allow  0 9 * * *  8h        web-*         -             -         Enabled     Disabled     Europe/Berlin  Disabled        
1   Inactive  deny   0 0 * * 6  48h       -             prod,billing  *         Disabled    Enabled                     Enabled         
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
