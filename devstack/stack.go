// Package devstack runs the whole product on one machine for `tollgate dev`
// and `make demo`: a real control plane (etcd, kube-apiserver and
// kube-controller-manager from the `make tools` cache), a simulated kubelet
// (nothing really runs: Pods are marked Running and Ready, Job Pods
// Succeeded), a real Git server on loopback serving a repository made from
// examples/config-repo, and the CRDs and webhook configuration of config/.
// The caller runs the webhook and the sync engine against it (cmd/tollgate
// dev); Install then applies the AppProject and the Applications, StartStory
// tells what the engine does, and Tour runs the scripted tour.
//
// It is development tooling: no authentication on the Git server,
// everything on loopback, and it runs git and the control-plane binaries as
// child processes.
package devstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/devstack/gitrepo"
	"github.com/tollgate-dev/tollgate/devstack/kubelet"
	"github.com/tollgate-dev/tollgate/internal/controlplane"
)

// The identities of the stack's programs. The controller and the webhook
// use the names their Deployments have in a real cluster, so the webhook's
// default configuration (sync users, exempt users) holds unchanged.
const (
	ArgoCDNamespace   = "argocd"
	TollgateNamespace = "tollgate-system"
	ControllerUser    = "system:serviceaccount:" + TollgateNamespace + ":tollgate-controller"
	WebhookUser       = "system:serviceaccount:" + TollgateNamespace + ":tollgate-webhook"
	// AdminUser is the user of .tollgate/kubeconfig: an administrator the
	// webhook judges like any other.
	AdminUser = "tollgate-dev-admin"
	// RepoName is the name of the served repository.
	RepoName = "example-config"
	// ExampleRepoURL is the repoURL examples/config-repo's Applications and
	// AppProject name; Start rewrites it to the served repository's URL.
	ExampleRepoURL = "https://github.com/tollgate-dev/example-config.git"
)

// Options configures Start. DefaultOptions fills them for the repository
// checkout in the working directory.
type Options struct {
	// Root is the repository checkout: config/crd/bases, config/dev and
	// config/webhook are read from it, and .tollgate/kubeconfig written to it.
	Root string
	// Examples holds config-repo/ (imported into the Git server) and bad/.
	Examples string
	// ToolsDir holds etcd, kube-apiserver and kube-controller-manager.
	ToolsDir string
	// DataDir holds etcd's data, certificates, kubeconfigs and the Git
	// repository. Empty: a new temporary directory.
	DataDir string
	// Keep keeps DataDir and Kubeconfig when the stack stops.
	Keep bool
	// Kubeconfig is where the administrator's kubeconfig is written,
	// relative to Root unless absolute (default .tollgate/kubeconfig).
	Kubeconfig string
	// Ports on 127.0.0.1; 0 picks a free one (tests).
	APIPort, GitPort, WebhookPort int
	// UIPort is the web UI's port on 127.0.0.1, which the caller serves
	// (0: a free one).
	UIPort int
}

// DefaultOptions are the options of `tollgate dev` without flags.
func DefaultOptions() Options {
	return Options{
		Root: ".", Examples: "examples", ToolsDir: filepath.Join("bin", "k8s"),
		Kubeconfig: filepath.Join(".tollgate", "kubeconfig"),
		APIPort:    16443, GitPort: 18080, WebhookPort: 19443, UIPort: 18081,
	}
}

// Stack is a running development stack.
type Stack struct {
	opts Options
	// Env is the control plane.
	Env *controlplane.Env
	// Client reaches the API server as AdminUser.
	Client client.Client
	// Kubeconfig is AdminUser's kubeconfig file (.tollgate/kubeconfig).
	Kubeconfig string
	// ControllerKubeconfig and WebhookKubeconfig are the files the sync
	// engine and the webhook connect with.
	ControllerKubeconfig, WebhookKubeconfig string
	// WebhookPort and WebhookCertDir are where the webhook serves: the API
	// server calls https://127.0.0.1:WebhookPort/validate, trusting the
	// certificate in WebhookCertDir (tls.crt, tls.key).
	WebhookPort    int
	WebhookCertDir string
	// Repo is the served repository.
	Repo *gitrepo.Repo
	// UIURL is where the caller serves the web UI, "" when it does not;
	// the tour points at it.
	UIURL string

	repoURL   string
	story     *story
	dataDir   string
	removeDir bool // dataDir was created by Start
	git       *http.Server
	// repoServer is the repo-server child, once started.
	repoServer *repoServer
	cancel     context.CancelFunc
	done       chan struct{} // closed when the kubelet returned
}

// Start starts the control plane and the Git server and imports the
// example repository. The caller then calls StartKubelet, runs the webhook
// and the controller, calls Install, and Stop at the end. It refuses to start
// when a binary is missing or a port is taken, before starting anything.
func Start(ctx context.Context, opts Options, log func(format string, args ...any)) (_ *Stack, err error) {
	if err := preflight(opts); err != nil {
		return nil, err
	}
	s := &Stack{opts: opts}
	defer func() {
		if err != nil {
			_ = s.Stop()
		}
	}()
	if err := s.makeDataDir(); err != nil {
		return nil, err
	}
	gitSrv, err := gitrepo.NewServer(filepath.Join(s.dataDir, "git"))
	if err != nil {
		return nil, err
	}
	// The Git server's port is held from the start: the control plane
	// picks the webhook's free port by opening and closing it, and a
	// listener opened after that could be given the same one.
	gitLn, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(s.opts.GitPort)))
	if err != nil {
		return nil, fmt.Errorf("git server: %w", err)
	}
	defer func() {
		if s.git == nil { // not served: the start failed before
			_ = gitLn.Close()
		}
	}()
	log("starting etcd, kube-apiserver and kube-controller-manager (data in %s)", s.dataDir)
	if err := s.startControlPlane(); err != nil {
		return nil, err
	}
	if err := s.writeKubeconfigs(); err != nil {
		return nil, err
	}
	if err := s.createNamespaces(ctx); err != nil {
		return nil, err
	}
	if err := s.startGit(ctx, gitSrv, gitLn); err != nil {
		return nil, err
	}
	log("Git server: %s (clone it, push to it)", s.Repo.URL())
	return s, nil
}

// preflight checks binaries and ports before anything starts.
func preflight(opts Options) error {
	for _, b := range []string{controlplane.Etcd, controlplane.APIServer, controlplane.ControllerManager} {
		p := filepath.Join(opts.ToolsDir, b)
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%w: %s is missing (the first build takes 10-16 minutes)", controlplane.ErrNoBinaries, p)
		}
	}
	if _, err := os.Stat(filepath.Join(opts.Examples, "config-repo")); err != nil {
		return fmt.Errorf("examples: %w (run tollgate dev from the repository checkout, or pass --examples)", err)
	}
	for _, p := range []struct {
		flag string
		port int
	}{{"--api-port", opts.APIPort}, {"--git-port", opts.GitPort}, {"--webhook-port", opts.WebhookPort}} {
		if p.port == 0 {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(p.port)))
		if err != nil {
			return fmt.Errorf("port %d (%s) is taken: %w; stop what uses it or pass another port", p.port, p.flag, err)
		}
		_ = ln.Close()
	}
	return nil
}

func (s *Stack) makeDataDir() error {
	if s.opts.DataDir == "" {
		d, err := os.MkdirTemp("", "tollgate-dev-")
		if err != nil {
			return fmt.Errorf("create data directory: %w", err)
		}
		s.dataDir, s.removeDir = d, true
		return nil
	}
	d, err := filepath.Abs(s.opts.DataDir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
		s.removeDir = true
	}
	for _, name := range dataFiles {
		if _, err := os.Lstat(filepath.Join(d, name)); err == nil {
			return fmt.Errorf("data directory %s holds %s from an earlier run (--keep keeps it to look at, not to start again): remove it or pass another --data-dir", d, name)
		}
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	s.dataDir = d
	return nil
}

func (s *Stack) startControlPlane() error {
	vwc, err := controlplane.ReadWebhookConfiguration(filepath.Join(s.opts.Root, "config", "webhook", "validating_webhook_configuration.yaml"))
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return fmt.Errorf("build scheme: %w", err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return fmt.Errorf("build scheme: %w", err)
	}
	env, err := controlplane.Start(controlplane.Options{
		BinaryDir: s.opts.ToolsDir,
		CRDDirectoryPaths: []string{
			filepath.Join(s.opts.Root, "config", "crd", "bases"),
			filepath.Join(s.opts.Root, "config", "policyreport", "bases"),
			filepath.Join(s.opts.Root, "config", "dev"),
		},
		Webhooks: crenvtest.WebhookInstallOptions{
			ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{vwc},
			LocalServingHost:   "127.0.0.1",
			LocalServingPort:   s.opts.WebhookPort,
		},
		Scheme:            scheme,
		DataDir:           s.dataDir,
		APIServerPort:     s.opts.APIPort,
		ControllerManager: true,
	})
	if err != nil {
		return err
	}
	s.Env = env
	s.WebhookPort = env.WebhookInstallOptions.LocalServingPort
	s.WebhookCertDir = env.WebhookInstallOptions.LocalServingCertDir
	return nil
}

// writeKubeconfigs writes the administrator's kubeconfig to
// .tollgate/kubeconfig and the controller's and webhook's to the data
// directory, and builds the administrator's client.
func (s *Stack) writeKubeconfigs() error {
	s.Kubeconfig = s.opts.Kubeconfig
	if !filepath.IsAbs(s.Kubeconfig) {
		s.Kubeconfig = filepath.Join(s.opts.Root, s.Kubeconfig)
	}
	s.ControllerKubeconfig = filepath.Join(s.dataDir, "controller.kubeconfig")
	s.WebhookKubeconfig = filepath.Join(s.dataDir, "webhook.kubeconfig")
	for path, user := range map[string]string{s.Kubeconfig: AdminUser, s.ControllerKubeconfig: ControllerUser, s.WebhookKubeconfig: WebhookUser} {
		kc, err := s.Env.KubeConfig(user)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("write kubeconfig: %w", err)
		}
		if err := os.WriteFile(path, kc, 0o600); err != nil {
			return fmt.Errorf("write kubeconfig: %w", err)
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	if err != nil {
		return fmt.Errorf("load %s: %w", s.Kubeconfig, err)
	}
	s.Client, err = client.New(cfg, client.Options{Scheme: s.Env.Client.Scheme()})
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	return nil
}

func (s *Stack) createNamespaces(ctx context.Context) error {
	for _, ns := range []string{ArgoCDNamespace, TollgateNamespace} {
		err := s.Env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	return nil
}

// StartKubelet runs the simulated kubelet, as a node (system:nodes), and
// the sealed-secrets stand-in (runSealedSecrets), until Stop; it logs with
// ctx's logger.
func (s *Stack) StartKubelet(ctx context.Context) error {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel, s.done = cancel, make(chan struct{})
	opts := kubelet.DefaultOptions()
	u, err := s.Env.AddUser(crenvtest.User{Name: "system:node:" + opts.NodeName, Groups: []string{"system:nodes", "system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("add kubelet user: %w", err)
	}
	cfg := rest.CopyConfig(u.Config())
	if err := runSealedSecrets(ctx, rest.CopyConfig(s.Env.Config)); err != nil {
		return err
	}
	go func() {
		defer close(s.done)
		if err := kubelet.Run(ctx, cfg, opts); err != nil {
			fmt.Fprintln(os.Stderr, "tollgate dev: simulated kubelet:", err)
		}
	}()
	return nil
}

// startGit serves the data directory's repositories on ln (loopback) and
// imports examples/config-repo, its repoURLs pointing at the local server.
func (s *Stack) startGit(ctx context.Context, srv *gitrepo.Server, ln net.Listener) error {
	root := filepath.Join(s.dataDir, "git")
	var err error
	s.git = &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.git.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	s.repoURL = base + "/" + RepoName + ".git"
	s.Repo, err = gitrepo.Import(ctx, root, base, RepoName, filepath.Join(s.opts.Examples, "config-repo"), s.rewrite, "Import examples/config-repo")
	if err != nil {
		return fmt.Errorf("git server: %w", err)
	}
	return nil
}

// DataDir is where the stack keeps its state.
func (s *Stack) DataDir() string { return s.dataDir }

// Stop stops everything Start started and, without Options.Keep, removes
// the data directory and .tollgate/kubeconfig.
func (s *Stack) Stop() error {
	var errs []error
	if s.repoServer != nil {
		s.repoServer.stop()
	}
	if s.git != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, s.git.Shutdown(ctx))
		cancel()
	}
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	if s.Env != nil {
		errs = append(errs, s.Env.Stop())
	}
	if !s.opts.Keep {
		if s.Kubeconfig != "" {
			errs = append(errs, ignoreNotExist(os.Remove(s.Kubeconfig)))
			_ = os.Remove(filepath.Dir(s.Kubeconfig)) // only when empty
		}
		errs = append(errs, s.removeData())
	}
	return errors.Join(errs...)
}

// dataFiles are what the stack keeps in its data directory.
var dataFiles = []string{"etcd", "pki", "git", "repo-cache", "repo-server-tls", "repo-server.log", "tollgate.log", "controller.kubeconfig", "webhook.kubeconfig",
	"kube-controller-manager.kubeconfig", "kube-controller-manager.log", "apiserver-ca.crt"}

// removeData removes the data directory when Start created it, else only
// what the stack put into it.
func (s *Stack) removeData() error {
	if s.dataDir == "" {
		return nil
	}
	if s.removeDir {
		return os.RemoveAll(s.dataDir)
	}
	var errs []error
	for _, name := range dataFiles {
		errs = append(errs, os.RemoveAll(filepath.Join(s.dataDir, name)))
	}
	return errors.Join(errs...)
}

func ignoreNotExist(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
