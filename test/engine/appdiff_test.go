package engine_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
)

// placeholder is a Secret without data, which no-plaintext-secret allows:
// its values are written into the cluster by hand.
func placeholder(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: %s
type: Opaque
`, name)
}

// annotated is a ConfigMap with the annotation key: value.
func annotated(name, key, value string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  annotations:
    %s: %s
data:
  key: v1
`, name, key, value)
}

// TestAppDiff compares an Application with application.Diff, as `tollgate app
// diff` does, and checks it against the engine's own comparison: in sync
// after a sync, with values written into a Secret by hand; after a push
// and a manual scale, the changed Deployment (without its ignored
// replicas), a new ConfigMap, and a ConfigMap and the Secret (masked) to
// prune; neither hooks nor skipped objects; and nothing changed.
func TestAppDiff(t *testing.T) {
	t.Parallel()
	files := baseFiles()
	files["manifests/secret.yaml"] = placeholder("db")
	files["manifests/hook.yaml"] = annotated("after-sync", "argocd.argoproj.io/hook", "PostSync")
	files["manifests/skipped.yaml"] = annotated("skipped", "argocd.argoproj.io/hook", "Skip")
	f := newFixture(t, files)
	f.application(nil, func(a *v1alpha1.Application) {
		a.Spec.IgnoreDifferences = []v1alpha1.ResourceIgnoreDifferences{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}
	})
	// What `tollgate app sync` writes.
	patch := []byte(`{"operation":{"sync":{},"initiatedBy":{"username":"alice"}}}`)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: argoNS}}
	if err := env.Client.Patch(t.Context(), app, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("request sync: %v", err)
	}
	f.waitSynced(f.head)
	// The Secret's values, written by hand as another field manager: a
	// sync keeps them, so they are no difference.
	db := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: f.ns}}
	if err := env.Client.Patch(t.Context(), db, client.RawPatch(types.MergePatchType, []byte(`{"stringData":{"password":"s3cr3t"}}`)), client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatalf("write secret values: %v", err)
	}

	svc := diffRepoService(t)
	opts := application.DefaultOptions()
	opts.Namespace = argoNS
	diff := func() *application.AppDiff {
		t.Helper()
		d, err := application.Diff(t.Context(), diffDependencies(t, svc), opts, f.app())
		if err != nil {
			t.Fatalf("diff: %v", err)
		}
		return d
	}

	d := diff()
	if d.Modified() || len(d.Revisions) != 1 || d.Revisions[0] != f.head {
		t.Fatalf("after a sync: modified %v %v at %v, want nothing modified at %s", d.Modified(), modified(d), d.Revisions, f.head)
	}
	if diff := cmp.Diff([]string{"/ConfigMap settings", "/Secret db", "/Service web", "apps/Deployment web"}, names(d.Objects)); diff != "" {
		t.Errorf("objects compared (-want +got):\n%s", diff)
	}
	noSecretValue(t, d)

	f.scale("web", 5) // ignored
	sha := f.push(map[string]string{
		"manifests/deployment.yaml": deployment("web", "registry.example.com/web:1.1.0", 2),
		"manifests/extra.yaml":      configMap("extra", "v1"),
	}, []string{"manifests/configmap.yaml", "manifests/secret.yaml"}, "new image and configmap; drop settings and db")
	engineView := f.waitApp("OutOfSync at "+sha, func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Revision == sha && a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
	var web appsv1.Deployment
	if err := f.get(&web, "web"); err != nil {
		t.Fatal(err)
	}

	d = diff()
	if len(d.Revisions) != 1 || d.Revisions[0] != sha {
		t.Errorf("revisions %v, want %s", d.Revisions, sha)
	}
	var engineModified []string
	for _, r := range engineView.Status.Resources {
		if r.Status != v1alpha1.SyncStatusCodeSynced {
			engineModified = append(engineModified, r.Group+"/"+r.Kind+" "+r.Name)
		}
	}
	want := []string{"/ConfigMap extra", "/ConfigMap settings", "/Secret db", "apps/Deployment web"}
	if diff := cmp.Diff(want, modified(d)); diff != "" {
		t.Errorf("modified objects (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(engineModified, modified(d)); diff != "" {
		t.Errorf("modified objects differ from the engine's status.resources (-engine +diff):\n%s", diff)
	}
	for _, o := range d.Objects {
		switch o.Ref.Kind + " " + o.Ref.Name {
		case "Deployment web":
			if l, tg := image(o.Live), image(o.Target); l != "registry.example.com/web:1.0.0" || tg != "registry.example.com/web:1.1.0" {
				t.Errorf("deployment image: live %q, target %q", l, tg)
			}
			for side, obj := range map[string]map[string]any{"live": o.Live, "target": o.Target} {
				if _, found, _ := unstructured.NestedFieldNoCopy(obj, "spec", "replicas"); found {
					t.Errorf("ignored /spec/replicas in the %s deployment", side)
				}
				if _, found, _ := unstructured.NestedFieldNoCopy(obj, "metadata", "managedFields"); found {
					t.Errorf("managedFields in the %s deployment", side)
				}
			}
		case "ConfigMap extra":
			if o.Live != nil || o.Target == nil || o.RequiresPruning {
				t.Errorf("new configmap: %+v", o)
			}
		case "ConfigMap settings":
			if o.Live == nil || o.Target != nil || !o.RequiresPruning {
				t.Errorf("configmap to prune: %+v", o)
			}
		case "Secret db":
			l, _, _ := unstructured.NestedString(o.Live, "data", "password")
			if l != "++++++++" || o.Target != nil || !o.RequiresPruning {
				t.Errorf("secret to prune: password %q, %+v", l, o)
			}
		}
	}
	noSecretValue(t, d)

	var after appsv1.Deployment
	if err := f.get(&after, "web"); err != nil {
		t.Fatal(err)
	}
	// The generation, not the resourceVersion: the test's stand-in for
	// the deployment controller writes the status of the scale meanwhile.
	if after.Generation != web.Generation || after.Spec.Template.Spec.Containers[0].Image != "registry.example.com/web:1.0.0" {
		t.Errorf("diff changed the deployment: generation %d → %d, image %s", web.Generation, after.Generation, after.Spec.Template.Spec.Containers[0].Image)
	}
}

// noSecretValue fails the test when d holds the value written into the
// Secret, in clear or base64-encoded.
func noSecretValue(t *testing.T, d *application.AppDiff) {
	t.Helper()
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"s3cr3t", base64.StdEncoding.EncodeToString([]byte("s3cr3t"))} {
		if strings.Contains(string(out), v) {
			t.Errorf("diff shows the secret value %q", v)
		}
	}
}

// names returns "group/Kind name" of each object.
func names(objs []application.ObjectDiff) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Ref.Group+"/"+o.Ref.Kind+" "+o.Ref.Name)
	}
	return out
}

// modified returns the names of the objects of d that differ.
func modified(d *application.AppDiff) []string {
	var out []application.ObjectDiff
	for _, o := range d.Objects {
		if o.Modified {
			out = append(out, o)
		}
	}
	return names(out)
}

// image returns the first container image of a Deployment.
func image(obj map[string]any) string {
	cs, _, _ := unstructured.NestedSlice(obj, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		return ""
	}
	s, _ := cs[0].(map[string]any)["image"].(string)
	return s
}

// discoveryCounter counts the discovery requests (GET /api and /apis)
// made through a REST config.
type discoveryCounter struct {
	rt http.RoundTripper
	n  atomic.Int32
}

func (c *discoveryCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && (req.URL.Path == "/api" || req.URL.Path == "/apis") {
		c.n.Add(1)
	}
	return c.rt.RoundTrip(req)
}

// TestDifferReadsDiscoveryOnce: a Differ (the web UI keeps one per
// person) reads the destination's discovery for its first diff only; the
// one-shot application.Diff (one CLI command) reads it every time.
func TestDifferReadsDiscoveryOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.application(nil, nil)
	counter := &discoveryCounter{}
	deps := diffDependencies(t, diffRepoService(t))
	deps.Config = rest.CopyConfig(env.Config)
	deps.Config.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.rt = rt; return counter })
	opts := application.DefaultOptions()
	opts.Namespace = argoNS

	d, err := application.NewDiffer(deps, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Diff(t.Context(), f.app()); err != nil {
		t.Fatal(err)
	}
	first := counter.n.Load()
	if first == 0 {
		t.Fatal("the first diff read no discovery; the check would prove nothing")
	}
	for i := range 2 {
		if _, err := d.Diff(t.Context(), f.app()); err != nil {
			t.Fatalf("diff %d: %v", i+2, err)
		}
	}
	if got := counter.n.Load(); got != first {
		t.Errorf("a further diff with the same Differ read discovery %d more times, want none", got-first)
	}
	counter.n.Store(0)
	for range 2 {
		if _, err := application.Diff(t.Context(), deps, opts, f.app()); err != nil {
			t.Fatal(err)
		}
	}
	if got := counter.n.Load(); got < 2 {
		t.Errorf("two one-shot diffs read discovery %d times, want at least once each", got)
	}
}
