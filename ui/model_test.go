package ui

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

func TestVerdicts(t *testing.T) {
	app := &v1alpha1.Application{Status: v1alpha1.ApplicationStatus{Conditions: []v1alpha1.ApplicationCondition{
		{Type: v1alpha1.ApplicationConditionSyncError, Message: "sync refused by policy, nothing was applied:\n[x] y"},
		{Type: v1alpha1.ApplicationConditionPolicyViolation, Message: "revision abc123 refused:\n" +
			"[no-latest-tag] Deployment/web/api: container \"api\" uses image \"nginx:latest\": pin it\n" +
			"[no-plaintext-secret] Secret/web/db: a Secret in Git\n" +
			"something else"},
	}}}
	rev, got := verdicts(app)
	want := []verdict{
		{Rule: "no-latest-tag", Object: "Deployment/web/api", Message: `container "api" uses image "nginx:latest": pin it`},
		{Rule: "no-plaintext-secret", Object: "Secret/web/db", Message: "a Secret in Git"},
		{Message: "something else"},
	}
	if rev != "abc123" {
		t.Errorf("revision %q, want abc123", rev)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

func TestDescribeProject(t *testing.T) {
	p := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{
		SourceRepos:                []string{"https://git.example/*", "!https://git.example/secret"},
		Destinations:               []v1alpha1.ApplicationDestination{{Server: "https://kubernetes.default.svc", Namespace: "web-*"}, {Server: "*", Namespace: "!kube-system"}},
		ClusterResourceWhitelist:   []v1alpha1.ClusterResourceRestrictionItem{{Group: "", Kind: "Namespace"}},
		NamespaceResourceBlacklist: []metav1.GroupKind{{Group: "networking.k8s.io", Kind: "NetworkPolicy"}},
	}}
	want := projectWords{
		Permits: []string{
			"Sources from https://git.example/*.",
			"Deploying into namespace web-* of cluster https://kubernetes.default.svc.",
			"Cluster-scoped objects of kind core/Namespace.",
			"Namespaced objects: all kinds, unless denied below.",
		},
		Denies: []string{
			"Sources from https://git.example/secret.",
			"Deploying into namespace kube-system of cluster *.",
			"Namespaced objects of kind networking.k8s.io/NetworkPolicy.",
		},
	}
	if diff := cmp.Diff(want, describeProject(p)); diff != "" {
		t.Errorf("describeProject (-want +got):\n%s", diff)
	}
}

func TestMaskObject(t *testing.T) {
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "managedFields": []any{map[string]any{"manager": "x"}},
			"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"p":"c2VjcmV0"}}`}},
		"data": map[string]any{"p": "c2VjcmV0", "q": "c2VjcmV0", "r": "b3RoZXI="},
	}}
	if !maskObject(secret) {
		t.Fatal("a Secret was not masked")
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db"},
		"data": map[string]any{"p": "++++++++", "q": "++++++++", "r": "++++++++"},
	}
	if diff := cmp.Diff(want, secret.Object); diff != "" {
		t.Errorf("masked Secret (-want +got):\n%s", diff)
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}, "data": map[string]any{"k": "v"}}}
	if maskObject(cm) || cm.Object["data"].(map[string]any)["k"] != "v" {
		t.Errorf("a ConfigMap was masked: %v", cm.Object)
	}
}

func TestListFilter(t *testing.T) {
	rows := []appRow{
		{Namespace: "argocd", Name: "guestbook-dev", Project: "web", Sync: "Synced", Health: "Healthy"},
		{Namespace: "argocd", Name: "billing", Project: "pay", Sync: "OutOfSync", Health: "Missing"},
		{Namespace: "team-b", Name: "guestbook-b", Project: "web", Sync: "Synced", Health: "Degraded"},
	}
	for _, tc := range []struct {
		f    listFilter
		want []string
	}{
		{listFilter{}, []string{"guestbook-dev", "billing", "guestbook-b"}},
		{listFilter{Project: "web"}, []string{"guestbook-dev", "guestbook-b"}},
		{listFilter{Sync: "OutOfSync"}, []string{"billing"}},
		{listFilter{Health: "Degraded"}, []string{"guestbook-b"}},
		{listFilter{Namespace: "argocd", Query: "GUEST"}, []string{"guestbook-dev"}},
	} {
		var got []string
		for _, r := range rows {
			if tc.f.match(r) {
				got = append(got, r.Name)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.f, diff)
		}
	}
}

func TestTemplatesParse(t *testing.T) {
	set, err := parseTemplates()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range pageNames {
		if set[name] == nil || set[name].Lookup("main") == nil || set[name].Lookup("layout") == nil {
			t.Errorf("page %s lacks main or layout", name)
		}
	}
}

func TestStatusOf(t *testing.T) {
	gr := schema.GroupResource{Group: "argoproj.io", Resource: "applications"}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{apierrors.NewUnauthorized("token expired"), http.StatusUnauthorized},
		{apierrors.NewForbidden(gr, "x", errors.New("no")), http.StatusForbidden},
		{fmt.Errorf("get: %w", apierrors.NewNotFound(gr, "x")), http.StatusNotFound},
		{&appops.RefusedError{Err: appops.ErrAutomatedRollback}, http.StatusConflict},
		{&authority.RefusedError{Verb: authority.VerbDiff, Project: "team-web"}, http.StatusForbidden},
		{apierrors.NewConflict(gr, "x", errors.New("changed")), http.StatusConflict},
		{&httpError{http.StatusNotImplemented, errors.New("no diffs")}, http.StatusNotImplemented},
		{errors.New("boom"), http.StatusInternalServerError},
	} {
		if got := statusOf(tc.err); got != tc.want {
			t.Errorf("statusOf(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
