package desired

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

func TestObjects(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	objs := []map[string]any{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}},
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "b", "namespace": "other"}},
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "n", "namespace": "junk"}},
		// A custom resource whose CRD comes in the same render.
		{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "widgets.example.com"},
			"spec": map[string]any{"group": "example.com", "scope": "Cluster", "names": map[string]any{"kind": "Widget"}}},
		{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "junk"}},
	}
	got, err := Objects(objs, "dest", "app", "", mapper)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, o := range got {
		ids = append(ids, o.GetAnnotations()[v1alpha1.AnnotationKeyTrackingID])
	}
	want := []string{
		"app:/ConfigMap:dest/a",
		"app:/ConfigMap:other/b",
		"app:/Namespace:/n",
		"app:apiextensions.k8s.io/CustomResourceDefinition:/widgets.example.com",
		"app:example.com/Widget:/w",
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("tracking ids (-want +got):\n%s", diff)
	}

	_, err = Objects([]map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}, "", "app", "", mapper)
	if err == nil || !strings.Contains(err.Error(), "ConfigMap a: namespaced object without a namespace") {
		t.Errorf("without a destination namespace: error = %v", err)
	}
	_, err = Objects([]map[string]any{{"kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}, "dest", "app", "", mapper)
	if err == nil || !strings.Contains(err.Error(), "rendered object 1 (a): apiVersion and kind must be set") {
		t.Errorf("without apiVersion: error = %v", err)
	}
}

func TestSignatureCheck(t *testing.T) {
	s := testutil.Scheme(t)
	project := func(keys ...string) *v1alpha1.AppProject {
		p := &v1alpha1.AppProject{}
		for _, k := range keys {
			p.Spec.SignatureKeys = append(p.Spec.SignatureKeys, v1alpha1.SignatureKey{KeyID: k})
		}
		return p
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: GPGKeysConfigMap, Namespace: "argocd"},
		Data:       map[string]string{keyA: "armored A", keyB: "armored B"},
	}
	tests := []struct {
		name    string
		objects []client.Object
		project *v1alpha1.AppProject
		want    *reposerver.SignatureCheck
	}{
		{name: "no project", objects: []client.Object{cm}},
		{name: "no signatureKeys", objects: []client.Object{cm}, project: project()},
		{
			name: "keys of argocd-gpg-keys-cm", objects: []client.Object{cm}, project: project(keyA),
			want: &reposerver.SignatureCheck{Keys: map[string]string{keyA: "armored A", keyB: "armored B"}, Allowed: []string{keyA}},
		},
		{
			name: "no argocd-gpg-keys-cm: no keys", project: project(keyA, "5DE3E0509C47EA3CF04A42D3"+keyA),
			want: &reposerver.SignatureCheck{Keys: map[string]string{}, Allowed: []string{keyA, "5DE3E0509C47EA3CF04A42D3" + keyA}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(tt.objects...).Build()
			got, err := SignatureCheck(t.Context(), c, "argocd", tt.project)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("check (-want +got):\n%s", diff)
			}
		})
	}
}

const (
	keyA = "4AEE18F83AFDEB23"
	keyB = "99B1C0F9D2C7C3AA"
)

// generator answers with resp, recording the requests.
type generator struct {
	reqs []reposerver.Request
	resp func(*reposerver.Request) *reposerver.Response
}

func (g *generator) Generate(_ context.Context, req *reposerver.Request) (*reposerver.Response, error) {
	g.reqs = append(g.reqs, *req)
	return g.resp(req), nil
}

func secret(name string, labels map[string]string, data map[string]string) corev1.Secret {
	s := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd", Labels: labels}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// TestBuilderRequest: the request carries the instance name, the Git
// source's credentials matched for the project, only the Helm repository
// Secrets the project may use and its sourceRepos permit, and a signature
// check only when asked for and the project sets signatureKeys.
func TestBuilderRequest(t *testing.T) {
	const repo = "https://git.example.com/team/config.git"
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
	app.Spec.Project = "team"
	app.Spec.Destination.Namespace = "shop"
	src := v1alpha1.ApplicationSource{RepoURL: repo, Path: "web"}
	project := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: "argocd"}}
	project.Spec.SourceRepos = []string{repo, "https://charts.example.com/*"}
	project.Spec.SignatureKeys = []v1alpha1.SignatureKey{{KeyID: keyA}}
	repoLabel := map[string]string{"argocd.argoproj.io/secret-type": "repository"}
	secrets := []corev1.Secret{
		secret("git", repoLabel, map[string]string{"url": repo, "username": "bot", "password": "s3cret"}),
		secret("charts", repoLabel, map[string]string{"type": "helm", "url": "https://charts.example.com/stable", "username": "c"}),
		secret("elsewhere", repoLabel, map[string]string{"type": "helm", "url": "https://other.example.com/charts"}),
		secret("other-project", repoLabel, map[string]string{"type": "helm", "url": "https://charts.example.com/private", "project": "other"}),
		secret("bases", map[string]string{"argocd.argoproj.io/secret-type": "repo-creds"}, map[string]string{"url": "https://git.example.com/team", "username": "b"}),
		secret("not-permitted", repoLabel, map[string]string{"url": "https://git.example.com/other/config.git", "username": "o"}),
		secret("other-project-git", repoLabel, map[string]string{"url": repo, "project": "other", "username": "x"}),
	}
	b := &Builder{Namespace: "argocd", Reader: fake.NewClientBuilder().Build()}
	target := Target{App: app, Sources: []v1alpha1.ApplicationSource{src}, Project: project, Secrets: secrets, KubeVersion: "1.37.2", KustomizeBuildOptions: "--reorder none"}
	req, err := b.Request(t.Context(), target)
	if err != nil {
		t.Fatal(err)
	}
	if req.AppName != "team_web" || req.Namespace != "shop" || req.Project != "team" || req.KubeVersion != "1.37.2" || req.KustomizeBuildOptions != "--reorder none" {
		t.Errorf("request names %q in %q of %q at %q with build options %q, want team_web in shop of team at 1.37.2 with --reorder none",
			req.AppName, req.Namespace, req.Project, req.KubeVersion, req.KustomizeBuildOptions)
	}
	if len(req.Sources) != 1 || req.Sources[0].Credentials.Username != "bot" {
		t.Errorf("sources %+v, want the Git source with the credentials of Secret git", req.Sources)
	}
	var helm []string
	for _, h := range req.HelmRepositories {
		helm = append(helm, h.URL)
	}
	if diff := cmp.Diff([]string{"https://charts.example.com/stable"}, helm); diff != "" {
		t.Errorf("Helm repositories (-want +got):\n%s", diff)
	}
	var git []string
	for _, g := range req.GitRepositories {
		git = append(git, g.URL+" "+g.Credentials.Username)
	}
	if diff := cmp.Diff([]string{repo + " bot", "https://git.example.com/team b"}, git); diff != "" {
		t.Errorf("Git repositories (-want +got):\n%s", diff)
	}
	if req.SignatureCheck != nil {
		t.Errorf("signature check %+v without VerifySignatures, want none", req.SignatureCheck)
	}
	target.VerifySignatures = true
	if req, err = b.Request(t.Context(), target); err != nil {
		t.Fatal(err)
	}
	if req.SignatureCheck == nil || !strings.Contains(strings.Join(req.SignatureCheck.Allowed, ","), keyA) {
		t.Errorf("signature check %+v, want the project's key allowed", req.SignatureCheck)
	}
	target.Project = nil
	if req, err = b.Request(t.Context(), target); err != nil {
		t.Fatal(err)
	}
	if len(req.HelmRepositories) != 0 || len(req.GitRepositories) != 0 || req.SignatureCheck != nil {
		t.Errorf("without a project: Helm repositories %v, Git repositories %v and check %v, want none", req.HelmRepositories, req.GitRepositories, req.SignatureCheck)
	}
}

// TestStateUnchanged: an Unchanged answer builds its objects by asking
// again at the answered revisions, without the known key; a different
// render key then is an error.
func TestStateUnchanged(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	key := "k1"
	g := &generator{resp: func(req *reposerver.Request) *reposerver.Response {
		resp := &reposerver.Response{Revisions: []string{rev}, SourceTypes: []v1alpha1.ApplicationSourceType{"Directory"}, Key: key}
		if req.KnownKey == key {
			resp.Unchanged = true
		} else {
			resp.Objects = append(resp.Objects, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`))
		}
		return resp
	}}
	rendered := 0
	b := &Builder{Namespace: "argocd", Manifests: g, Rendered: func(*reposerver.Response) { rendered++ }}
	req := &reposerver.Request{AppName: "web", KnownKey: key, Sources: []reposerver.Source{{Source: v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/c", TargetRevision: "main"}}}}
	resp, err := b.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	st := b.State(req, resp, Destination{Namespace: "shop", Mapper: mapper})
	if st.Built() || st.RenderKey != key {
		t.Fatalf("state built %v with key %q, want unbuilt with %q", st.Built(), st.RenderKey, key)
	}
	if err := st.Build(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(st.Objects) != 1 || st.Objects[0].GetNamespace() != "shop" || st.Objects[0].GetAnnotations()[v1alpha1.AnnotationKeyTrackingID] != "web:/ConfigMap:shop/a" {
		t.Fatalf("objects %v, want ConfigMap a in shop tracked by web", st.Objects)
	}
	// Pinned to the revision answered; the source keeps its targetRevision
	// (the build variables' ARGOCD_APP_SOURCE_TARGET_REVISION).
	if again := g.reqs[1]; again.KnownKey != "" || again.Sources[0].Revision != rev || again.Sources[0].Source.TargetRevision != "main" {
		t.Errorf("second request known key %q at %q (targetRevision %q), want none at %s (main)", again.KnownKey, again.Sources[0].Revision, again.Sources[0].Source.TargetRevision, rev)
	}
	if rendered != 2 {
		t.Errorf("Rendered saw %d answers, want 2", rendered)
	}
	// The render changed between the two requests.
	st = b.State(req, resp, Destination{Namespace: "shop", Mapper: mapper})
	key = "k2"
	if err := st.Build(t.Context()); err == nil || !strings.Contains(err.Error(), "render of revisions 0123456 changed between two requests") {
		t.Errorf("Build = %v, want the changed render named", err)
	}
}
