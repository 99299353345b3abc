package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/engine/argocd"
)

// Argo CD's names for what cluster add makes in the cluster it adds
// (util/clusterauth).
const (
	managerServiceAccount = "argocd-manager"
	managerRole           = "argocd-manager-role"
	managerRoleBinding    = "argocd-manager-role-binding"
	tokenSecretSuffix     = "-long-lived-token"
	defaultSystemNS       = "kube-system"
	inClusterServer       = "https://kubernetes.default.svc"
	// bearerTokenTimeout is how long cluster add waits for the token
	// controller to fill the token Secret (Argo CD's BearerTokenTimeout).
	bearerTokenTimeout = 30 * time.Second
)

// clusterAddOptions are the flags of `tollgate cluster add`, argocd
// cluster add's.
type clusterAddOptions struct {
	kubeconfig       string
	argocdNamespace  string
	context          string
	name             string
	project          string
	upsert           bool
	inCluster        bool
	clusterResources bool
	yes              bool
	serviceAccount   string
	systemNamespace  string
	namespaces       []string
	labels           []string
	annotations      []string
	shard            int64
	tokenTimeout     time.Duration
	// prompt asks before creating argocd-manager (a terminal, no --yes).
	prompt bool
}

// managerRules give argocd-manager every verb on everything, cluster-wide
// (Argo CD's ArgoCDManagerClusterPolicyRules) or, with --namespace, in each
// namespace (ArgoCDManagerNamespacePolicyRules).
func managerRules(clusterWide bool) []rbacv1.PolicyRule {
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}
	if clusterWide {
		rules = append(rules, rbacv1.PolicyRule{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}})
	}
	return rules
}

// clusterConfigJSON is the config key of a cluster Secret, as Argo CD's
// ClusterConfig encodes it.
type clusterConfigJSON struct {
	BearerToken        string         `json:"bearerToken,omitempty"`
	TLSClientConfig    clusterTLSJSON `json:"tlsClientConfig"`
	DisableCompression bool           `json:"disableCompression,omitempty"`
}

type clusterTLSJSON struct {
	Insecure   bool   `json:"insecure"`
	ServerName string `json:"serverName,omitempty"`
	CertData   []byte `json:"certData,omitempty"`
	KeyData    []byte `json:"keyData,omitempty"`
	CAData     []byte `json:"caData,omitempty"`
}

// addCluster registers the cluster of conf (reached with target) in the
// control plane cp as argocd cluster add does: argocd-manager, its RBAC and
// its token in the cluster (or the token of --service-account), then the
// cluster Secret, written last and whole.
func addCluster(ctx context.Context, target client.Client, conf *rest.Config, cp client.Client, o clusterAddOptions, in io.Reader, out io.Writer) error {
	labels, err := parseLabels(o.labels)
	if err != nil {
		return usageError(fmt.Errorf("--label: %w", err))
	}
	annotations, err := parseLabels(o.annotations)
	if err != nil {
		return usageError(fmt.Errorf("--annotation: %w", err))
	}
	if annotations[corev1.LastAppliedConfigAnnotation] != "" {
		return usageError(fmt.Errorf("annotation %s cannot be set", corev1.LastAppliedConfigAnnotation))
	}
	tls, err := clusterTLS(conf)
	if err != nil {
		return usageError(fmt.Errorf("context %s: %w", o.context, err))
	}
	var token string
	if o.serviceAccount != "" {
		token, err = serviceAccountToken(ctx, target, o.systemNamespace, o.serviceAccount, o.tokenTimeout)
	} else {
		if o.prompt {
			level := "cluster"
			if len(o.namespaces) > 0 {
				level = "namespace"
			}
			q := fmt.Sprintf("WARNING: This will create a service account `argocd-manager` on the cluster referenced by context `%s` with full %s level privileges. Do you want to continue [y/N]? ", o.context, level)
			if !askToProceed(bufio.NewReader(in), out, q) {
				return &exitError{code: exitDenied}
			}
		}
		token, err = installManagerRBAC(ctx, target, o.systemNamespace, o.namespaces, o.tokenTimeout)
	}
	if err != nil {
		return err
	}
	cfg := clusterConfigJSON{TLSClientConfig: tls, DisableCompression: conf.DisableCompression}
	if len(tls.CertData) == 0 || len(tls.KeyData) == 0 {
		cfg.BearerToken = token
	}
	server := conf.Host
	if o.inCluster {
		server = inClusterServer
	}
	secret, err := clusterSecret(server, cmpOr(o.name, o.context), o, cfg, labels, annotations)
	if err != nil {
		return err
	}
	if err := writeClusterSecret(ctx, cp, secret, o.upsert); err != nil {
		return err
	}
	fmt.Fprintf(out, "Cluster '%s' added\n", server)
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// clusterTLS is the TLS client configuration of conf, files read, as
// argocd's NewCluster takes it.
func clusterTLS(conf *rest.Config) (clusterTLSJSON, error) {
	t := clusterTLSJSON{Insecure: conf.Insecure, ServerName: conf.ServerName, CAData: conf.CAData, CertData: conf.CertData, KeyData: conf.KeyData}
	for _, f := range []struct {
		data *[]byte
		file string
	}{{&t.CAData, conf.CAFile}, {&t.CertData, conf.CertFile}, {&t.KeyData, conf.KeyFile}} {
		if len(*f.data) == 0 && f.file != "" {
			b, err := os.ReadFile(f.file)
			if err != nil {
				return t, fmt.Errorf("read %s: %w", f.file, err)
			}
			*f.data = b
		}
	}
	return t, nil
}

// clusterSecret is the cluster Secret Argo CD's db writes for a cluster
// (clusterToSecret), in namespace o.argocdNamespace.
func clusterSecret(server, name string, o clusterAddOptions, cfg clusterConfigJSON, labels, annotations map[string]string) (*corev1.Secret, error) {
	secName, err := uriSecretName(secretTypeCluster, server)
	if err != nil {
		return nil, usageError(fmt.Errorf("server %q of context %s: %w", server, o.context, err))
	}
	config, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode cluster config: %w", err)
	}
	data := map[string][]byte{"server": []byte(strings.TrimRight(server, "/")), "name": []byte(cmpOr(name, server)), "config": config}
	if len(o.namespaces) > 0 {
		data["namespaces"] = []byte(strings.Join(o.namespaces, ","))
	}
	if o.shard >= 0 {
		data["shard"] = []byte(strconv.FormatInt(o.shard, 10))
	}
	if o.clusterResources {
		data["clusterResources"] = []byte("true")
	}
	if o.project != "" {
		data["project"] = []byte(o.project)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secName, Namespace: o.argocdNamespace, Labels: labels, Annotations: annotations}, Data: data}
	markArgoCDSecret(s, secretTypeCluster)
	return s, nil
}

// errClusterDiffers is Argo CD's refusal of a cluster that exists with
// another spec.
var errClusterDiffers = errors.New("existing cluster spec is different; use upsert flag to force update")

// writeClusterSecret creates want, or finds the cluster Secret of its
// server: the same is left alone, another is replaced with upsert and
// refused without.
func writeClusterSecret(ctx context.Context, cp client.Client, want *corev1.Secret, upsert bool) error {
	var list corev1.SecretList
	if err := cp.List(ctx, &list, client.InNamespace(want.Namespace), client.MatchingLabels{argocd.SecretTypeLabel: secretTypeCluster}); err != nil {
		return fmt.Errorf("list cluster secrets in %s: %w", want.Namespace, err)
	}
	server := string(want.Data["server"])
	for i := range list.Items {
		cur := &list.Items[i]
		if strings.TrimRight(string(cur.Data["server"]), "/") != server {
			continue
		}
		if sameSecret(cur, want) {
			return nil
		}
		if !upsert {
			return usageError(errClusterDiffers)
		}
		cur.Data, cur.Labels, cur.Annotations = want.Data, want.Labels, want.Annotations
		if err := cp.Update(ctx, cur); err != nil {
			return fmt.Errorf("update cluster secret %s: %w", cur.Name, err)
		}
		return nil
	}
	if err := cp.Create(ctx, want); err != nil {
		return fmt.Errorf("create cluster secret %s: %w", want.Name, err)
	}
	return nil
}

// sameSecret reports whether a and b hold the same data, labels and
// annotations (Argo CD's marks aside).
func sameSecret(a, b *corev1.Secret) bool {
	return maps.EqualFunc(a.Data, b.Data, bytes.Equal) &&
		maps.Equal(userMetadata(a.Labels), userMetadata(b.Labels)) &&
		maps.Equal(userMetadata(a.Annotations), userMetadata(b.Annotations))
}

// installManagerRBAC makes argocd-manager in ns with every right, on the
// whole cluster or on each of namespaces, and returns its token, as Argo
// CD's InstallClusterManagerRBAC does.
func installManagerRBAC(ctx context.Context, c client.Client, ns string, namespaces []string, timeout time.Duration) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: managerServiceAccount, Namespace: ns}}
	if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("failed to create service account %q in namespace %q: %w", managerServiceAccount, ns, err)
	}
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: managerServiceAccount, Namespace: ns}
	if len(namespaces) == 0 {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: managerRole}, Rules: managerRules(true)}
		if err := upsertObject(ctx, c, "ClusterRole", role, func(cur client.Object) { cur.(*rbacv1.ClusterRole).Rules = role.Rules }); err != nil {
			return "", err
		}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: managerRoleBinding},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: managerRole},
			Subjects: []rbacv1.Subject{subject}}
		if err := upsertObject(ctx, c, "ClusterRoleBinding", binding, func(cur client.Object) { cur.(*rbacv1.ClusterRoleBinding).Subjects = binding.Subjects }); err != nil {
			return "", err
		}
	}
	for _, n := range namespaces {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: managerRole, Namespace: n}, Rules: managerRules(false)}
		if err := upsertObject(ctx, c, "Role", role, func(cur client.Object) { cur.(*rbacv1.Role).Rules = role.Rules }); err != nil {
			return "", err
		}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: managerRoleBinding, Namespace: n},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: managerRole},
			Subjects: []rbacv1.Subject{subject}}
		if err := upsertObject(ctx, c, "RoleBinding", binding, func(cur client.Object) { cur.(*rbacv1.RoleBinding).Subjects = binding.Subjects }); err != nil {
			return "", err
		}
	}
	return serviceAccountToken(ctx, c, ns, managerServiceAccount, timeout)
}

// upsertObject creates obj, or sets the existing one's content with set
// and updates it.
func upsertObject(ctx context.Context, c client.Client, kind string, obj client.Object, set func(client.Object)) error {
	err := c.Create(ctx, obj)
	if err == nil || !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("failed to create %s %q: %w", kind, obj.GetName(), err)
		}
		return nil
	}
	cur := obj.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
		return fmt.Errorf("failed to update %s %q: %w", kind, obj.GetName(), err)
	}
	set(cur)
	if err := c.Update(ctx, cur); err != nil {
		return fmt.Errorf("failed to update %s %q: %w", kind, obj.GetName(), err)
	}
	return nil
}

// serviceAccountToken makes (or reuses) the token Secret <sa>-long-lived-token
// of the service account sa in ns and waits, up to timeout, until the
// token controller has filled it, as Argo CD's GetServiceAccountBearerToken.
func serviceAccountToken(ctx context.Context, c client.Client, ns, sa string, timeout time.Duration) (string, error) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: sa + tokenSecretSuffix, Namespace: ns, Annotations: map[string]string{corev1.ServiceAccountNameKey: sa}},
		Type:       corev1.SecretTypeServiceAccountToken,
	}
	if err := c.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("failed to create secret %q for serviceaccount %q: %w", secret.Name, sa, err)
	}
	var token []byte
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var cur corev1.Secret
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: secret.Name}, &cur); err != nil {
			return false, fmt.Errorf("failed to get secret %q for serviceaccount %q: %w", secret.Name, sa, err)
		}
		token = cur.Data[corev1.ServiceAccountTokenKey]
		return len(token) > 0, nil
	})
	if err != nil {
		return "", fmt.Errorf("failed to get token for serviceaccount %q: %w", sa, err)
	}
	return string(token), nil
}
