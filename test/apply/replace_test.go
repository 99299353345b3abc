package apply_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/engine/apply"
)

// replaceHint is what a Replace=true object rejected as invalid is told.
const replaceHint = " (Replace=true updates the object in place, as kubectl replace does: a field the API server does not let change needs Force=true as well, which deletes and re-creates the object)"

// syncOnce plans and runs src (objects in ns) for the application shop.
func syncOnce(t *testing.T, ns, src string) ([]*unstructured.Unstructured, []apply.WaveResult, error) {
	t.Helper()
	objs := decode(t, ns, src)
	res, err := applier.Run(t.Context(), build(t, "shop", objs), apply.WaveOptions{App: "shop"})
	return objs, res, err
}

// messages lists `Status Ref: message` of every result.
func messages(res []apply.WaveResult) []string {
	var out []string
	for _, w := range res {
		for _, r := range w.Results {
			out = append(out, fmt.Sprintf("%s %s: %s", r.Status, r.Ref, r.Message))
		}
	}
	return out
}

// managers lists the `manager/operation` entries of obj's managedFields,
// sorted, but those of subresources (the status the tests write).
func managers(obj *unstructured.Unstructured) []string {
	var out []string
	for _, e := range obj.GetManagedFields() {
		if e.Subresource == "" {
			out = append(out, e.Manager+"/"+string(e.Operation))
		}
	}
	slices.Sort(out)
	return out
}

// assertSynced checks that Diff finds objs in sync.
func assertSynced(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	diffs, err := applier.Diff(t.Context(), objs, nil)
	if err != nil {
		t.Fatalf("Diff: %v", err)
	}
	for _, d := range diffs {
		if d.Status != apply.StatusSynced {
			t.Errorf("%s: %s %q %s, want Synced", d.Ref, d.Status, d.Diff, d.Error)
		}
	}
}

// settings is ConfigMap settings with the given annotations and data, both
// YAML flow mappings.
func settings(annotation, data string) string {
	return fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations: {%s}
data: %s
`, annotation, data)
}

// TestReplaceUpdatesInPlace: Replace=true replaces the live object with the
// manifest (kubectl replace: a PUT, not a patch): a key someone added and a
// key the manifest dropped are gone, the UID stays. The PUT leaves tollgate
// with one Apply entry in managedFields, so the object is in sync, and a
// later server-side apply without Replace=true still removes a key dropped
// from the manifest.
func TestReplaceUpdatesInPlace(t *testing.T) {
	ns := env.Namespace(t)
	if _, _, err := syncOnce(t, ns, settings("", `{a: "1", b: "1"}`)); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	live := get(t, "v1", "ConfigMap", ns, "settings")
	edited := live.DeepCopy()
	_ = unstructured.SetNestedField(edited.Object, "by hand", "data", "extra")
	if err := env.Client.Patch(t.Context(), edited, client.MergeFrom(live), client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatalf("edit: %v", err)
	}

	objs, res, err := syncOnce(t, ns, settings(`argocd.argoproj.io/sync-options: Replace=true`, `{a: "2", c: "1"}`))
	if err != nil {
		t.Fatalf("sync with Replace=true: %v", err)
	}
	if diff := cmp.Diff([]string{"Synced ConfigMap " + ns + "/settings: replaced"}, messages(res)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	replaced := get(t, "v1", "ConfigMap", ns, "settings")
	if replaced.GetUID() != live.GetUID() {
		t.Errorf("uid %s, want %s: Replace=true without Force=true does not re-create", replaced.GetUID(), live.GetUID())
	}
	data, _, _ := unstructured.NestedStringMap(replaced.Object, "data")
	if diff := cmp.Diff(map[string]string{"a": "2", "c": "1"}, data); diff != "" {
		t.Errorf("data after replace (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tollgate/Apply"}, managers(replaced)); diff != "" {
		t.Errorf("managedFields after replace (-want +got):\n%s", diff)
	}
	assertSynced(t, objs)

	if _, _, err := syncOnce(t, ns, settings("", `{a: "2"}`)); err != nil {
		t.Fatalf("sync without Replace=true: %v", err)
	}
	data, _, _ = unstructured.NestedStringMap(get(t, "v1", "ConfigMap", ns, "settings").Object, "data")
	if diff := cmp.Diff(map[string]string{"a": "2"}, data); diff != "" {
		t.Errorf("data after a server-side apply that dropped c (-want +got):\n%s", diff)
	}
}

// forcedJob is Job migrate with the given sync options, running image.
func forcedJob(options, image string) string {
	return fmt.Sprintf(`
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {argocd.argoproj.io/sync-options: %q}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: %s
`, options, image)
}

// TestReplaceForceRecreatesJob: a Job's pod template cannot change. With
// Replace=true alone the PUT is rejected before anything is written, with
// a hint; with Replace=true,Force=true the Job is deleted and created anew
// (kubectl replace --force), and is in sync afterwards.
func TestReplaceForceRecreatesJob(t *testing.T) {
	ns := env.Namespace(t)
	done := whenReady(t, "batch/v1", "Job", ns, "migrate", anyObject, completed)
	if _, _, err := syncOnce(t, ns, forcedJob("Replace=true,Force=true", "registry.example.com/migrate:1")); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	<-done
	first := get(t, "batch/v1", "Job", ns, "migrate")

	t.Run("Replace=true alone is rejected", func(t *testing.T) {
		_, _, err := syncOnce(t, ns, forcedJob("Replace=true", "registry.example.com/migrate:2"))
		werr := waveError(t, err)
		if len(werr.Failures) != 1 {
			t.Fatalf("failures = %q, want one", werr.Failures)
		}
		msg := werr.Failures[0]
		prefix := "Job.batch " + ns + "/migrate: dry run: "
		if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, "field is immutable") || !strings.HasSuffix(msg, replaceHint) {
			t.Errorf("failure = %q, want %q…field is immutable…%q", msg, prefix, replaceHint)
		}
		live := get(t, "batch/v1", "Job", ns, "migrate")
		if live.GetUID() != first.GetUID() || live.GetResourceVersion() != first.GetResourceVersion() {
			t.Error("the Job was written")
		}
	})

	t.Run("Replace=true,Force=true re-creates it", func(t *testing.T) {
		done := whenReady(t, "batch/v1", "Job", ns, "migrate", notUID(string(first.GetUID())), completed)
		objs, res, err := syncOnce(t, ns, forcedJob("Replace=true,Force=true", "registry.example.com/migrate:2"))
		if err != nil {
			t.Fatalf("sync: %v", err)
		}
		<-done
		if diff := cmp.Diff([]string{"Synced Job.batch " + ns + "/migrate: deleted and re-created"}, messages(res)); diff != "" {
			t.Errorf("results (-want +got):\n%s", diff)
		}
		live := get(t, "batch/v1", "Job", ns, "migrate")
		containers, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
		if live.GetUID() == first.GetUID() || len(containers) != 1 || containers[0].(map[string]any)["image"] != "registry.example.com/migrate:2" {
			t.Errorf("Job uid %s containers %v, want a new Job (not %s) with image migrate:2", live.GetUID(), containers, first.GetUID())
		}
		if diff := cmp.Diff([]string{"tollgate/Apply"}, managers(live)); diff != "" {
			t.Errorf("managedFields of the re-created Job (-want +got):\n%s", diff)
		}
		assertSynced(t, objs)
	})
}

// webDeployment is Deployment web with the given sync options, selecting
// app=<app>.
func webDeployment(options, app string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {argocd.argoproj.io/sync-options: %q}
spec:
  replicas: 1
  selector:
    matchLabels: {app: %[2]s}
  template:
    metadata:
      labels: {app: %[2]s}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`, options, app)
}

// TestForceAloneRecreatesWhenRejected: Force=true without Replace=true
// applies, and deletes and re-creates the object when the API server
// rejects the apply as invalid (a Deployment's selector cannot change), as
// kubectl apply --force; with ServerSideApply=true it never deletes, as in
// Argo CD.
func TestForceAloneRecreatesWhenRejected(t *testing.T) {
	ns := env.Namespace(t)
	done := whenReady(t, "apps/v1", "Deployment", ns, "web", anyObject, available)
	if _, _, err := syncOnce(t, ns, webDeployment("Force=true", "web")); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	<-done
	first := get(t, "apps/v1", "Deployment", ns, "web")

	t.Run("ServerSideApply=true never deletes", func(t *testing.T) {
		_, _, err := syncOnce(t, ns, webDeployment("Force=true,ServerSideApply=true", "web-2"))
		werr := waveError(t, err)
		if len(werr.Failures) != 1 || !strings.Contains(werr.Failures[0], "field is immutable") {
			t.Errorf("failures = %q, want the selector rejected as immutable", werr.Failures)
		}
		if live := get(t, "apps/v1", "Deployment", ns, "web"); live.GetUID() != first.GetUID() {
			t.Error("the Deployment was re-created")
		}
	})

	t.Run("rejected apply re-creates", func(t *testing.T) {
		done := whenReady(t, "apps/v1", "Deployment", ns, "web", notUID(string(first.GetUID())), available)
		objs, res, err := syncOnce(t, ns, webDeployment("Force=true", "web-2"))
		if err != nil {
			t.Fatalf("sync: %v", err)
		}
		<-done
		got := messages(res)
		if len(got) != 1 || !strings.HasPrefix(got[0], "Synced Deployment.apps "+ns+"/web: deleted and re-created; Force=true: the apply was rejected (") {
			t.Errorf("results = %q, want the Deployment deleted and re-created after the rejected apply", got)
		}
		live := get(t, "apps/v1", "Deployment", ns, "web")
		selector, _, _ := unstructured.NestedString(live.Object, "spec", "selector", "matchLabels", "app")
		if live.GetUID() == first.GetUID() || selector != "web-2" {
			t.Errorf("uid %s selector %q, want a new Deployment (not %s) selecting web-2", live.GetUID(), selector, first.GetUID())
		}
		assertSynced(t, objs)
	})
}

// TestRecreateRestoresWhenCreateRejected: when the API server rejects the
// new object after the old one was deleted, the old one is created again
// and the object fails, as kubectl apply --force does.
func TestRecreateRestoresWhenCreateRejected(t *testing.T) {
	ns := env.Namespace(t)
	const opts = `argocd.argoproj.io/sync-options: "Replace=true,Force=true"`
	if _, _, err := syncOnce(t, ns, settings(opts, `{a: "1"}`)); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	first := get(t, "v1", "ConfigMap", ns, "settings")

	_, _, err := syncOnce(t, ns, settings(opts, `{"not a key": "1"}`))
	werr := waveError(t, err)
	if len(werr.Failures) != 1 || !strings.HasPrefix(werr.Failures[0], "ConfigMap "+ns+"/settings: create after deleting: ") ||
		!strings.HasSuffix(werr.Failures[0], "; the deleted object was created again") {
		t.Errorf("failures = %q, want the create rejected and the old object created again", werr.Failures)
	}
	live := get(t, "v1", "ConfigMap", ns, "settings")
	if live == nil {
		t.Fatal("the ConfigMap is gone")
	}
	data, _, _ := unstructured.NestedStringMap(live.Object, "data")
	if live.GetUID() == first.GetUID() || !cmp.Equal(map[string]string{"a": "1"}, data) {
		t.Errorf("uid %s data %v, want the old ConfigMap created again (new uid) with a=1", live.GetUID(), data)
	}
}

// TestReplaceForceKeepsNamespace: a Namespace is replaced in place, never
// deleted, whatever Force=true says (deleting it would delete everything
// in it), as in Argo CD.
func TestReplaceForceKeepsNamespace(t *testing.T) {
	name := env.Namespace(t) + "-kept"
	ns := func(team string) string {
		return fmt.Sprintf(`
apiVersion: v1
kind: Namespace
metadata:
  name: %s
  labels: {team: %s}
  annotations: {argocd.argoproj.io/sync-options: "Replace=true,Force=true"}
`, name, team)
	}
	if _, _, err := syncOnce(t, "", ns("a")); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	first := get(t, "v1", "Namespace", "", name)
	t.Cleanup(func() { cleanup(first) })

	_, res, err := syncOnce(t, "", ns("b"))
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	want := []string{"Synced Namespace " + name + ": replaced; Force=true does not delete a CustomResourceDefinition or a Namespace"}
	if diff := cmp.Diff(want, messages(res)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	live := get(t, "v1", "Namespace", "", name)
	if live.GetUID() != first.GetUID() || live.GetLabels()["team"] != "b" {
		t.Errorf("uid %s labels %v, want the same Namespace (%s) labelled team=b", live.GetUID(), live.GetLabels(), first.GetUID())
	}
}
