package engine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
)

// TestDifferDesired: the desired objects `tollgate app manifests` prints
// are the engine's (the same that Diff compares), without hooks, in the
// destination namespace with the tracking annotation, Secret values
// masked, sorted; and a project that does not permit them gets none.
func TestDifferDesired(t *testing.T) {
	t.Parallel()
	files := baseFiles()
	files["manifests/secret.yaml"] = `apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: s3cr3t
`
	files["manifests/hook.yaml"] = annotated("after-sync", "argocd.argoproj.io/hook", "PostSync")
	f := newFixture(t, files)
	f.application(nil, nil)
	opts := application.DefaultOptions()
	opts.Namespace = argoNS
	d, err := application.NewDiffer(diffDependencies(t, diffRepoService(t)), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	objs, err := d.Desired(t.Context(), f.app())
	if err != nil {
		t.Fatalf("desired: %v", err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GroupVersionKind().Group+"/"+o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
		if id := o.GetAnnotations()[v1alpha1.AnnotationKeyTrackingID]; id == "" {
			t.Errorf("%s %s has no tracking annotation: %v", o.GetKind(), o.GetName(), o.GetAnnotations())
		}
	}
	want := []string{"/ConfigMap " + f.ns + "/settings", "/Secret " + f.ns + "/db", "/Service " + f.ns + "/web", "apps/Deployment " + f.ns + "/web"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("desired objects (-want +got):\n%s", diff)
	}
	for _, o := range objs {
		if o.GetKind() != "Secret" {
			continue
		}
		if pw, _, _ := unstructured.NestedString(o.Object, "data", "password"); pw != "++++++++" {
			t.Errorf("secret value %q, want it masked", pw)
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "stringData"); found {
			t.Error("secret keeps stringData")
		}
	}

	// A project that permits no destination: refused, nothing returned.
	app := f.app()
	app.Spec.Destination.Namespace = "kube-system"
	objs, err = d.Desired(t.Context(), app)
	if !authority.IsRefused(err) || objs != nil {
		t.Fatalf("desired for a destination the project does not permit: %d objects, error %v; want a refusal", len(objs), err)
	}
}
