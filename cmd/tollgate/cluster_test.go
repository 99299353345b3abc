package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// fakeTargetCluster is a cluster whose token controller fills every
// service-account token Secret with "tok", unless noToken.
func fakeTargetCluster(t *testing.T, noToken bool) client.Client {
	t.Helper()
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if s, ok := obj.(*corev1.Secret); ok && s.Type == corev1.SecretTypeServiceAccountToken && !noToken {
				s.Data = map[string][]byte{corev1.ServiceAccountTokenKey: []byte("tok")}
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
}

func clusterAddTestOptions() clusterAddOptions {
	return clusterAddOptions{context: "prod-eu", argocdNamespace: "argocd", systemNamespace: "kube-system", shard: -1, tokenTimeout: 2 * time.Second}
}

// TestAddCluster: argocd cluster add's RBAC in the cluster, and the cluster
// Secret it writes: name, labels, annotations and data.
func TestAddCluster(t *testing.T) {
	conf := &rest.Config{Host: "https://prod.example.com:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("CA")}}
	target, cp := fakeTargetCluster(t, false), fakeAppClient(t)
	o := clusterAddTestOptions()
	o.name, o.project, o.labels, o.annotations = "prod", "platform", []string{"env=prod"}, []string{"owner=sre"}
	var out bytes.Buffer
	if err := addCluster(t.Context(), target, conf, cp, o, strings.NewReader(""), &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "Cluster 'https://prod.example.com:6443' added\n" {
		t.Errorf("output %q", out.String())
	}
	var role rbacv1.ClusterRole
	if err := target.Get(t.Context(), types.NamespacedName{Name: "argocd-manager-role"}, &role); err != nil {
		t.Fatal(err)
	}
	wantRules := []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}, {NonResourceURLs: []string{"*"}, Verbs: []string{"*"}}}
	if diff := cmp.Diff(wantRules, role.Rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	var binding rbacv1.ClusterRoleBinding
	if err := target.Get(t.Context(), types.NamespacedName{Name: "argocd-manager-role-binding"}, &binding); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]rbacv1.Subject{{Kind: "ServiceAccount", Name: "argocd-manager", Namespace: "kube-system"}}, binding.Subjects); diff != "" || binding.RoleRef.Name != "argocd-manager-role" {
		t.Errorf("subjects (-want +got):\n%s\nroleRef %v", diff, binding.RoleRef)
	}
	var sa corev1.ServiceAccount
	if err := target.Get(t.Context(), types.NamespacedName{Namespace: "kube-system", Name: "argocd-manager"}, &sa); err != nil {
		t.Fatal(err)
	}
	var secret corev1.Secret
	if err := cp.Get(t.Context(), types.NamespacedName{Namespace: "argocd", Name: "cluster-prod.example.com-115888297"}, &secret); err != nil {
		t.Fatal(err)
	}
	wantData := map[string]string{
		"server":  "https://prod.example.com:6443",
		"name":    "prod",
		"project": "platform",
		"config":  `{"bearerToken":"tok","tlsClientConfig":{"insecure":false,"caData":"Q0E="}}`,
	}
	if diff := cmp.Diff(wantData, stringData(secret.Data)); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"env": "prod", "argocd.argoproj.io/secret-type": "cluster"}, secret.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"owner": "sre", "managed-by": "argocd.argoproj.io"}, secret.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}

	// The same again is no change; another project is refused, then upserted.
	if err := addCluster(t.Context(), target, conf, cp, o, nil, &out); err != nil {
		t.Fatalf("same again: %v", err)
	}
	o.project = "other"
	err := addCluster(t.Context(), target, conf, cp, o, nil, &out)
	if err == nil || err.Error() != "existing cluster spec is different; use upsert flag to force update" || exitCode(err) != exitUsage {
		t.Fatalf("differs: %v", err)
	}
	o.upsert = true
	if err := addCluster(t.Context(), target, conf, cp, o, nil, &out); err != nil {
		t.Fatalf("upsert: %v", err)
	}
	if err := cp.Get(t.Context(), client.ObjectKeyFromObject(&secret), &secret); err != nil || string(secret.Data["project"]) != "other" {
		t.Errorf("upserted project %q, %v", secret.Data["project"], err)
	}
}

// TestAddClusterNamespaced: with --namespace, a Role and RoleBinding in
// each namespace, --in-cluster's server, and the namespaces in the Secret.
func TestAddClusterNamespaced(t *testing.T) {
	conf := &rest.Config{Host: "https://10.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	target, cp := fakeTargetCluster(t, false), fakeAppClient(t)
	o := clusterAddTestOptions()
	o.namespaces, o.clusterResources, o.inCluster = []string{"web", "api"}, true, true
	if err := addCluster(t.Context(), target, conf, cp, o, nil, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range o.namespaces {
		var role rbacv1.Role
		if err := target.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "argocd-manager-role"}, &role); err != nil || len(role.Rules) != 1 {
			t.Errorf("role in %s: %v, %d rules", ns, err, len(role.Rules))
		}
		var rb rbacv1.RoleBinding
		if err := target.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "argocd-manager-role-binding"}, &rb); err != nil || rb.RoleRef.Kind != "Role" {
			t.Errorf("role binding in %s: %v, %v", ns, err, rb.RoleRef)
		}
	}
	if err := target.Get(t.Context(), types.NamespacedName{Name: "argocd-manager-role"}, &rbacv1.ClusterRole{}); err == nil {
		t.Error("a ClusterRole was made for a namespaced cluster")
	}
	name, err := uriSecretName("cluster", "https://kubernetes.default.svc")
	if err != nil {
		t.Fatal(err)
	}
	var secret corev1.Secret
	if err := cp.Get(t.Context(), types.NamespacedName{Namespace: "argocd", Name: name}, &secret); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"server": "https://kubernetes.default.svc", "name": "prod-eu", "namespaces": "web,api", "clusterResources": "true",
		"config": `{"bearerToken":"tok","tlsClientConfig":{"insecure":true}}`}
	if diff := cmp.Diff(want, stringData(secret.Data)); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}

// TestAddClusterRefusals: a no at the prompt, bad labels and a token that
// never comes write no cluster Secret.
func TestAddClusterRefusals(t *testing.T) {
	conf := &rest.Config{Host: "https://prod.example.com"}
	for _, tc := range []struct {
		name     string
		edit     func(*clusterAddOptions)
		noToken  bool
		wantErr  string
		wantCode int
		wantOut  string
	}{
		{name: "no", edit: func(o *clusterAddOptions) { o.prompt = true }, wantCode: exitDenied,
			wantOut: "WARNING: This will create a service account `argocd-manager` on the cluster referenced by context `prod-eu` with full cluster level privileges. Do you want to continue [y/N]? "},
		{name: "bad label", edit: func(o *clusterAddOptions) { o.labels = []string{"env"} }, wantErr: "--label: labels should have key=value, but instead got: env", wantCode: exitUsage},
		{name: "no token", edit: func(o *clusterAddOptions) { o.tokenTimeout = time.Second }, noToken: true,
			wantErr: `failed to get token for serviceaccount "argocd-manager"`, wantCode: exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, cp := fakeTargetCluster(t, tc.noToken), fakeAppClient(t)
			o := clusterAddTestOptions()
			tc.edit(&o)
			var out bytes.Buffer
			err := addCluster(t.Context(), target, conf, cp, o, strings.NewReader("n\n"), &out)
			if err == nil || exitCode(err) != tc.wantCode || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v (exit %d), want %q (exit %d)", err, exitCode(err), tc.wantErr, tc.wantCode)
			}
			if out.String() != tc.wantOut {
				t.Errorf("output %q, want %q", out.String(), tc.wantOut)
			}
			var list corev1.SecretList
			if err := cp.List(t.Context(), &list); err != nil || len(list.Items) != 0 {
				t.Errorf("secrets written: %d, %v", len(list.Items), err)
			}
		})
	}
}

// TestListAndRemoveClusters: argocd cluster list's table and cluster rm by
// server and by name.
func TestListAndRemoveClusters(t *testing.T) {
	sec := func(name, server, clusterName, namespaces string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd", Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
			Data: map[string][]byte{"server": []byte(server), "name": []byte(clusterName), "project": []byte("platform")}}
		if namespaces != "" {
			s.Data["namespaces"] = []byte(namespaces)
		}
		return s
	}
	c := fakeAppClient(t)
	for _, s := range []*corev1.Secret{sec("a", "https://prod.example.com", "prod", ""), sec("b", "https://dev.example.com", "dev", "web,api")} {
		if err := c.Create(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	secrets, err := clusterSecrets(t.Context(), c, "argocd")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeClusters(&out, secrets, "wide"); err != nil {
		t.Fatal(err)
	}
	want := "SERVER                                  NAME        VERSION  STATUS  MESSAGE  PROJECT\n" +
		"https://kubernetes.default.svc          in-cluster                            \n" +
		"https://dev.example.com (2 namespaces)  dev                                   platform\n" +
		"https://prod.example.com                prod                                  platform\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	out.Reset()
	if err := removeClusters(t.Context(), c, "argocd", []string{"https://prod.example.com", "dev"}, false, nil, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "Cluster 'https://prod.example.com' removed\nCluster 'dev' removed\n" {
		t.Errorf("output %q", out.String())
	}
	err = removeClusters(t.Context(), c, "argocd", []string{"nope"}, false, nil, &out)
	if err == nil || err.Error() != `cluster "nope" not found in namespace argocd` || exitCode(err) != exitUsage {
		t.Errorf("missing: %v", err)
	}
}

func stringData(d map[string][]byte) map[string]string {
	out := map[string]string{}
	for k, v := range d {
		out[k] = string(v)
	}
	return out
}
