// Package envtest starts a real kube-apiserver and etcd for integration tests
// (internal/controlplane, over controller-runtime's envtest), using the
// binaries `make tools` builds from source into bin/k8s. One control plane serves a whole test
// package (start it in TestMain); each test gets its own namespace.
package envtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/tollgate-dev/tollgate/internal/controlplane"
)

// Options configures Start.
type Options struct {
	// CRDDirectoryPaths are installed before Start returns. Relative paths are
	// taken from the repository root. Default: config/crd/bases when it exists.
	CRDDirectoryPaths []string
	// Webhooks are registered with the API server; the test serves them at
	// the host, port and certificates in Env.WebhookInstallOptions.
	Webhooks crenvtest.WebhookInstallOptions
	// Scheme for the client; default client-go's scheme.
	Scheme *runtime.Scheme
	// DataDir keeps etcd's data and the API server's certificates, so that
	// a test can stop and start the API server (StopAPIServer); empty:
	// temporary directories.
	DataDir string
}

// Env is a running control plane.
type Env struct {
	*controlplane.Env
	// Root is the repository root.
	Root string
}

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// BinaryDir returns where the control-plane binaries are looked up:
// $KUBEBUILDER_ASSETS when set, else bin/k8s in the repository.
func BinaryDir() string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(), "bin", "k8s")
}

// BuildTollgate builds ./cmd/tollgate into dir and returns the binary's
// path, for the tests that run it as a user does.
func BuildTollgate(dir string) (string, error) {
	bin := filepath.Join(dir, "tollgate")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/tollgate")
	cmd.Dir = RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
}

// ErrNoBinaries is returned by Start when kube-apiserver or etcd is missing.
var ErrNoBinaries = controlplane.ErrNoBinaries

// Start starts etcd and kube-apiserver and installs CRDs and webhooks.
func Start(opts Options) (*Env, error) {
	root := RepoRoot()
	crds := opts.CRDDirectoryPaths
	if crds == nil {
		if def := filepath.Join(root, "config", "crd", "bases"); isDir(def) {
			crds = []string{def}
		}
	}
	for i, p := range crds {
		if !filepath.IsAbs(p) {
			crds[i] = filepath.Join(root, p)
		}
	}
	cp, err := controlplane.Start(controlplane.Options{
		BinaryDir:         BinaryDir(),
		CRDDirectoryPaths: crds,
		Webhooks:          opts.Webhooks,
		Scheme:            opts.Scheme,
		DataDir:           opts.DataDir,
	})
	if err != nil {
		return nil, err
	}
	return &Env{Env: cp, Root: root}, nil
}

// Run is a TestMain helper: it starts the control plane, runs the tests and
// stops it. A missing binary fails the package with a message naming `make
// tools`; it never skips.
func Run(m *testing.M, opts Options, setup func(*Env) error) int {
	env, err := Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "envtest: stop:", err)
		}
	}()
	if setup != nil {
		if err := setup(env); err != nil {
			fmt.Fprintln(os.Stderr, "envtest: setup:", err)
			return 1
		}
	}
	return m.Run()
}

// Namespace creates a fresh namespace for t, named after the test, and
// deletes it when the test ends.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	name := strings.ToLower(t.Name())
	name = strings.NewReplacer("/", "-", "_", "-", " ", "-").Replace(name)
	if len(name) > 40 {
		name = name[:40]
	}
	name = strings.Trim(name, "-")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-"}}
	if err := e.Client.Create(t.Context(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Client.Delete(ctx, ns)
	})
	return ns.Name
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
