package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/apptree"
)

// treeNow is the time the tree tests print ages at.
var treeNow = time.Date(2025, 6, 2, 12, 0, 0, 0, time.UTC)

// liveObject is an object of kind apiVersion/kind in namespace shop,
// created an hour before treeNow, owned by the objects of owners (UIDs).
func liveObject(apiVersion, kind, name, uid string, owners ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetNamespace("shop")
	u.SetName(name)
	u.SetUID(typesUID(uid))
	u.SetCreationTimestamp(metav1.NewTime(treeNow.Add(-time.Hour)))
	var refs []metav1.OwnerReference
	for _, o := range owners {
		refs = append(refs, metav1.OwnerReference{APIVersion: "v1", Kind: "Owner", Name: o, UID: typesUID(o)})
	}
	u.SetOwnerReferences(refs)
	return u
}

// treeApp is an Application of a Deployment (two ReplicaSets, the newer
// with two Pods), a Service (an EndpointSlice) and a ConfigMap that does
// not exist live; its last sync left a message on the Deployment.
func treeApp() (*v1alpha1.Application, []client.Object) {
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "argocd"}}
	app.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/shop.git", TargetRevision: "main", Path: "deploy",
		Helm: &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "replicas", Value: "2"}}}}
	app.Spec.Destination = v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "shop"}
	app.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced
	app.Status.Health.Status = v1alpha1.HealthStatusHealthy
	app.Status.Resources = []v1alpha1.ResourceStatus{
		{Version: "v1", Kind: "Service", Namespace: "shop", Name: "web", Status: v1alpha1.SyncStatusCodeSynced, Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy}},
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web", Status: v1alpha1.SyncStatusCodeSynced, Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy}},
		{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "gone", Status: v1alpha1.SyncStatusCodeOutOfSync},
	}
	app.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationSucceeded, SyncResult: &v1alpha1.SyncOperationResult{Revision: "abc",
		Resources: []v1alpha1.ResourceResult{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web", Message: "deployment.apps/web configured"}}}}
	objs := []client.Object{
		app,
		liveObject("v1", "Service", "web", "svc"),
		liveObject("discovery.k8s.io/v1", "EndpointSlice", "web-abcde", "eps", "svc"),
		liveObject("apps/v1", "Deployment", "web", "dep"),
		liveObject("apps/v1", "ReplicaSet", "web-old", "rs1", "dep"),
		liveObject("apps/v1", "ReplicaSet", "web-new", "rs2", "dep"),
		liveObject("v1", "Pod", "web-new-1", "pod1", "rs2"),
		liveObject("v1", "Pod", "web-new-2", "pod2", "rs2"),
		liveObject("v1", "Pod", "unowned", "pod3"),
		liveObject("v1", "Pod", "cycle", "pod4", "pod4"),
	}
	return app, objs
}

// fakeTreeClient holds the Application of treeApp and its live objects.
func fakeTreeClient(t *testing.T) (client.Client, *v1alpha1.Application) {
	t.Helper()
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	app, objs := treeApp()
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(), app
}

func buildTestTree(t *testing.T) (*v1alpha1.Application, *apptree.Tree) {
	t.Helper()
	c, app := fakeTreeClient(t)
	tree, err := liveTree(t.Context(), c, kubeconfig{rest: &rest.Config{Host: "https://127.0.0.1:6443"}}, app)
	if err != nil {
		t.Fatal(err)
	}
	return app, tree
}

func TestAppGetTree(t *testing.T) {
	for _, tc := range []struct{ output, golden string }{
		{formatTree, "app-get-tree.golden"},
		{formatTreeDetailed, "app-get-tree-detailed.golden"},
	} {
		t.Run(tc.output, func(t *testing.T) {
			app, tree := buildTestTree(t)
			var out bytes.Buffer
			if err := writeAppText(&out, app, tree, appGetOptions{output: tc.output, sourcePosition: -1}, treeNow); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.golden, out.String())
		})
	}
}

func TestAppGetWideWithParams(t *testing.T) {
	app, _ := treeApp()
	var out bytes.Buffer
	if err := writeAppText(&out, app, nil, appGetOptions{output: appGetFormatWide, showParams: true, sourcePosition: -1}, treeNow); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "app-get-show-params.golden", out.String())
}

func TestParamsSource(t *testing.T) {
	multi := &v1alpha1.Application{}
	multi.Spec.Sources = []v1alpha1.ApplicationSource{{RepoURL: "a", Name: "base"}, {RepoURL: "b", Name: "values"}}
	for _, tc := range []struct {
		name     string
		position int
		src      string
		want     string
		wantErr  string
	}{
		{name: "by position", position: 2, want: "b"},
		{name: "by name", position: -1, src: "base", want: "a"},
		{name: "none", position: -1, wantErr: "source position should be specified and must be greater than 0 for applications with multiple sources"},
		{name: "too far", position: 3, wantErr: "source position should be less than the number of sources in the application"},
		{name: "unknown name", position: -1, src: "nope", wantErr: "unknown source name 'nope'"},
		{name: "both", position: 1, src: "base", wantErr: "only one of --source-position and --source-name can be specified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := paramsSource(multi, tc.position, tc.src)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || exitCode(err) != exitUsage {
					t.Fatalf("error = %v, want %q (exit 2)", err, tc.wantErr)
				}
				return
			}
			if err != nil || got.RepoURL != tc.want {
				t.Fatalf("got %v, %v; want source %s", got, err, tc.want)
			}
		})
	}
}

func TestAppGetFormats(t *testing.T) {
	for _, f := range []string{"wide", "text", "tree", "tree=detailed", "yaml", "json"} {
		if err := checkAppGetFormat(f); err != nil {
			t.Errorf("checkAppGetFormat(%q) = %v", f, err)
		}
	}
	err := checkAppGetFormat("trees")
	if err == nil || exitCode(err) != exitUsage || err.Error() != "unknown output format: trees (valid: wide, text, tree, tree=detailed, yaml, json)" {
		t.Errorf("checkAppGetFormat(trees) = %v", err)
	}
}

func TestAppResources(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   appResourcesOptions
		golden string
		want   string
	}{
		{name: "table", opts: appResourcesOptions{listAll: true}, want: "GROUP  KIND        NAMESPACE  NAME  ORPHANED\n       Service     shop       web   No\napps   Deployment  shop       web   No\n"},
		{name: "orphaned only", opts: appResourcesOptions{orphaned: true}, want: "GROUP  KIND  NAMESPACE  NAME  ORPHANED\n"},
		{name: "tree", opts: appResourcesOptions{listAll: true, output: formatTree}, golden: "app-resources-tree.golden"},
		{name: "tree detailed", opts: appResourcesOptions{listAll: true, output: formatTreeDetailed}, golden: "app-resources-tree-detailed.golden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, tree := buildTestTree(t)
			var out bytes.Buffer
			if err := writeResources(&out, tree, tc.opts, treeNow); err != nil {
				t.Fatal(err)
			}
			if tc.golden != "" {
				checkGolden(t, tc.golden, out.String())
			} else if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckLiveDestination(t *testing.T) {
	kc := kubeconfig{rest: &rest.Config{Host: "https://10.0.0.1:6443/"}}
	for _, tc := range []struct {
		dest    v1alpha1.ApplicationDestination
		wantErr string
	}{
		{dest: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc"}},
		{dest: v1alpha1.ApplicationDestination{Name: "in-cluster"}},
		{dest: v1alpha1.ApplicationDestination{Server: "https://10.0.0.1:6443"}},
		{dest: v1alpha1.ApplicationDestination{Server: "https://prod.example.com"},
			wantErr: "application web deploys to cluster https://prod.example.com: only the cluster of your kubeconfig (the in-cluster destination) can be read"},
		{dest: v1alpha1.ApplicationDestination{Name: "prod"},
			wantErr: "application web deploys to cluster prod: only the cluster of your kubeconfig (the in-cluster destination) can be read"},
	} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
		app.Spec.Destination = tc.dest
		err := checkLiveDestination(app, kc)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tc.dest, err)
		case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr || exitCode(err) != exitUsage):
			t.Errorf("%v: error = %v, want %q (exit 2)", tc.dest, err, tc.wantErr)
		}
	}
}

// TestWalkTreePrefixes: argocd's connectors at three levels.
func TestWalkTreePrefixes(t *testing.T) {
	leaf := func(n string) *apptree.Node { return &apptree.Node{Name: n} }
	root := &apptree.Node{Name: "root", Children: []*apptree.Node{
		{Name: "a", Children: []*apptree.Node{leaf("a1"), leaf("a2")}},
		{Name: "b", Children: []*apptree.Node{leaf("b1")}},
	}}
	var got []string
	walkTree(root, func(prefix string, n *apptree.Node) { got = append(got, prefix+n.Name) })
	want := []string{"root", "├─a", "│ ├─a1", "│ └─a2", "└─b", "  └─b1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s\n%s", diff, strings.Join(got, "\n"))
	}
}

func typesUID(s string) types.UID { return types.UID(s) }

func TestAppResourcesUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"app", "resources"}, "accepts 1 arg(s), received 0"},
		{[]string{"app", "resources", "shop", "--output", "wide"}, "unknown output format: wide (valid: tree, tree=detailed)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCLI(t, nil, tc.args...)
			if r.code != exitUsage || !strings.Contains(r.err, tc.wantErr) {
				t.Errorf("exit %d, error %q; want exit %d and an error containing %q", r.code, r.err, exitUsage, tc.wantErr)
			}
		})
	}
}
