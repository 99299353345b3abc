package argocd

import (
	"context"
	"errors"
	"testing"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// countingReader counts the Gets of a client.Reader.
type countingReader struct {
	client.Reader
	gets int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// TestCredentials: the known hosts are read once, when the first ssh
// repository needs them, and handed to that repository's credentials and
// every later one's; https repositories read nothing.
func TestCredentials(t *testing.T) {
	const hosts = "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: KnownHostsConfigMap, Namespace: "argocd"}, Data: map[string]string{KnownHostsKey: hosts}}
	repo := func(name, url string) corev1.Secret {
		return corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd", Labels: map[string]string{SecretTypeLabel: "repository"}},
			Data:       map[string][]byte{"url": []byte(url), "sshPrivateKey": []byte("key")},
		}
	}
	r := &countingReader{Reader: fake.NewClientBuilder().WithObjects(cm).Build()}
	c := &Credentials{Reader: r, Namespace: "argocd", Secrets: []corev1.Secret{
		repo("a", "git@github.com:org/a.git"), repo("b", "ssh://git@github.com/org/b.git"),
	}}
	if _, err := c.For(t.Context(), "https://github.com/org/web.git", "default"); err != nil || r.gets != 0 {
		t.Fatalf("https repository: %d reads, error %v; want none", r.gets, err)
	}
	for _, url := range []string{"git@github.com:org/a.git", "ssh://git@github.com/org/b.git"} {
		got, err := c.For(t.Context(), url, "default")
		if err != nil {
			t.Fatal(err)
		}
		if string(got.SSHKnownHosts) != hosts {
			t.Errorf("%s: known hosts %q, want the ConfigMap's", url, got.SSHKnownHosts)
		}
	}
	if r.gets != 1 {
		t.Errorf("known hosts read %d times, want once", r.gets)
	}

	// A missing ConfigMap is no known hosts, read once too.
	r = &countingReader{Reader: fake.NewClientBuilder().Build()}
	c = &Credentials{Reader: r, Namespace: "argocd"}
	for range 2 {
		if _, err := c.For(t.Context(), "git@github.com:org/a.git", "default"); err != nil {
			t.Fatal(err)
		}
	}
	if r.gets != 1 {
		t.Errorf("missing known hosts read %d times, want once", r.gets)
	}
}

// failing answers every read with err.
type failing struct {
	client.Reader
	err error
}

func (f failing) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return f.err
}

// TestProject: readers are asked in turn while they answer NotFound (a
// cache, then the API server); none has it: nil; another error ends the
// lookup, naming the project.
func TestProject(t *testing.T) {
	s := testutil.Scheme(t)
	team := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: "argocd"}}
	empty := fake.NewClientBuilder().WithScheme(s).Build()
	live := fake.NewClientBuilder().WithScheme(s).WithObjects(team).Build()

	p, err := Project(t.Context(), "argocd", "team", []client.Reader{empty, live})
	if err != nil || p == nil || p.Name != "team" {
		t.Fatalf("Project from the second reader = %v, %v; want team", p, err)
	}
	if p, err = Project(t.Context(), "argocd", "other", []client.Reader{empty, live}); err != nil || p != nil {
		t.Errorf("missing project = %v, %v; want nil, nil", p, err)
	}
	if p, err = Project(t.Context(), "elsewhere", "team", []client.Reader{live}); err != nil || p != nil {
		t.Errorf("project of another namespace = %v, %v; want nil, nil", p, err)
	}
	down := failing{err: errors.New("connection refused")}
	if _, err = Project(t.Context(), "argocd", "team", []client.Reader{down, live}); err == nil || err.Error() != "get appproject team: connection refused" {
		t.Errorf("a failing cache: error = %v, want it named and the lookup ended", err)
	}
}
