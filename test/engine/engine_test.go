package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// automated is an automated sync policy.
func automated(prune, selfHeal bool) *v1alpha1.SyncPolicyAutomated {
	return &v1alpha1.SyncPolicyAutomated{Prune: prune, SelfHeal: selfHeal}
}

func TestSyncCreatesResourcesAndFollowsPushes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.application(automated(true, false), nil)
	app := f.waitSynced(f.head)

	var cm corev1.ConfigMap
	if err := f.get(&cm, "settings"); err != nil {
		t.Fatalf("configmap settings: %v", err)
	}
	wantID := fmt.Sprintf("%s:/ConfigMap:%s/settings", f.name, f.ns)
	if got := cm.Annotations[v1alpha1.AnnotationKeyTrackingID]; got != wantID {
		t.Errorf("tracking id = %q, want %q", got, wantID)
	}
	type res struct {
		Kind, Name string
		Status     v1alpha1.SyncStatusCode
		Health     v1alpha1.HealthStatusCode
	}
	var got []res
	for _, r := range app.Status.Resources {
		h := v1alpha1.HealthStatusCode("")
		if r.Health != nil {
			h = r.Health.Status
		}
		got = append(got, res{r.Kind, r.Name, r.Status, h})
	}
	want := []res{ // sorted by group, kind, namespace, name
		{"ConfigMap", "settings", v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy},
		{"Service", "web", v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy},
		{"Deployment", "web", v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status.resources (-want +got):\n%s", diff)
	}
	if len(app.Status.History) != 1 || app.Status.History[0].Revision != f.head || !app.Status.History[0].InitiatedBy.Automated {
		t.Errorf("history = %+v, want one automated entry at %s", app.Status.History, f.head)
	}
	if app.Status.ReconciledAt == nil || app.Status.SourceType != v1alpha1.ApplicationSourceTypeDirectory {
		t.Errorf("reconciledAt = %v, sourceType = %q; want set and Directory", app.Status.ReconciledAt, app.Status.SourceType)
	}

	sha := f.push(map[string]string{"manifests/deployment.yaml": deployment("web", "registry.example.com/web:1.1.0", 2)}, nil, "bump web")
	app = f.waitSynced(sha)
	if img := f.deploymentImage("web"); img != "registry.example.com/web:1.1.0" {
		t.Errorf("image after push = %q, want registry.example.com/web:1.1.0", img)
	}
	var ids []int64
	for _, h := range app.Status.History {
		ids = append(ids, h.ID)
	}
	if diff := cmp.Diff([]int64{0, 1}, ids); diff != "" {
		t.Errorf("history ids (-want +got):\n%s", diff)
	}
}

func TestIdleResyncMakesNoApplyCalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.application(automated(true, true), nil)
	f.waitSynced(f.head)
	// A few passes to settle: the comparison right after a sync, and the
	// one after the Deployment's status was written, are full ones.
	f.waitPasses(3)
	before := applies.count(f.ns)
	f.waitPasses(3)
	if n := applies.count(f.ns) - before; n != 0 {
		t.Errorf("%d server-side apply requests (dry runs included) during 3 idle resyncs, want 0", n)
	}
	// Drift is still seen: the next pass compares in full and heals.
	f.scale("web", 4)
	eventually(t, "replicas healed back to 2", func() (bool, string) {
		n := f.replicas("web")
		return n == 2, fmt.Sprintf("replicas = %d", n)
	})
	if applies.count(f.ns) == before {
		t.Errorf("no apply request after drift")
	}
}

func TestMultiSourceHelmWithRefValues(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		"chart/Chart.yaml":  "apiVersion: v2\nname: greeter\nversion: 0.1.0\n",
		"chart/values.yaml": "greeting: default\n",
		"chart/templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: greeting
data:
  greeting: {{ .Values.greeting | quote }}
  release: {{ .Release.Name | quote }}
`,
	})
	valuesURL := f.git.CreateRepo(t, "values", map[string]string{"envs/prod.yaml": "greeting: hello-prod\n"})
	f.repos = append(f.repos, valuesURL)
	f.application(automated(true, false), func(a *v1alpha1.Application) {
		a.Spec.Source = nil
		a.Spec.Sources = []v1alpha1.ApplicationSource{
			{RepoURL: f.repoURL, Path: "chart", TargetRevision: "main", Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$values/envs/prod.yaml"}}},
			{RepoURL: valuesURL, TargetRevision: "main", Ref: "values"},
		}
	})
	greeting := func() string {
		var cm corev1.ConfigMap
		if err := f.get(&cm, "greeting"); err != nil {
			return err.Error()
		}
		return cm.Data["greeting"] + "/" + cm.Data["release"]
	}
	app := f.waitApp("synced from both sources", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && len(a.Status.Sync.Revisions) == 2 &&
			a.Status.Sync.Revisions[0] == f.head && a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	})
	if got, want := greeting(), "hello-prod/"+f.name; got != want {
		t.Errorf("greeting = %q, want %q", got, want)
	}
	if diff := cmp.Diff([]v1alpha1.ApplicationSourceType{v1alpha1.ApplicationSourceTypeHelm, ""}, app.Status.SourceTypes); diff != "" {
		t.Errorf("sourceTypes (-want +got):\n%s", diff)
	}
	// A commit to the values repository alone changes what is rendered.
	f.git.Commit(t, "values", map[string]string{"envs/prod.yaml": "greeting: hello-again\n"}, "new greeting")
	f.refresh()
	eventually(t, "greeting from the new values", func() (bool, string) {
		g := greeting()
		return g == "hello-again/"+f.name, g
	})
}

func TestRegisteredClusterFromSecret(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	// An Argo CD cluster Secret for the test control plane itself, reached
	// with its own URL and the administrator's client certificate: the
	// engine builds a separate client for it, as for any other cluster.
	clusterName := "remote-" + f.name
	f.clusterSecret(map[string]string{"name": clusterName, "server": env.Config.Host})
	p := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: argoNS},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  f.repos,
			Destinations: []v1alpha1.ApplicationDestination{{Name: clusterName, Namespace: f.ns}},
		},
	}
	f.create(p)
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: argoNS},
		Spec: v1alpha1.ApplicationSpec{
			Project:     f.name,
			Source:      &v1alpha1.ApplicationSource{RepoURL: f.repoURL, Path: "manifests", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Name: clusterName, Namespace: f.ns},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: automated(true, false)},
		},
	}
	f.create(app)
	f.waitSynced(f.head)

	// An unknown cluster is an invalid spec, and nothing is applied.
	g := newFixture(t, baseFiles())
	g.application(automated(true, false), func(a *v1alpha1.Application) {
		a.Spec.Destination = v1alpha1.ApplicationDestination{Name: "nowhere", Namespace: g.ns}
	})
	g.waitApp("InvalidSpecError for an unknown cluster", func(a *v1alpha1.Application) bool {
		msg, ok := condition(a, v1alpha1.ApplicationConditionInvalidSpecError)
		return ok && strings.Contains(msg, `no cluster named "nowhere"`)
	})
	if gone, why := g.gone(&corev1.ConfigMap{}, "settings"); !gone {
		t.Errorf("applied to an unknown cluster: %s", why)
	}
}

func TestPolicyDenialAppliesNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		rule  string
		// fix and fixDel make the commit that follows the rules again.
		fix    map[string]string
		fixDel []string
		// unchanged reports whether the cluster still holds the last
		// synced state.
		unchanged func(f *fixture) (bool, string)
	}{
		{
			name:  "latest tag",
			files: map[string]string{"manifests/deployment.yaml": deployment("web", "registry.example.com/web:latest", 2)},
			rule:  "no-latest-tag",
			fix:   baseFiles(),
			unchanged: func(f *fixture) (bool, string) {
				img := f.deploymentImage("web")
				return img == "registry.example.com/web:1.0.0", "image is " + img
			},
		},
		{
			name: "plaintext secret",
			files: map[string]string{"manifests/secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: hunter2
`},
			rule:   "no-plaintext-secret",
			fixDel: []string{"manifests/secret.yaml"},
			unchanged: func(f *fixture) (bool, string) {
				return f.gone(&corev1.Secret{}, "db")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, baseFiles())
			f.application(automated(true, true), nil)
			f.waitSynced(f.head)

			sha := f.push(tc.files, nil, "break the rules")
			app := f.waitApp("refused by "+tc.rule, func(a *v1alpha1.Application) bool {
				msg, ok := condition(a, v1alpha1.ApplicationConditionPolicyViolation)
				st := a.Status.OperationState
				return ok && strings.Contains(msg, "["+tc.rule+"]") && st != nil && st.Phase == v1alpha1.OperationFailed &&
					st.Operation.Sync != nil && st.Operation.Sync.Revision == sha
			})
			if msg, ok := condition(app, v1alpha1.ApplicationConditionSyncError); !ok || !strings.Contains(msg, tc.rule) {
				t.Errorf("SyncError condition = %q (present %v), want it to name %s", msg, ok, tc.rule)
			}
			consistently(t, "cluster unchanged", 3*resync, func() (bool, string) { return tc.unchanged(f) })
			eventually(t, "a PolicyViolation event", func() (bool, string) {
				var events eventsv1.EventList
				if err := env.Client.List(t.Context(), &events, client.InNamespace(argoNS)); err != nil {
					return false, err.Error()
				}
				for _, e := range events.Items {
					if e.Regarding.Name == f.name && e.Reason == v1alpha1.ApplicationConditionPolicyViolation && strings.Contains(e.Note, tc.rule) {
						return true, ""
					}
				}
				return false, fmt.Sprintf("%d events, none for %s", len(events.Items), f.name)
			})

			// A commit that follows the rules again clears the refusal; the
			// cluster already matches it, so nothing needs syncing.
			fix := f.push(tc.fix, tc.fixDel, "fix")
			f.waitApp("Synced at the fix without refusal", func(a *v1alpha1.Application) bool {
				_, denied := condition(a, v1alpha1.ApplicationConditionPolicyViolation)
				_, syncErr := condition(a, v1alpha1.ApplicationConditionSyncError)
				return !denied && !syncErr && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Sync.Revision == fix
			})
		})
	}
}

func TestPrune(t *testing.T) {
	t.Parallel()
	for _, prune := range []bool{true, false} {
		t.Run(map[bool]string{true: "prune", false: "no-prune"}[prune], func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, baseFiles())
			f.application(automated(prune, false), nil)
			f.waitSynced(f.head)
			sha := f.push(nil, []string{"manifests/configmap.yaml"}, "drop settings")
			if prune {
				eventually(t, "configmap pruned", func() (bool, string) { return f.gone(&corev1.ConfigMap{}, "settings") })
				app := f.waitSynced(sha)
				for _, r := range app.Status.Resources {
					if r.Name == "settings" {
						t.Errorf("pruned configmap still in status.resources: %+v", r)
					}
				}
				return
			}
			f.waitApp("OutOfSync with settings awaiting pruning", func(a *v1alpha1.Application) bool {
				return a.Status.Sync.Revision == sha && a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync &&
					slices.ContainsFunc(a.Status.Resources, func(r v1alpha1.ResourceStatus) bool { return r.Name == "settings" && r.RequiresPruning })
			})
			consistently(t, "configmap kept", 3*resync, func() (bool, string) {
				gone, _ := f.gone(&corev1.ConfigMap{}, "settings")
				return !gone, "configmap settings was deleted"
			})
		})
	}
}

func TestSelfHeal(t *testing.T) {
	t.Parallel()
	for _, selfHeal := range []bool{true, false} {
		t.Run(map[bool]string{true: "self-heal", false: "no-self-heal"}[selfHeal], func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, baseFiles())
			f.application(automated(true, selfHeal), nil)
			f.waitSynced(f.head)
			f.scale("web", 5)
			if selfHeal {
				eventually(t, "replicas healed back to 2", func() (bool, string) {
					n := f.replicas("web")
					return n == 2, fmt.Sprintf("replicas = %d", n)
				})
				// The heal is applied before its operation is recorded:
				// wait for the record, not only for the replicas.
				app := f.waitApp("synced by a self-heal operation", func(a *v1alpha1.Application) bool {
					st := a.Status.OperationState
					return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && st != nil && st.Phase == v1alpha1.OperationSucceeded &&
						st.Operation.Sync != nil && st.Operation.Sync.SelfHealAttemptsCount > 0
				})
				if op := app.Status.OperationState.Operation; op.Sync.Revision != f.head || len(app.Status.History) != 1 {
					t.Errorf("self-heal recorded as %+v with history %+v; want autoHealAttemptsCount and no history entry, as Argo CD", op.Sync, app.Status.History)
				}
				return
			}
			f.waitApp("OutOfSync at the synced revision", func(a *v1alpha1.Application) bool {
				return a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && a.Status.Sync.Revision == f.head
			})
			consistently(t, "drift left alone", 3*resync, func() (bool, string) {
				n := f.replicas("web")
				return n == 5, fmt.Sprintf("replicas = %d", n)
			})
		})
	}
}

func TestIgnoreDifferencesKeepsSynced(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.application(automated(true, true), func(a *v1alpha1.Application) {
		a.Spec.IgnoreDifferences = []v1alpha1.ResourceIgnoreDifferences{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}
	})
	f.waitSynced(f.head)
	f.scale("web", 5)
	consistently(t, "scaled replicas kept and the application Synced", 4*resync, func() (bool, string) {
		a := f.app()
		n := f.replicas("web")
		return n == 5 && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced, fmt.Sprintf("replicas = %d, %s", n, describeApp(a))
	})
}

func TestEmptyRenderWithoutAllowEmptyDeletesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.application(automated(true, false), nil)
	f.waitSynced(f.head)
	sha := f.push(map[string]string{"manifests/README.md": "nothing to deploy\n"},
		[]string{"manifests/configmap.yaml", "manifests/deployment.yaml", "manifests/service.yaml"}, "empty")
	f.waitApp("compared at the empty revision", func(a *v1alpha1.Application) bool {
		n := 0
		for _, r := range a.Status.Resources {
			if r.RequiresPruning {
				n++
			}
		}
		return a.Status.Sync.Revision == sha && n == 3
	})
	consistently(t, "nothing deleted", 3*resync, func() (bool, string) {
		for _, o := range []struct {
			obj  client.Object
			name string
		}{{&corev1.ConfigMap{}, "settings"}, {&appsv1.Deployment{}, "web"}, {&corev1.Service{}, "web"}} {
			if gone, _ := f.gone(o.obj, o.name); gone {
				return false, fmt.Sprintf("%T %s was deleted", o.obj, o.name)
			}
		}
		return true, ""
	})
}

// TestGitServerDownThenForcePush: the Git server goes down during a fetch
// (a refresh): the last synced state stays and ComparisonError says why.
// When it returns, history has been rewritten by a force-push that drops
// the synced commit: the engine follows the branch to the new commit and
// syncs it.
func TestGitServerDownThenForcePush(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.application(automated(true, true), nil)
	f.waitSynced(f.head)
	dropped := f.push(map[string]string{"manifests/configmap.yaml": configMap("settings", "v2")}, nil, "settings v2")
	f.waitSynced(dropped)

	f.git.Stop()
	f.refresh()
	app := f.waitApp("ComparisonError while Git is down", func(a *v1alpha1.Application) bool {
		msg, ok := condition(a, v1alpha1.ApplicationConditionComparisonError)
		return ok && strings.Contains(msg, "unreachable")
	})
	if app.Status.Sync.Revision != dropped || len(app.Status.Resources) != 3 {
		t.Errorf("last synced state not kept: %s, %d resources", describeApp(app), len(app.Status.Resources))
	}
	consistently(t, "resources kept", 2*resync, func() (bool, string) {
		var cm corev1.ConfigMap
		if err := f.get(&cm, "settings"); err != nil {
			return false, err.Error()
		}
		return cm.Data["key"] == "v2", "settings: " + cm.Data["key"]
	})

	// Back, with main forced to a commit on f.head that does not contain
	// the synced one.
	f.git.Start(t)
	f.git.Branch(t, f.repo, "rewrite", f.head)
	rewritten := f.git.CommitOn(t, f.repo, "rewrite", map[string]string{"manifests/configmap.yaml": configMap("settings", "v3")}, nil, "settings v3, rewritten")
	f.git.Branch(t, f.repo, gitserver.DefaultBranch, rewritten)
	f.refresh()
	f.waitSynced(rewritten)
	app = f.app()
	if _, ok := condition(app, v1alpha1.ApplicationConditionComparisonError); ok {
		t.Errorf("ComparisonError not cleared: %s", describeApp(app))
	}
	var cm corev1.ConfigMap
	if err := f.get(&cm, "settings"); err != nil || cm.Data["key"] != "v3" {
		t.Errorf("settings after the force-push: %q, %v; want v3", cm.Data["key"], err)
	}
}

// TestDeleteApplication: deleting an Application deletes what it deployed
// when it carries a cascade finalizer, and leaves it otherwise; `tollgate
// app delete` (appops.Delete) adds the finalizer of its propagation
// policy first, or with --cascade=false removes it, as Argo CD's API
// server does.
func TestDeleteApplication(t *testing.T) {
	t.Parallel()
	no := false
	tests := []struct {
		name       string
		finalizers []string
		cascade    bool
		// cli deletes as `tollgate app delete` does (appops.Delete) with
		// cliCascade and cliPolicy, rather than with a plain delete.
		cli        bool
		cliCascade *bool
		cliPolicy  string
	}{
		{name: "resources finalizer", finalizers: []string{v1alpha1.ResourcesFinalizerName}, cascade: true},
		{name: "background finalizer", finalizers: []string{v1alpha1.ResourcesFinalizerName + "/background"}, cascade: true},
		{name: "no finalizer", cascade: false},
		{name: "tollgate app delete: cascades by default", cascade: true, cli: true},
		{name: "tollgate app delete -p background", cascade: true, cli: true, cliPolicy: "background"},
		{name: "tollgate app delete --cascade=false", finalizers: []string{v1alpha1.ResourcesFinalizerName}, cascade: false, cli: true, cliCascade: &no},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, baseFiles())
			f.application(automated(true, false), func(a *v1alpha1.Application) { a.Finalizers = tc.finalizers })
			f.waitSynced(f.head)
			del := func() error { return env.Client.Delete(t.Context(), f.app()) }
			if tc.cli {
				del = func() error {
					return appops.Delete(t.Context(), env.Client, client.ObjectKey{Namespace: argoNS, Name: f.name}, tc.cliCascade, tc.cliPolicy)
				}
			}
			if err := del(); err != nil {
				t.Fatalf("delete application: %v", err)
			}
			objects := []struct {
				obj  client.Object
				name string
			}{{&corev1.ConfigMap{}, "settings"}, {&appsv1.Deployment{}, "web"}, {&corev1.Service{}, "web"}}
			eventually(t, "application gone", func() (bool, string) {
				var app v1alpha1.Application
				err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: f.name}, &app)
				if err == nil {
					return false, describeApp(&app)
				}
				return client.IgnoreNotFound(err) == nil, err.Error()
			})
			if tc.cascade {
				for _, o := range objects {
					if gone, why := f.gone(o.obj, o.name); !gone {
						t.Errorf("after the finalizer: %s", why)
					}
				}
				return
			}
			consistently(t, "resources left alone", resync, func() (bool, string) {
				for _, o := range objects {
					if gone, _ := f.gone(o.obj, o.name); gone {
						return false, fmt.Sprintf("%T %s deleted", o.obj, o.name)
					}
				}
				return true, ""
			})
		})
	}
}

// theirConfigMap creates ConfigMap settings tracked by another Application.
func theirConfigMap(f *fixture) {
	f.t.Helper()
	f.create(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: f.ns, Annotations: map[string]string{
			v1alpha1.AnnotationKeyTrackingID: fmt.Sprintf("other-app:/ConfigMap:%s/settings", f.ns),
		}},
		Data: map[string]string{"key": "theirs"},
	})
}

// TestFailOnSharedResource: with FailOnSharedResource=true, an object
// another Application tracks fails the whole sync, naming the object and
// its Application, and nothing is applied, as in Argo CD.
func TestFailOnSharedResource(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	theirConfigMap(f)
	f.application(automated(true, false), func(a *v1alpha1.Application) {
		a.Spec.SyncPolicy.SyncOptions = []string{"FailOnSharedResource=true"}
	})
	app := f.waitApp("the sync failed naming the shared object", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return st != nil && st.Phase == v1alpha1.OperationFailed && strings.Contains(st.Message, "FailOnSharedResource=true") &&
			strings.Contains(st.Message, "settings") && strings.Contains(st.Message, "other-app")
	})
	if img := f.deploymentImage("web"); img != "" {
		t.Errorf("deployment web applied despite the failed sync: %s", describeApp(app))
	}
}

func TestSharedResourceIsNotTakenOver(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	theirConfigMap(f)
	f.application(automated(true, true), nil)
	app := f.waitApp("SharedResourceWarning and the rest synced", func(a *v1alpha1.Application) bool {
		msg, ok := condition(a, v1alpha1.ApplicationConditionSharedResourceWarning)
		st := a.Status.OperationState
		return ok && strings.Contains(msg, "settings") && strings.Contains(msg, "other-app") &&
			st != nil && st.Phase == v1alpha1.OperationSucceeded
	})
	if img := f.deploymentImage("web"); img == "" {
		t.Errorf("deployment web not applied: %s", describeApp(app))
	}
	consistently(t, "configmap still theirs", 2*resync, func() (bool, string) {
		var cm corev1.ConfigMap
		if err := f.get(&cm, "settings"); err != nil {
			return false, err.Error()
		}
		return cm.Data["key"] == "theirs" && strings.HasPrefix(cm.Annotations[v1alpha1.AnnotationKeyTrackingID], "other-app:"),
			fmt.Sprintf("data %v, annotations %v", cm.Data, cm.Annotations)
	})
}

func TestRejectedManifestStopsLaterWaves(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		"manifests/first.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: first
  annotations:
    argocd.argoproj.io/sync-wave: "0"
data:
  key: one
`,
		"manifests/bad.yaml": `apiVersion: v1
kind: Service
metadata:
  name: bad
  annotations:
    argocd.argoproj.io/sync-wave: "1"
spec:
  ports:
  - port: 99999
`,
		"manifests/last.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: last
  annotations:
    argocd.argoproj.io/sync-wave: "2"
data:
  key: three
`,
	})
	f.application(automated(true, false), nil)
	app := f.waitApp("SyncError naming the rejected Service", func(a *v1alpha1.Application) bool {
		msg, ok := condition(a, v1alpha1.ApplicationConditionSyncError)
		st := a.Status.OperationState
		return ok && strings.Contains(msg, "bad") && st != nil && st.Phase == v1alpha1.OperationFailed
	})
	if !strings.Contains(app.Status.OperationState.Message, "99999") {
		t.Errorf("operation message does not carry the API server's reason: %q", app.Status.OperationState.Message)
	}
	if err := f.get(&corev1.ConfigMap{}, "first"); err != nil {
		t.Errorf("wave 0 was not applied: %v", err)
	}
	consistently(t, "wave 2 not applied", 2*resync, func() (bool, string) { return f.gone(&corev1.ConfigMap{}, "last") })
}

func TestRevisionNotFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.application(automated(true, false), func(a *v1alpha1.Application) { a.Spec.Source.TargetRevision = "no-such-branch" })
	f.waitApp("ComparisonError: revision not found", func(a *v1alpha1.Application) bool {
		msg, ok := condition(a, v1alpha1.ApplicationConditionComparisonError)
		return ok && strings.Contains(msg, "revision not found") && strings.Contains(msg, "no-such-branch")
	})
	if gone, why := f.gone(&corev1.ConfigMap{}, "settings"); !gone {
		t.Errorf("something was applied: %s", why)
	}
}

func TestRequestedSyncOperation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.application(nil, nil)
	f.waitApp("OutOfSync without a sync", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && a.Status.Sync.Revision == f.head && a.Status.OperationState == nil
	})
	if gone, why := f.gone(&corev1.ConfigMap{}, "settings"); !gone {
		t.Fatalf("applied without a sync: %s", why)
	}
	// What `tollgate app sync` writes.
	patch := []byte(`{"operation":{"sync":{"prune":true},"initiatedBy":{"username":"alice"}}}`)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: argoNS}}
	if err := env.Client.Patch(t.Context(), app, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("request sync: %v", err)
	}
	app = f.waitSynced(f.head)
	if app.Operation != nil {
		t.Errorf("operation not cleared: %+v", app.Operation)
	}
	if n := len(app.Status.History); n != 1 || app.Status.History[0].InitiatedBy.Username != "alice" {
		t.Errorf("history = %+v, want one entry initiated by alice", app.Status.History)
	}
}

func TestProjectChangeReconcilesItsApplications(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.application(automated(true, false), nil)
	f.waitSynced(f.head)
	// Tighten the project: the destination namespace is no longer allowed.
	var p v1alpha1.AppProject
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: f.name}, &p); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"spec":{"destinations":[{"server":"` + inCluster + `","namespace":"elsewhere"}]}}`)
	if err := env.Client.Patch(t.Context(), &p, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("patch project: %v", err)
	}
	f.waitApp("refused by project-destination-denied", func(a *v1alpha1.Application) bool {
		msg, ok := condition(a, v1alpha1.ApplicationConditionPolicyViolation)
		return ok && strings.Contains(msg, "[project-destination-denied]")
	})
	patch = []byte(`{"spec":{"destinations":[{"server":"` + inCluster + `","namespace":"` + f.ns + `"}]}}`)
	if err := env.Client.Patch(t.Context(), &p, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("patch project: %v", err)
	}
	f.waitApp("allowed again", func(a *v1alpha1.Application) bool {
		_, denied := condition(a, v1alpha1.ApplicationConditionPolicyViolation)
		_, syncErr := condition(a, v1alpha1.ApplicationConditionSyncError)
		return !denied && !syncErr && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
}

// waitPasses waits until the Application has been reconciled n more times
// (status.reconciledAt moved n times).
func (f *fixture) waitPasses(n int) {
	f.t.Helper()
	last := f.app().Status.ReconciledAt
	for i := 0; i < n; i++ {
		f.waitApp(fmt.Sprintf("reconciled again (%d/%d)", i+1, n), func(a *v1alpha1.Application) bool {
			at := a.Status.ReconciledAt
			if at != nil && (last == nil || at.After(last.Time)) {
				last = at
				return true
			}
			return false
		})
	}
}

// scale sets the replicas of Deployment name by hand, as `kubectl scale`
// would.
func (f *fixture) scale(name string, replicas int) {
	f.t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}}
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	if err := env.Client.Patch(f.t.Context(), d, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-scale")); err != nil {
		f.t.Fatalf("scale %s: %v", name, err)
	}
}

// replicas returns spec.replicas of Deployment name, -1 when unreadable.
func (f *fixture) replicas(name string) int {
	var d appsv1.Deployment
	if err := f.get(&d, name); err != nil || d.Spec.Replicas == nil {
		return -1
	}
	return int(*d.Spec.Replicas)
}
