package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestAppManifestsLive: the live objects of status.resources in its order,
// a missing one left out, Secret values masked, managedFields removed.
func TestAppManifestsLive(t *testing.T) {
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	app, objs := treeApp()
	app.Status.Resources = append(app.Status.Resources, v1alpha1.ResourceStatus{Version: "v1", Kind: "Secret", Namespace: "shop", Name: "db"})
	secret := liveObject("v1", "Secret", "db", "sec")
	secret.Object["data"] = map[string]any{"password": "czNjcjN0"}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(objs, secret)...).Build()
	kc := kubeconfig{rest: &rest.Config{Host: "https://127.0.0.1:6443"}}

	got, err := liveManifests(t.Context(), c, kc, types.NamespacedName{Namespace: "argocd", Name: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range got {
		names = append(names, o.GetKind()+"/"+o.GetName())
		if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "metadata", "managedFields"); found {
			t.Errorf("%s/%s keeps managedFields", o.GetKind(), o.GetName())
		}
	}
	if diff := cmp.Diff([]string{"Service/web", "Deployment/web", "Secret/db"}, names); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if pw, _, _ := unstructured.NestedString(got[2].Object, "data", "password"); pw != "++++++++" {
		t.Errorf("secret value printed as %q, want it masked", pw)
	}

	var out bytes.Buffer
	if err := writeManifests(&out, got[:1]); err != nil {
		t.Fatal(err)
	}
	want := "---\napiVersion: v1\nkind: Service\nmetadata:\n  creationTimestamp: \"2025-06-02T11:00:00Z\"\n  name: web\n  namespace: shop\n  resourceVersion: \"999\"\n  uid: svc\nspec: {}\nstatus:\n  loadBalancer: {}\n\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestAppManifestsLiveOtherCluster(t *testing.T) {
	app, _ := treeApp()
	app.Spec.Destination = v1alpha1.ApplicationDestination{Name: "prod", Namespace: "shop"}
	c := fakeAppClient(t, app)
	_, err := liveManifests(t.Context(), c, kubeconfig{rest: &rest.Config{Host: "https://127.0.0.1:6443"}}, types.NamespacedName{Namespace: "argocd", Name: "shop"})
	want := "application shop deploys to cluster prod: only the cluster of your kubeconfig (the in-cluster destination) can be read"
	if err == nil || err.Error() != want || exitCode(err) != exitUsage {
		t.Fatalf("error = %v, want %q (exit 2)", err, want)
	}
}

func TestAppManifestsUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"app", "manifests"}, "accepts 1 arg(s), received 0"},
		{[]string{"app", "manifests", "shop", "--source", "cluster"}, "unknown source type 'cluster' (valid: git, live)"},
		{[]string{"app", "manifests", "shop", "--source", "live", "--revision", "v2"}, "--revision and --local apply to --source git"},
		{[]string{"app", "manifests", "shop", "--revision", "v2", "--local", "."}, "--local and --revision cannot be used together"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCLI(t, nil, tc.args...)
			if r.code != exitUsage || !strings.Contains(r.err, tc.wantErr) {
				t.Errorf("exit %d, error %q; want exit %d and an error containing %q", r.code, r.err, exitUsage, tc.wantErr)
			}
		})
	}
}
