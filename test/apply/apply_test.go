package apply_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
)

const shopManifests = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  color: blue
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - containerPort: 8080
`

// summary reduces results to comparable lines.
func summary(results []apply.ResourceResult) []string {
	var out []string
	for _, r := range results {
		s := string(r.Status) + " " + r.Ref.String()
		if r.HookPhase != "" {
			s += " hook:" + string(r.HookPhase)
		}
		out = append(out, s)
	}
	return out
}

func TestApplyWaveThenDiff(t *testing.T) {
	ns := env.Namespace(t)
	objs := decode(t, ns, shopManifests)
	waves := build(t, "shop", objs)
	if len(waves) != 1 {
		t.Fatalf("got %d waves, want 1", len(waves))
	}
	rolledOut := whenReady(t, "apps/v1", "Deployment", ns, "web", anyObject, available)

	res, err := applier.ApplyWave(t.Context(), waves[0], apply.WaveOptions{App: "shop"})
	if err != nil {
		t.Fatalf("ApplyWave: %v", err)
	}
	<-rolledOut
	want := []string{
		"Synced ConfigMap " + ns + "/web-config",
		"Synced Service " + ns + "/web",
		"Synced Deployment.apps " + ns + "/web",
	}
	if diff := cmp.Diff(want, summary(res.Results)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	live := get(t, "apps/v1", "Deployment", ns, "web")
	if id := live.GetAnnotations()[v1alpha1.AnnotationKeyTrackingID]; id != "shop:apps/Deployment:"+ns+"/web" {
		t.Errorf("tracking id = %q", id)
	}
	for _, e := range live.GetManagedFields() {
		if e.Operation == "Apply" && e.Manager != apply.DefaultFieldManager {
			t.Errorf("apply field manager = %q, want %q", e.Manager, apply.DefaultFieldManager)
		}
	}

	t.Run("synced right after apply", func(t *testing.T) {
		diffs, err := applier.Diff(t.Context(), objs, nil)
		if err != nil {
			t.Fatalf("Diff: %v", err)
		}
		for _, d := range diffs {
			if d.Status != apply.StatusSynced || d.Missing || d.Error != "" {
				t.Errorf("%s: status %s missing %v diff %q error %q, want Synced (server defaults are not drift)", d.Ref, d.Status, d.Missing, d.Diff, d.Error)
			}
		}
	})

	// Someone scales the Deployment by hand.
	scaled := live.DeepCopy()
	_ = unstructured.SetNestedField(scaled.Object, int64(5), "spec", "replicas")
	if err := env.Client.Patch(t.Context(), scaled, client.MergeFrom(live), client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatalf("scale: %v", err)
	}

	ignoreTests := []struct {
		name       string
		ignore     []apply.IgnoreDifference
		wantStatus apply.SyncStatus
		wantDiff   string
	}{
		{"edit shows as drift", nil, apply.StatusOutOfSync, "spec.replicas: 5 → 2"},
		{"json pointer", []apply.IgnoreDifference{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}, apply.StatusSynced, ""},
		{"jq path", []apply.IgnoreDifference{{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{".spec.replicas"}}}, apply.StatusSynced, ""},
		{"managed fields manager", []apply.IgnoreDifference{{Group: "apps", Kind: "Deployment", ManagedFieldsManagers: []string{"kubectl-edit"}}}, apply.StatusSynced, ""},
		{"rule for another object", []apply.IgnoreDifference{{Group: "apps", Kind: "Deployment", Name: "api", JSONPointers: []string{"/spec/replicas"}}}, apply.StatusOutOfSync, "spec.replicas: 5 → 2"},
	}
	for _, tt := range ignoreTests {
		t.Run(tt.name, func(t *testing.T) {
			diffs, err := applier.Diff(t.Context(), objs, tt.ignore)
			if err != nil {
				t.Fatalf("Diff: %v", err)
			}
			d := diffs[2]
			if d.Ref.Kind != "Deployment" {
				t.Fatalf("diff 2 is %s", d.Ref)
			}
			if d.Status != tt.wantStatus || d.Diff != tt.wantDiff {
				t.Errorf("Deployment: status %s diff %q, want %s %q", d.Status, d.Diff, tt.wantStatus, tt.wantDiff)
			}
			for _, other := range diffs[:2] {
				if other.Status != apply.StatusSynced {
					t.Errorf("%s: %s %q, want Synced", other.Ref, other.Status, other.Diff)
				}
			}
		})
	}

	t.Run("re-apply takes the field back", func(t *testing.T) {
		rolled := whenReady(t, "apps/v1", "Deployment", ns, "web", hasReplicas(2), available)
		if _, err := applier.ApplyWave(t.Context(), waves[0], apply.WaveOptions{App: "shop"}); err != nil {
			t.Fatalf("ApplyWave: %v", err)
		}
		<-rolled
		got, _, _ := unstructured.NestedInt64(get(t, "apps/v1", "Deployment", ns, "web").Object, "spec", "replicas")
		if got != 2 {
			t.Errorf("replicas = %d, want 2", got)
		}
	})

	t.Run("respect ignore differences keeps the live value", func(t *testing.T) {
		cur := get(t, "apps/v1", "Deployment", ns, "web")
		scaled := cur.DeepCopy()
		_ = unstructured.SetNestedField(scaled.Object, int64(7), "spec", "replicas")
		if err := env.Client.Patch(t.Context(), scaled, client.MergeFrom(cur), client.FieldOwner("hpa")); err != nil {
			t.Fatalf("scale: %v", err)
		}
		rolled := whenReady(t, "apps/v1", "Deployment", ns, "web", anyObject, available)
		w := build(t, "shop", decode(t, ns, shopManifests), "RespectIgnoreDifferences=true")
		ignore := []apply.IgnoreDifference{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}
		if _, err := applier.ApplyWave(t.Context(), w[0], apply.WaveOptions{App: "shop", Ignore: ignore}); err != nil {
			t.Fatalf("ApplyWave: %v", err)
		}
		<-rolled
		got, _, _ := unstructured.NestedInt64(get(t, "apps/v1", "Deployment", ns, "web").Object, "spec", "replicas")
		if got != 7 {
			t.Errorf("replicas = %d, want 7 (ignored field keeps its live value)", got)
		}
	})
}

func TestWaveWaitsForHealth(t *testing.T) {
	ns := env.Namespace(t)
	waves := build(t, "shop", decode(t, ns, shopManifests))
	// waiting is closed once the applier has judged the Deployment still
	// progressing: the wave is waiting for it.
	waiting := make(chan struct{})
	var once sync.Once
	waiter, err := apply.NewForConfig(rest.CopyConfig(env.Config), apply.Options{
		WaitTimeout:  30 * time.Second,
		PollInterval: 100 * time.Millisecond,
		Health: func(obj *unstructured.Unstructured) (string, string, error) {
			status, msg, err := testHealth(obj)
			if obj.GetKind() == "Deployment" && obj.GetName() == "web" && status == apply.HealthProgressing {
				once.Do(func() { close(waiting) })
			}
			return status, msg, err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var marked atomic.Bool
	returned := make(chan struct{})
	rolledOut := whenReady(t, "apps/v1", "Deployment", ns, "web", anyObject, func(u *unstructured.Unstructured) {
		select {
		case <-waiting:
		case <-returned:
			return
		}
		available(u)
		marked.Store(true)
	})
	res, err := waiter.ApplyWave(t.Context(), waves[0], apply.WaveOptions{App: "shop"})
	close(returned)
	if err != nil {
		t.Fatalf("ApplyWave: %v", err)
	}
	if !marked.Load() {
		t.Error("ApplyWave returned before the Deployment was available")
	}
	<-rolledOut
	for _, r := range res.Results {
		if r.Health != apply.HealthHealthy {
			t.Errorf("%s: health %q, want Healthy", r.Ref, r.Health)
		}
	}
}

func TestWaveTimesOut(t *testing.T) {
	ns := env.Namespace(t)
	quick, err := newApplier(time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	waves := build(t, "shop", decode(t, ns, shopManifests))
	res, err := quick.ApplyWave(t.Context(), waves[0], apply.WaveOptions{App: "shop"})
	werr := waveError(t, err)
	if len(werr.Failures) != 1 || !strings.Contains(werr.Failures[0], "Deployment.apps "+ns+"/web: timed out after") ||
		!strings.Contains(werr.Failures[0], "0 of 2 replicas available") {
		t.Errorf("failures = %q", werr.Failures)
	}
	if !res.Failed() {
		t.Error("WaveResult.Failed() = false")
	}
}

// TestLastWaveDoesNotWaitForHealth: as in Argo CD, a sync ends once the
// last wave is applied; only earlier waves wait for health. A Deployment
// that never becomes available does not hold the sync, whether it is the
// only wave or the last of several, where a single wave applied alone
// (ApplyWave) times out on it.
func TestLastWaveDoesNotWaitForHealth(t *testing.T) {
	quick, err := newApplier(time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, extra string }{
		{name: "one wave"},
		{name: "last of two waves", extra: "\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n  annotations:\n    argocd.argoproj.io/sync-wave: \"-1\"\ndata: {k: v}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ns := env.Namespace(t)
			waves := build(t, "shop", decode(t, ns, shopManifests+tt.extra))
			results, err := quick.Run(t.Context(), waves, apply.WaveOptions{App: "shop"})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			last := results[len(results)-1]
			for _, r := range last.Results {
				if r.Status != apply.ResultSynced {
					t.Errorf("%s: %s %q, want Synced", r.Ref, r.Status, r.Message)
				}
			}
			if get(t, "apps/v1", "Deployment", ns, "web") == nil {
				t.Error("the Deployment was not applied")
			}
		})
	}
	ns := env.Namespace(t)
	waves := build(t, "shop", decode(t, ns, shopManifests))
	if _, err := quick.ApplyWave(t.Context(), waves[0], apply.WaveOptions{App: "shop"}); err == nil {
		t.Error("ApplyWave of the unavailable Deployment alone: no error, want a timeout")
	}
}

func TestDegradedStopsLaterWaves(t *testing.T) {
	ns := env.Namespace(t)
	objs := decode(t, ns, shopManifests+`
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: after
  annotations:
    argocd.argoproj.io/sync-wave: "1"
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: sync-failed
  annotations:
    argocd.argoproj.io/hook: SyncFail
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: post-sync
  annotations:
    argocd.argoproj.io/hook: PostSync
data: {k: v}
`)
	waves := build(t, "shop", objs)
	broken := whenReady(t, "apps/v1", "Deployment", ns, "web", anyObject, stuck)
	results, err := applier.Run(t.Context(), waves, apply.WaveOptions{App: "shop"})
	<-broken
	werr := waveError(t, err)
	if werr.Phase != plan.PhaseSync || werr.Wave != 0 {
		t.Errorf("failed wave %s/%d, want Sync/0", werr.Phase, werr.Wave)
	}
	want := `Deployment.apps ` + ns + `/web: degraded: ReplicaSet "web-1" has timed out progressing.`
	if diff := cmp.Diff([]string{want}, werr.Failures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	var ran []string
	for _, r := range results {
		ran = append(ran, fmt.Sprintf("%s/%d", r.Phase, r.Wave))
	}
	if diff := cmp.Diff([]string{"Sync/0", "SyncFail/0"}, ran); diff != "" {
		t.Errorf("waves run (-want +got):\n%s", diff)
	}
	if get(t, "v1", "ConfigMap", ns, "after") != nil {
		t.Error("ConfigMap of wave 1 was applied after wave 0 failed")
	}
	if get(t, "v1", "ConfigMap", ns, "post-sync") != nil {
		t.Error("PostSync hook ran after a failed sync")
	}
	if get(t, "v1", "ConfigMap", ns, "sync-failed") == nil {
		t.Error("SyncFail hook did not run")
	}
}

func TestRejectedManifestFailsWaveBeforeApplying(t *testing.T) {
	ns := env.Namespace(t)
	objs := decode(t, ns, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: fine
data: {k: v}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: bad
spec:
  replicas: 1
  selector:
    matchLabels: {app: bad}
  template:
    metadata:
      labels: {app: other}
    spec:
      containers:
      - name: web
        image: nginx
`)
	waves := build(t, "shop", objs)
	res, err := applier.ApplyWave(t.Context(), waves[0], apply.WaveOptions{App: "shop"})
	werr := waveError(t, err)
	if len(werr.Failures) != 1 || !strings.HasPrefix(werr.Failures[0], "Deployment.apps "+ns+"/bad: dry run: ") ||
		!strings.Contains(werr.Failures[0], "does not match template") {
		t.Errorf("failures = %q", werr.Failures)
	}
	if diff := cmp.Diff([]string{"SyncFailed Deployment.apps " + ns + "/bad"}, summary(res.Results)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if get(t, "v1", "ConfigMap", ns, "fine") != nil {
		t.Error("ConfigMap applied although its wave failed validation")
	}
}

func TestValidateFalse(t *testing.T) {
	ns := env.Namespace(t)
	manifest := `
apiVersion: v1
kind: ConfigMap
metadata:
  name: extra
  annotations:
    argocd.argoproj.io/sync-options: %s
data: {k: v}
colour: blue
`
	t.Run("strict by default", func(t *testing.T) {
		waves := build(t, "shop", decode(t, ns, strings.Replace(manifest, "%s", "ServerSideApply=true", 1)))
		_, err := applier.ApplyWave(t.Context(), waves[0], apply.WaveOptions{App: "shop"})
		werr := waveError(t, err)
		if len(werr.Failures) != 1 || !strings.Contains(werr.Failures[0], "colour") {
			t.Errorf("failures = %q, want the unknown field named", werr.Failures)
		}
		if get(t, "v1", "ConfigMap", ns, "extra") != nil {
			t.Error("rejected ConfigMap exists")
		}
	})
	t.Run("Validate=false drops unknown fields", func(t *testing.T) {
		waves := build(t, "shop", decode(t, ns, strings.Replace(manifest, "%s", "Validate=false", 1)))
		res, err := applier.ApplyWave(t.Context(), waves[0], apply.WaveOptions{App: "shop"})
		if err != nil {
			t.Fatalf("ApplyWave: %v", err)
		}
		if msg := res.Results[0].Message; msg != "created; Validate=false: dropped unknown fields colour" {
			t.Errorf("message = %q", msg)
		}
		got := get(t, "v1", "ConfigMap", ns, "extra")
		if got == nil {
			t.Fatal("ConfigMap not applied")
		}
		if v, _, _ := unstructured.NestedString(got.Object, "data", "k"); v != "v" {
			t.Errorf("data.k = %q, want v", v)
		}
		objs := decode(t, ns, strings.Replace(manifest, "%s", "Validate=false", 1))
		build(t, "shop", objs)
		diffs, err := applier.Diff(t.Context(), objs, nil)
		if err != nil {
			t.Fatalf("Diff: %v", err)
		}
		if d := diffs[0]; d.Status != apply.StatusSynced || d.Error != "" {
			t.Errorf("Diff: status %s diff %q error %q, want Synced (unknown fields are not drift)", d.Status, d.Diff, d.Error)
		}
	})
}

func TestConflictWithObjectNotOwned(t *testing.T) {
	ns := env.Namespace(t)
	theirs := decode(t, ns, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: shared
data: {owner: them}
`)[0]
	if err := env.Client.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(theirs), client.FieldOwner("helm")); err != nil {
		t.Fatalf("create as another manager: %v", err)
	}
	ours := decode(t, ns, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: shared
data: {owner: us}
`)
	waves := build(t, "shop", ours)
	_, err := applier.ApplyWave(t.Context(), waves[0], apply.WaveOptions{App: "shop"})
	werr := waveError(t, err)
	if len(werr.Failures) != 1 || !strings.Contains(werr.Failures[0], `conflict with "helm"`) ||
		!strings.Contains(werr.Failures[0], "not tracked by this application") {
		t.Errorf("failures = %q", werr.Failures)
	}
	got, _, _ := unstructured.NestedString(get(t, "v1", "ConfigMap", ns, "shared").Object, "data", "owner")
	if got != "them" {
		t.Errorf("data.owner = %q, want them (no takeover)", got)
	}

	t.Run("FailOnSharedResource", func(t *testing.T) {
		other := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other-app-config}\ndata: {k: v}\n")
		if _, err := applier.ApplyWave(t.Context(), build(t, "billing", other)[0], apply.WaveOptions{App: "billing"}); err != nil {
			t.Fatalf("apply as billing: %v", err)
		}
		mine := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other-app-config}\ndata: {k: v}\n")
		_, err := applier.ApplyWave(t.Context(), build(t, "shop", mine, "FailOnSharedResource=true")[0], apply.WaveOptions{App: "shop"})
		werr := waveError(t, err)
		want := `ConfigMap ` + ns + `/other-app-config: already tracked by application "billing" (FailOnSharedResource=true)`
		if diff := cmp.Diff([]string{want}, werr.Failures); diff != "" {
			t.Errorf("failures (-want +got):\n%s", diff)
		}
		// Without the option too: the object became billing's after the
		// comparison left out the ones it tracked, and every Application
		// applies under one field manager, so applying would take it over.
		changed := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other-app-config}\ndata: {k: changed}\n")
		_, err = applier.ApplyWave(t.Context(), build(t, "shop", changed)[0], apply.WaveOptions{App: "shop"})
		werr = waveError(t, err)
		want = `ConfigMap ` + ns + `/other-app-config: part of application "billing" since the comparison; not taken over`
		if diff := cmp.Diff([]string{want}, werr.Failures); diff != "" {
			t.Errorf("failures (-want +got):\n%s", diff)
		}
		if got, _, _ := unstructured.NestedString(get(t, "v1", "ConfigMap", ns, "other-app-config").Object, "data", "k"); got != "v" {
			t.Errorf("data.k = %q, want billing's v", got)
		}
	})
}

func TestCustomResourceWithItsDefinition(t *testing.T) {
	ns := env.Namespace(t)
	group := strings.ReplaceAll(ns, "-", "") + ".example.com"
	objs := decode(t, ns, strings.ReplaceAll(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.GROUP
spec:
  group: GROUP
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
---
apiVersion: GROUP/v1
kind: Widget
metadata:
  name: w
spec:
  size: 3
`, "GROUP", group))
	diffs, err := applier.Diff(t.Context(), objs[1:], nil)
	if err != nil {
		t.Fatalf("Diff of an unknown kind: %v", err)
	}
	if d := diffs[0]; d.Status != apply.StatusOutOfSync || !d.Missing {
		t.Errorf("Widget: status %s missing %v, want OutOfSync and Missing", d.Status, d.Missing)
	}
	waves := build(t, "shop", objs)
	if len(waves) != 1 {
		t.Fatalf("%d waves, want 1", len(waves))
	}
	if _, err := applier.ApplyWave(t.Context(), waves[0], apply.WaveOptions{App: "shop"}); err != nil {
		t.Fatalf("ApplyWave: %v", err)
	}
	t.Cleanup(func() { cleanup(objs[0]) })
	if get(t, group+"/v1", "Widget", ns, "w") == nil {
		t.Error("Widget not created")
	}
}

func TestEnsureNamespace(t *testing.T) {
	name := env.Namespace(t) + "-created"
	for range 2 { // idempotent
		if err := applier.EnsureNamespace(t.Context(), "shop", name, map[string]string{"team": "shop"}, nil); err != nil {
			t.Fatalf("EnsureNamespace: %v", err)
		}
	}
	// A namespace another Application renders keeps its metadata: the
	// apply, under the one field manager, would remove its labels.
	platform := decode(t, "", "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+name+"-platform, labels: {pod-security.kubernetes.io/enforce: restricted}}\n")
	if _, err := applier.ApplyWave(t.Context(), build(t, "platform", platform)[0], apply.WaveOptions{App: "platform"}); err != nil {
		t.Fatalf("apply as platform: %v", err)
	}
	t.Cleanup(func() { cleanup(platform[0]) })
	err := applier.EnsureNamespace(t.Context(), "shop", name+"-platform", map[string]string{"team": "shop"}, nil)
	if want := `it is part of application "platform"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("managed metadata on platform's namespace: %v, want an error containing %q", err, want)
	}
	if got := get(t, "v1", "Namespace", "", name+"-platform").GetLabels(); got["pod-security.kubernetes.io/enforce"] != "restricted" || got["team"] != "" {
		t.Errorf("platform's namespace labels %v, want its own only", got)
	}
	t.Cleanup(func() {
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName(name)
		cleanup(ns)
	})
	got := get(t, "v1", "Namespace", "", name)
	if got == nil || got.GetLabels()["team"] != "shop" {
		t.Errorf("namespace %s: %v", name, got)
	}
}

func TestApplyOutOfSyncOnly(t *testing.T) {
	ns := env.Namespace(t)
	objs := configMaps(t, ns, "same", "changed")
	waves := build(t, "shop", objs, "ApplyOutOfSyncOnly=true")
	if _, err := applier.ApplyWave(t.Context(), waves[0], apply.WaveOptions{App: "shop"}); err != nil {
		t.Fatalf("first ApplyWave: %v", err)
	}
	_ = unstructured.SetNestedField(objs[1].Object, "v2", "data", "k") // "changed"
	diffs, err := applier.Diff(t.Context(), objs, nil)
	if err != nil {
		t.Fatalf("Diff: %v", err)
	}
	res, err := applier.ApplyWave(t.Context(), build(t, "shop", objs, "ApplyOutOfSyncOnly=true")[0], apply.WaveOptions{App: "shop", Diffs: diffs})
	if err != nil {
		t.Fatalf("second ApplyWave: %v", err)
	}
	got := map[string]string{}
	for _, r := range res.Results {
		got[r.Ref.Name] = r.Message
	}
	want := map[string]string{"changed": "configured", "same": "in sync, not applied (ApplyOutOfSyncOnly=true)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestNamespaceAndContentsInOneWave(t *testing.T) {
	name := env.Namespace(t) + "-new"
	objs := decode(t, name, `
apiVersion: v1
kind: Namespace
metadata:
  name: `+name+`
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: inside
data: {k: v}
`)
	t.Cleanup(func() { cleanup(objs[0].DeepCopy()) })
	res, err := applier.ApplyWave(t.Context(), build(t, "shop", objs)[0], apply.WaveOptions{App: "shop"})
	if err != nil {
		t.Fatalf("ApplyWave: %v", err)
	}
	want := []string{"Synced Namespace " + name, "Synced ConfigMap " + name + "/inside"}
	if diff := cmp.Diff(want, summary(res.Results)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}
