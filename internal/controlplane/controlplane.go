// Package controlplane starts a real Kubernetes control plane on loopback:
// etcd and kube-apiserver through controller-runtime's envtest, and
// optionally kube-controller-manager (garbage collection, namespace
// deletion, ReplicaSets, Jobs), all from the binaries `make tools` builds
// into bin/k8s. The integration tests (test/envtest) and `tollgate dev` share
// it. It runs no scheduler and no kubelet: nothing a Pod asks for runs.
package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Binaries are the control-plane programs Start runs, by file name.
const (
	APIServer         = "kube-apiserver"
	Etcd              = "etcd"
	ControllerManager = "kube-controller-manager"
)

// ErrNoBinaries is returned by Start when a control-plane binary is missing.
var ErrNoBinaries = errors.New("control-plane binaries not found: run `make tools` (or `make test`, which builds them)")

// Options configures Start.
type Options struct {
	// BinaryDir holds kube-apiserver, etcd and kube-controller-manager.
	BinaryDir string
	// CRDDirectoryPaths (directories or files) are installed before Start
	// returns.
	CRDDirectoryPaths []string
	// Webhooks are registered with the API server; the caller serves them at
	// the host, port and certificates in Env.WebhookInstallOptions.
	Webhooks crenvtest.WebhookInstallOptions
	// Scheme for the client; default client-go's scheme.
	Scheme *runtime.Scheme
	// DataDir keeps etcd's data (DataDir/etcd), the API server's
	// certificates (DataDir/pki) and the controller manager's log. Empty:
	// temporary directories, removed by Stop.
	DataDir string
	// APIServerPort is the API server's secure port on 127.0.0.1; 0 picks a
	// free one.
	APIServerPort int
	// ControllerManager also runs kube-controller-manager.
	ControllerManager bool
}

// Env is a running control plane.
type Env struct {
	*crenvtest.Environment
	// Config reaches the API server as an administrator (system:masters).
	Config *rest.Config
	// Client is a controller-runtime client built from Config.
	Client client.Client

	kcm *process
	// dataDir is Options.DataDir.
	dataDir string
}

// Start starts etcd, kube-apiserver and, when asked, kube-controller-manager,
// and installs CRDs and webhooks. It fails with ErrNoBinaries, naming the
// missing file, before starting anything.
func Start(opts Options) (*Env, error) {
	need := []string{APIServer, Etcd}
	if opts.ControllerManager {
		need = append(need, ControllerManager)
	}
	for _, b := range need {
		if _, err := os.Stat(filepath.Join(opts.BinaryDir, b)); err != nil {
			return nil, fmt.Errorf("%w (looked for %s)", ErrNoBinaries, filepath.Join(opts.BinaryDir, b))
		}
	}
	scheme := opts.Scheme
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	env := &crenvtest.Environment{
		BinaryAssetsDirectory: opts.BinaryDir,
		CRDInstallOptions: crenvtest.CRDInstallOptions{
			Paths:              opts.CRDDirectoryPaths,
			ErrorIfPathMissing: true,
			Scheme:             scheme,
		},
		WebhookInstallOptions:    opts.Webhooks,
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	apiserver := env.ControlPlane.GetAPIServer()
	if opts.DataDir != "" {
		pki, data := filepath.Join(opts.DataDir, "pki"), filepath.Join(opts.DataDir, "etcd")
		for _, d := range []string{pki, data} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return nil, fmt.Errorf("create data directory: %w", err)
			}
		}
		apiserver.CertDir = pki
		env.ControlPlane.Etcd = &crenvtest.Etcd{DataDir: data}
	}
	if opts.APIServerPort != 0 {
		apiserver.SecureServing.Address = "127.0.0.1"
		apiserver.SecureServing.Port = fmt.Sprint(opts.APIServerPort)
	}
	// kube-apiserver 1.37 refuses to start without a default route unless it
	// is told where it lives and not to reconcile the kubernetes endpoints.
	args := apiserver.Configure()
	args.Set("advertise-address", "127.0.0.1")
	args.Set("endpoint-reconciler-type", "none")
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	e := &Env{Environment: env, dataDir: opts.DataDir}
	if err := e.init(cfg, scheme, opts); err != nil {
		_ = e.Stop()
		return nil, err
	}
	return e, nil
}

func (e *Env) init(cfg *rest.Config, scheme *runtime.Scheme, opts Options) error {
	cfg.QPS, cfg.Burst = 200, 400
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	e.Config, e.Client = cfg, c
	if !opts.ControllerManager {
		return nil
	}
	e.kcm, err = e.startControllerManager(opts)
	return err
}

// KubeConfig returns a kubeconfig for an administrator (system:masters),
// for kubectl and the other programs of a development stack.
func (e *Env) KubeConfig(user string) ([]byte, error) {
	u, err := e.AddUser(crenvtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", user, err)
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig for %s: %w", user, err)
	}
	return kc, nil
}

// StopAPIServer stops kube-apiserver alone, as an outage of the API server
// with etcd still up: SIGTERM, and SIGKILL a second later (open watches
// would hold a graceful shutdown for a minute). StartAPIServer starts it
// again on the same address. Both need Options.DataDir, so that its
// certificates outlive it.
func (e *Env) StopAPIServer() error {
	if e.dataDir == "" {
		return errors.New("stop kube-apiserver: a restart needs Options.DataDir")
	}
	apiserver := e.ControlPlane.APIServer
	graceful := apiserver.StopTimeout
	apiserver.StopTimeout = time.Second
	err := apiserver.Stop()
	apiserver.StopTimeout = graceful
	if err != nil && !strings.Contains(err.Error(), "timeout waiting for process") {
		return fmt.Errorf("stop kube-apiserver: %w", err)
	}
	// Killed, it releases its port as it exits.
	time.Sleep(500 * time.Millisecond)
	return nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer.
func (e *Env) StartAPIServer() error {
	if err := e.ControlPlane.APIServer.Start(); err != nil {
		return fmt.Errorf("start kube-apiserver: %w", err)
	}
	return nil
}

// Stop stops kube-controller-manager, then the API server and etcd.
func (e *Env) Stop() error {
	var errs []error
	if e.kcm != nil {
		errs = append(errs, e.kcm.stop(e.ControlPlaneStopTimeout))
	}
	errs = append(errs, e.Environment.Stop())
	return errors.Join(errs...)
}
