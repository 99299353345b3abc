package application

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

func clusterSecret(name, server, config, version string) corev1.Secret {
	return corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: version, Labels: map[string]string{SecretTypeLabel: SecretTypeCluster}},
		Data:       map[string][]byte{"name": []byte(name), "server": []byte(server), "config": []byte(config)},
	}
}

func TestClustersResolve(t *testing.T) {
	local := &rest.Config{Host: "https://local:6443", BearerToken: "local-token"}
	secrets := []corev1.Secret{
		clusterSecret("prod", "https://prod.example.com:6443", `{"bearerToken":"prod-token","tlsClientConfig":{"caData":"Y2E="}}`, "7"),
		clusterSecret("aws", "https://aws.example.com", `{"awsAuthConfig":{"clusterName":"x"}}`, "1"),
		clusterSecret("broken", "https://broken.example.com", `{"bearerToken":`, "1"),
		{ObjectMeta: metav1.ObjectMeta{Name: "repo", Labels: map[string]string{SecretTypeLabel: "repository"}}, Data: map[string][]byte{"name": []byte("repo-as-cluster")}},
	}
	tests := []struct {
		name      string
		dest      v1alpha1.ApplicationDestination
		wantHost  string
		wantToken string
		wantCA    string
		wantErr   string
	}{
		{name: "in-cluster by server", dest: v1alpha1.ApplicationDestination{Server: InClusterServer}, wantHost: "https://local:6443", wantToken: "local-token"},
		{name: "in-cluster by server with a trailing slash", dest: v1alpha1.ApplicationDestination{Server: InClusterServer + "/"}, wantHost: "https://local:6443", wantToken: "local-token"},
		{name: "in-cluster by name", dest: v1alpha1.ApplicationDestination{Name: InClusterName}, wantHost: "https://local:6443", wantToken: "local-token"},
		{name: "registered cluster by name", dest: v1alpha1.ApplicationDestination{Name: "prod"}, wantHost: "https://prod.example.com:6443", wantToken: "prod-token", wantCA: "ca"},
		{name: "registered cluster by server", dest: v1alpha1.ApplicationDestination{Server: "https://prod.example.com:6443"}, wantHost: "https://prod.example.com:6443", wantToken: "prod-token", wantCA: "ca"},
		{name: "unknown name", dest: v1alpha1.ApplicationDestination{Name: "staging"}, wantErr: `invalid destination: no cluster named "staging"`},
		{name: "unknown server", dest: v1alpha1.ApplicationDestination{Server: "https://nowhere:6443"}, wantErr: "invalid destination: cluster https://nowhere:6443 is not registered"},
		{name: "neither", dest: v1alpha1.ApplicationDestination{Namespace: "x"}, wantErr: "invalid destination: set destination.server or destination.name"},
		{name: "both", dest: v1alpha1.ApplicationDestination{Name: "prod", Server: "https://prod.example.com:6443"}, wantErr: "both set"},
		{name: "unsupported auth", dest: v1alpha1.ApplicationDestination{Name: "aws"}, wantErr: "awsAuthConfig and execProviderConfig are not supported"},
		{name: "bad config JSON", dest: v1alpha1.ApplicationDestination{Name: "broken"}, wantErr: "cluster Secret broken: key config"},
		{name: "only cluster Secrets count", dest: v1alpha1.ApplicationDestination{Name: "repo-as-cluster"}, wantErr: "no cluster named"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var built []*rest.Config
			cs := newClusters(local, func(_ context.Context, _ string, cfg *rest.Config, _ apply.Scope) (*cluster, error) {
				built = append(built, cfg)
				return &cluster{config: cfg}, nil
			})
			defer cs.stop()
			c, err := cs.resolve(t.Context(), tc.dest, secrets)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, errInvalidDestination) {
					t.Fatalf("error = %v, want an invalid destination error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []string{c.config.Host, c.config.BearerToken, string(c.config.CAData)}
			if diff := cmp.Diff([]string{tc.wantHost, tc.wantToken, tc.wantCA}, got); diff != "" {
				t.Errorf("host, token, CA (-want +got):\n%s", diff)
			}
			// A second resolve reuses the cluster.
			again, err := cs.resolve(t.Context(), tc.dest, secrets)
			if err != nil || again != c || len(built) != 1 {
				t.Errorf("second resolve built %d clusters (same: %v, err %v), want the cached one", len(built), again == c, err)
			}
		})
	}
}

func TestClustersRebuildOnSecretChange(t *testing.T) {
	stops := 0
	cs := newClusters(&rest.Config{}, func(_ context.Context, _ string, cfg *rest.Config, _ apply.Scope) (*cluster, error) {
		return &cluster{config: cfg, stop: func() { stops++ }}, nil
	})
	dest := v1alpha1.ApplicationDestination{Name: "prod"}
	first, err := cs.resolve(t.Context(), dest, []corev1.Secret{clusterSecret("prod", "https://p", `{"bearerToken":"a"}`, "1")})
	if err != nil {
		t.Fatal(err)
	}
	second, err := cs.resolve(t.Context(), dest, []corev1.Secret{clusterSecret("prod", "https://p", `{"bearerToken":"b"}`, "2")})
	if err != nil {
		t.Fatal(err)
	}
	if first == second || second.config.BearerToken != "b" || stops != 1 {
		t.Errorf("after the Secret changed: rebuilt %v, token %q, old caches stopped %d; want rebuilt, b, 1", first != second, second.config.BearerToken, stops)
	}
	cs.stop()
	if stops != 2 {
		t.Errorf("stop stopped %d caches in total, want 2", stops)
	}
}

// TestClustersScope: a cluster Secret's namespaces (comma-separated, blank
// entries dropped) and clusterResources ("true" only) say what of the
// cluster the engine manages, as Argo CD's SecretToCluster reads them; a
// Secret of the in-cluster server counts whatever its name, and a change
// of it rebuilds the cluster with the new scope.
func TestClustersScope(t *testing.T) {
	scoped := func(name, server, namespaces, clusterResources, version string) corev1.Secret {
		s := clusterSecret(name, server, `{"bearerToken":"t"}`, version)
		s.Data["namespaces"], s.Data["clusterResources"] = []byte(namespaces), []byte(clusterResources)
		return s
	}
	tests := []struct {
		name             string
		dest             v1alpha1.ApplicationDestination
		secrets          []corev1.Secret
		namespaces       []string
		clusterResources bool
	}{
		{name: "no Secret", dest: v1alpha1.ApplicationDestination{Server: InClusterServer}},
		{name: "no namespaces", dest: v1alpha1.ApplicationDestination{Name: "prod"},
			secrets: []corev1.Secret{scoped("prod", "https://p", "", "true", "1")}, clusterResources: true},
		{name: "namespaces, blanks dropped", dest: v1alpha1.ApplicationDestination{Name: "prod"},
			secrets: []corev1.Secret{scoped("prod", "https://p", " web, ,billing ,", "True", "1")}, namespaces: []string{"web", "billing"}},
		{name: "the in-cluster server's Secret under another name", dest: v1alpha1.ApplicationDestination{Name: InClusterName},
			secrets: []corev1.Secret{scoped("local", InClusterServer, "web", "true", "1")}, namespaces: []string{"web"}, clusterResources: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := newClusters(&rest.Config{}, func(_ context.Context, _ string, cfg *rest.Config, _ apply.Scope) (*cluster, error) {
				return &cluster{config: cfg}, nil
			})
			defer cs.stop()
			c, err := cs.resolve(t.Context(), tc.dest, tc.secrets)
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(c.scope.Namespaces, tc.namespaces) || c.scope.ClusterResources != tc.clusterResources {
				t.Errorf("namespaces %q, clusterResources %t; want %q, %t", c.scope.Namespaces, c.scope.ClusterResources, tc.namespaces, tc.clusterResources)
			}
		})
	}

	cs := newClusters(&rest.Config{}, func(_ context.Context, _ string, cfg *rest.Config, _ apply.Scope) (*cluster, error) {
		return &cluster{config: cfg}, nil
	})
	defer cs.stop()
	dest := v1alpha1.ApplicationDestination{Server: InClusterServer}
	for _, step := range []struct {
		secrets    []corev1.Secret
		namespaces []string
	}{
		{nil, nil},
		{[]corev1.Secret{scoped("local", InClusterServer, "web", "", "1")}, []string{"web"}},
		{[]corev1.Secret{scoped("local", InClusterServer, "web,billing", "", "2")}, []string{"web", "billing"}},
		{nil, nil},
	} {
		c, err := cs.resolve(t.Context(), dest, step.secrets)
		if err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(c.scope.Namespaces, step.namespaces) {
			t.Errorf("in-cluster with %d Secrets: namespaces %q, want %q", len(step.secrets), c.scope.Namespaces, step.namespaces)
		}
	}
}

// TestApplicationsOfCluster: a cluster Secret's change is compared at once
// by the served Applications whose destination names its cluster, by
// server (a trailing slash aside) or by name; in-cluster counts for a
// Secret of the in-cluster server; a Secret without a server matches no
// destination given by name.
func TestApplicationsOfCluster(t *testing.T) {
	app := func(ns, name string, dest v1alpha1.ApplicationDestination) *v1alpha1.Application {
		return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.ApplicationSpec{Destination: dest}}
	}
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(
		app("argocd", "by-server", v1alpha1.ApplicationDestination{Server: "https://prod.example.com/"}),
		app("argocd", "by-name", v1alpha1.ApplicationDestination{Name: "prod"}),
		app("argocd", "other", v1alpha1.ApplicationDestination{Name: "staging"}),
		app("elsewhere", "not-served", v1alpha1.ApplicationDestination{Name: "prod"}),
		app("argocd", "local", v1alpha1.ApplicationDestination{Name: InClusterName}),
		app("argocd", "local-by-server", v1alpha1.ApplicationDestination{Server: InClusterServer}),
	).Build()
	r := &Reconciler{client: c, opts: Options{Namespace: "argocd"}}
	names := func(s corev1.Secret) []string {
		var out []string
		for _, req := range r.applicationsOfCluster(t.Context(), &s) {
			out = append(out, req.Name)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		secret corev1.Secret
		want   []string
	}{
		{clusterSecret("prod", "https://prod.example.com", "{}", "1"), []string{"by-name", "by-server"}},
		{clusterSecret("local", InClusterServer, "{}", "1"), []string{"local", "local-by-server"}},
		{clusterSecret("", "", "{}", "1"), nil},
	} {
		if got := names(tc.secret); !cmp.Equal(got, tc.want) {
			t.Errorf("Secret %q of %q: %v, want %v", tc.secret.Name, tc.secret.Data["server"], got, tc.want)
		}
	}
}
