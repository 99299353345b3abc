package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/envtest"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// startTokenController runs kube-controller-manager's service-account
// token controller, alone, until the test ends: the test control plane
// runs no controller manager, and cluster add waits for it to fill the
// long-lived token Secret of argocd-manager.
func startTokenController(t *testing.T) {
	t.Helper()
	stop, err := env.StartControllers(envtest.BinaryDir(), "serviceaccount-token-controller")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Logf("stop the token controller: %v", err)
		}
	})
}

// installerKubeconfig writes a kubeconfig whose current context is the
// administrator's on the control plane and whose context "target" reaches
// the same API server at server as a cluster administrator that
// authenticates with a bearer token (the service account installer of ns),
// as a kubeconfig of a cloud cluster does; cluster add then writes
// argocd-manager's token, not a client certificate, into the cluster
// Secret.
func installerKubeconfig(t *testing.T, ns, server string) string {
	t.Helper()
	ctx := t.Context()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "installer", Namespace: ns}}
	if err := env.Client.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "installer-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}},
	}
	if err := env.Client.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), binding) })
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("request the installer's token: %v", err)
	}
	tollgateCLI(t)
	cfg, err := clientcmd.LoadFromFile(cliKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clusters["target"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos["installer"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["target"] = &clientcmdapi.Context{Cluster: "target", AuthInfo: "installer"}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// clusterSecretOf returns the cluster Secret of server in namespace cp.
func clusterSecretOf(t *testing.T, cp, server string) *corev1.Secret {
	t.Helper()
	var list corev1.SecretList
	if err := env.Client.List(t.Context(), &list, client.InNamespace(cp), client.MatchingLabels{"argocd.argoproj.io/secret-type": "cluster"}); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if string(list.Items[i].Data["server"]) == server {
			return &list.Items[i]
		}
	}
	t.Fatalf("no cluster Secret of %s in %s", server, cp)
	return nil
}

// TestCLIClusterAdd: tollgate cluster add CONTEXT --namespace NS makes
// argocd-manager, a Role and RoleBinding in NS only and its long-lived
// token (filled by the real token controller), and writes the cluster
// Secret into the control plane. The Secret's credentials are limited as
// the RBAC says: a client built from them is argocd-manager, reads NS and
// is forbidden elsewhere. The engine uses that cluster as Argo CD's
// namespaced mode: it syncs an Application into NS with the token alone,
// listing and watching NS only, and another into a second namespace is a
// ComparisonError. cluster add without --namespace is refused as another
// spec, and with --upsert grants the whole cluster; the engine then syncs
// both. The cluster is this control plane under a second URL (localhost),
// registered with the tracking engine's control plane, where no other
// test registers it.
func TestCLIClusterAdd(t *testing.T) {
	t.Parallel()
	startTokenController(t)
	f := newFixture(t, map[string]string{
		"manifests/cm.yaml": configMap("settings", "v1"),
		"other/cm.yaml":     configMap("elsewhere", "v1"),
	})
	f.cp = trackingNS
	sys, other := env.Namespace(t), env.Namespace(t)
	server := otherURL(t, env.Config.Host)
	kc := installerKubeconfig(t, sys, server)
	name := "cli-" + f.name
	add := []string{"cluster", "add", "target", "--kubeconfig", kc, "--argocd-namespace", f.cp, "--system-namespace", sys,
		"--name", name, "--project", f.name, "--yes"}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = env.Client.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(f.cp), client.MatchingLabels{"argocd.argoproj.io/secret-type": "cluster"})
		_ = env.Client.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "argocd-manager-role-binding"}})
		_ = env.Client.Delete(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "argocd-manager-role"}})
	})
	if out := tollgateOK(t, append(add, "--namespace", f.ns)...); out != fmt.Sprintf("Cluster '%s' added\n", server) {
		t.Errorf("cluster add: %q", out)
	}

	// In the cluster: the account, its Role in f.ns only, its token.
	ctx := t.Context()
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "argocd-manager", Namespace: sys}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "argocd-manager-role", Namespace: f.ns}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "argocd-manager-role-binding", Namespace: f.ns}},
	} {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Errorf("%T %s: %v", obj, obj.GetName(), err)
		}
	}
	err := env.Client.Get(ctx, client.ObjectKey{Name: "argocd-manager-role-binding"}, &rbacv1.ClusterRoleBinding{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRoleBinding with --namespace: %v, want not found", err)
	}
	var tokenSecret corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: sys, Name: "argocd-manager-long-lived-token"}, &tokenSecret); err != nil {
		t.Fatal(err)
	}
	token := string(tokenSecret.Data[corev1.ServiceAccountTokenKey])

	// In the control plane: the cluster Secret, with that token.
	secret := clusterSecretOf(t, f.cp, server)
	if got := string(secret.Data["name"]); got != name || string(secret.Data["namespaces"]) != f.ns || string(secret.Data["project"]) != f.name {
		t.Errorf("cluster Secret data name=%q namespaces=%q project=%q; want %s, %s, %s", got, secret.Data["namespaces"], secret.Data["project"], name, f.ns, f.name)
	}
	var cc struct {
		BearerToken     string `json:"bearerToken"`
		TLSClientConfig struct {
			CAData   []byte `json:"caData"`
			CertData []byte `json:"certData"`
		} `json:"tlsClientConfig"`
	}
	if err := json.Unmarshal(secret.Data["config"], &cc); err != nil {
		t.Fatal(err)
	}
	if token == "" || cc.BearerToken != token || len(cc.TLSClientConfig.CertData) != 0 {
		t.Fatalf("cluster Secret config: bearerToken %d bytes, certData %d bytes; want argocd-manager's token (%d bytes) and no certificate",
			len(cc.BearerToken), len(cc.TLSClientConfig.CertData), len(token))
	}

	// A client of the Secret's config is argocd-manager, limited to f.ns.
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: server, BearerToken: cc.BearerToken, TLSClientConfig: rest.TLSClientConfig{CAData: cc.TLSClientConfig.CAData}})
	if err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if want := "system:serviceaccount:" + sys + ":argocd-manager"; err != nil || review.Status.UserInfo.Username != want {
		t.Errorf("the Secret's credentials authenticate as %v (%v), want %s", review, err, want)
	}
	if _, err := cs.CoreV1().ConfigMaps(f.ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list ConfigMaps of %s with the Secret's token: %v", f.ns, err)
	}
	if _, err := cs.CoreV1().ConfigMaps(other).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list ConfigMaps of %s with the Secret's token: %v, want forbidden", other, err)
	}

	// cluster list shows it.
	wantLines(t, "cluster list", tollgateOK(t, "cluster", "list", "--argocd-namespace", f.cp),
		fmt.Sprintf("%s (1 namespaces) %s %s", server, name, f.name))

	// The engine reaches the cluster with the Secret's token alone: into
	// f.ns, and not into other, which the Secret does not list.
	f.editProject = func(p *v1alpha1.AppProject) {
		p.Spec.Destinations = []v1alpha1.ApplicationDestination{{Server: server, Namespace: f.ns}, {Server: server, Namespace: other}}
	}
	f.application(automated(true, false), func(a *v1alpha1.Application) {
		a.Spec.Destination = v1alpha1.ApplicationDestination{Server: server, Namespace: f.ns}
	})
	elsewhere := &fixture{t: t, cp: f.cp, ns: other, name: f.name + "-other", repoURL: f.repoURL}
	f.create(&v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: elsewhere.name, Namespace: f.cp},
		Spec: v1alpha1.ApplicationSpec{
			Project:     f.name,
			Source:      &v1alpha1.ApplicationSource{RepoURL: f.repoURL, Path: "other", TargetRevision: gitserver.DefaultBranch},
			Destination: v1alpha1.ApplicationDestination{Server: server, Namespace: other},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: automated(true, false), Retry: &v1alpha1.RetryStrategy{}},
		},
	})
	f.waitSynced(f.head)
	elsewhere.waitApp("ComparisonError for a namespace the cluster Secret does not list", func(a *v1alpha1.Application) bool {
		msg, _ := condition(a, v1alpha1.ApplicationConditionComparisonError)
		return msg == fmt.Sprintf("Failed to load live state: namespace %q for ConfigMap %q is not managed", other, "elsewhere")
	})

	// add without --namespace is refused as another spec, and with
	// --upsert grants the whole cluster: the engine syncs into both.
	tollgateFails(t, 2, "existing cluster spec is different; use upsert flag to force update", add...)
	tollgateOK(t, append(add, "--upsert")...)
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "argocd-manager-role-binding"}, &rbacv1.ClusterRoleBinding{}); err != nil {
		t.Errorf("ClusterRoleBinding after cluster add without --namespace: %v", err)
	}
	secret = clusterSecretOf(t, f.cp, server)
	if err := json.Unmarshal(secret.Data["config"], &cc); err != nil || cc.BearerToken != token || secret.Data["namespaces"] != nil {
		t.Fatalf("cluster Secret after --upsert: namespaces %q, same token %v (%v)", secret.Data["namespaces"], cc.BearerToken == token, err)
	}
	elsewhere.waitSynced(f.head)
	for ns, cm := range map[string]string{f.ns: "settings", other: "elsewhere"} {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cm}, &corev1.ConfigMap{}); err != nil {
			t.Errorf("the synced ConfigMap %s/%s: %v", ns, cm, err)
		}
	}

	if out := tollgateOK(t, "cluster", "rm", name, "--argocd-namespace", f.cp, "-y"); out != fmt.Sprintf("Cluster '%s' removed\n", name) {
		t.Errorf("cluster rm: %q", out)
	}
	err = env.Client.Get(ctx, client.ObjectKeyFromObject(secret), &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("cluster Secret after cluster rm: %v, want not found", err)
	}
}
