// Package ui tests the web UI as people use it: `tollgate dev` brings the
// control plane, the webhook, the sync engine and a Git server; `tollgate
// ui` processes serve the UI against it, one behind an authenticating
// proxy (impersonation) and one over HTTPS with bearer-token sign-in; a
// real headless Chromium (Debian's chromium, driven by chromedp) and plain
// HTTP clients use them as alice, whose RBAC covers the argocd namespace
// but not team-b.
package ui

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/certs"
	"github.com/tollgate-dev/tollgate/test/envtest"
)

// The people of the tests and the header the test proxy names them in.
const (
	alice       = "alice"
	userHeader  = "X-Remote-User"
	groupHeader = "X-Remote-Group"
	// otherNS holds an Application alice may not see.
	otherNS = "team-b"
	argoNS  = "argocd"
	// secretNS is exempt from the webhook, and alice may read its Secrets.
	secretNS = "tollgate-system"
	// controllerNS is the (empty) namespace of a second controller that
	// serves the UI (--ui-addr).
	controllerNS = "ui-controller"
)

var (
	// admin reaches the API server as the dev stack's administrator.
	admin client.Client
	// kubeconfig is the administrator's kubeconfig file.
	kubeconfig string
	// proxyUI serves the UI behind the (test's) authenticating proxy;
	// tokenUI over HTTPS with bearer-token sign-in; devUI is tollgate
	// dev's own (--insecure-local); controllerUI a controller's.
	proxyUI, tokenUI, devUI, controllerUI string
	// repoServer is tollgate dev's repo-server, which proxyUI fetches and
	// renders through.
	repoServer string
	// tokenCA trusts tokenUI's certificate.
	tokenCA []byte
	// artifacts is where screenshots are written.
	artifacts string
	// tollgate is the built binary.
	tollgate string
	// gitRoot holds the bare repositories tollgate dev's Git server
	// serves; a test adds one there with gitrepo.Import.
	gitRoot string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tmp, err := os.MkdirTemp("", "tollgate-ui-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	artifacts = cmpOr(os.Getenv("TOLLGATE_UI_ARTIFACTS"), filepath.Join(envtest.RepoRoot(), "bin", "ui-test-artifacts"))
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bin, err := envtest.BuildTollgate(tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tollgate = bin
	kubeconfig = filepath.Join(tmp, "kubeconfig")
	gitRoot = filepath.Join(tmp, "data", "git")
	dev := exec.CommandContext(ctx, bin, "dev", "--data-dir", filepath.Join(tmp, "data"), "--write-kubeconfig", kubeconfig,
		"--tools-dir", envtest.BinaryDir(), "--api-port", "0", "--git-port", "0", "--webhook-port", "0", "--ui-port", "0")
	dev.Dir = envtest.RepoRoot()
	dev.Cancel = func() error { return dev.Process.Signal(syscall.SIGINT) }
	dev.WaitDelay = 30 * time.Second
	devLog := filepath.Join(tmp, "dev.log")
	lines, err := startLogged(dev, devLog)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tollgate dev:", err)
		return 1
	}
	// Stop every process on the way out: cancel (SIGINT to tollgate dev,
	// SIGTERM to the UIs), then wait until each exited.
	defer func() {
		cancel()
		for _, done := range exited {
			<-done
		}
	}()
	if repoServer, err = waitForMatch(lines, regexp.MustCompile(`repo-server on (\S+) `), ""); err != nil {
		fmt.Fprintf(os.Stderr, "tollgate dev: %v\n%s", err, readFile(devLog))
		return 1
	}
	if devUI, err = waitForMatch(lines, regexp.MustCompile(`web UI on (http://\S+),`), "tollgate dev: ready."); err != nil {
		fmt.Fprintf(os.Stderr, "tollgate dev: %v\n%s", err, readFile(devLog))
		return 1
	}
	if admin, err = newAdmin(kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := setUp(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "set up:", err)
		return 1
	}
	common := []string{"ui", "--kubeconfig", kubeconfig, "--namespace", argoNS, "--application-namespaces", otherNS, "--allow-insecure-repos", "--addr", "127.0.0.1:0"}
	// The proxy UI fetches and renders through the repo-server (its
	// certificate's Secret is in tollgate-system); the token UI in process.
	proxy := exec.CommandContext(ctx, bin, append(common, "--auth-proxy-header", userHeader, "--auth-proxy-groups-header", groupHeader,
		"--repo-server", repoServer, "--repo-server-service", "localhost")...)
	proxy.Env = append(os.Environ(), "POD_NAMESPACE="+secretNS)
	if proxyUI, err = startUI(proxy, filepath.Join(tmp, "proxy-ui.log")); err != nil {
		fmt.Fprintln(os.Stderr, "tollgate ui (proxy):", err)
		return 1
	}
	certFile, keyFile, err := writeServingCert(tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	token := exec.CommandContext(ctx, bin, append(common, "--tls-cert-file", certFile, "--tls-key-file", keyFile)...)
	if tokenUI, err = startUI(token, filepath.Join(tmp, "token-ui.log")); err != nil {
		fmt.Fprintln(os.Stderr, "tollgate ui (token):", err)
		return 1
	}
	tokenUI = strings.Replace(tokenUI, "127.0.0.1", "localhost", 1)
	ctrl := exec.CommandContext(ctx, bin, "controller", "--kubeconfig", kubeconfig, "--namespace", controllerNS, "--sharding", "none",
		"--metrics-addr", "0", "--health-addr", "0", "--webhook-addr", "0", "--applicationsets=false", "--notifications=false",
		"--ui-addr", "127.0.0.1:0", "--insecure-local")
	if controllerUI, err = startUI(ctrl, filepath.Join(tmp, "controller.log")); err != nil {
		fmt.Fprintln(os.Stderr, "tollgate controller --ui-addr:", err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		for _, f := range []string{"proxy-ui.log", "token-ui.log", "controller.log"} {
			fmt.Fprintf(os.Stderr, "---- %s\n%s", f, readFile(filepath.Join(tmp, f)))
		}
	}
	return code
}

// exited holds a channel per started process, closed when it exited.
var exited []<-chan struct{}

// startLogged starts cmd with its output in file and returns its lines.
func startLogged(cmd *exec.Cmd, file string) (<-chan string, error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(io.TeeReader(pr, f))
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody is reading any more
			}
		}
		close(lines)
		f.Close()
	}()
	done := make(chan struct{})
	exited = append(exited, done)
	go func() { _ = cmd.Wait(); pw.Close(); close(done) }()
	return lines, nil
}

// waitForMatch returns re's first group from the lines, once the line
// starting with ready has been seen too ("" waits for re only).
func waitForMatch(lines <-chan string, re *regexp.Regexp, ready string) (string, error) {
	var got string
	timeout := time.After(10 * time.Minute)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return "", errors.New("exited before it was ready")
			}
			if m := re.FindStringSubmatch(line); m != nil && got == "" {
				got = m[1]
			}
			if got != "" && (ready == "" || strings.HasPrefix(line, ready)) {
				return got, nil
			}
		case <-timeout:
			return "", errors.New("not ready within 10 minutes")
		}
	}
}

func startUI(cmd *exec.Cmd, log string) (string, error) {
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	lines, err := startLogged(cmd, log)
	if err != nil {
		return "", err
	}
	addr, err := waitForMatch(lines, regexp.MustCompile(`serving on (\S+) `), "")
	if err != nil {
		return "", fmt.Errorf("%w\n%s", err, readFile(log))
	}
	return addr, nil
}

func readFile(name string) string {
	b, _ := os.ReadFile(name)
	return string(b)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func newAdmin(kubeconfig string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// writeServingCert writes a certificate for localhost and its key.
func writeServingCert(dir string) (string, string, error) {
	now := time.Now()
	ca, err := certs.CreateCA(now, time.Hour, rand.Reader)
	if err != nil {
		return "", "", err
	}
	kp, err := certs.CreateServing(ca, []string{"localhost"}, now, time.Hour, rand.Reader)
	if err != nil {
		return "", "", err
	}
	tokenCA = ca.CertPEM
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	return cert, key, errors.Join(os.WriteFile(cert, kp.CertPEM, 0o600), os.WriteFile(key, kp.KeyPEM, 0o600))
}

// setUp gives alice her RBAC (Applications and AppProjects of argocd, and
// what the guestbook-dev Application deploys, Secrets included), creates
// an Application in team-b she may not see, and one the gate refuses.
func setUp(ctx context.Context) error {
	// guestbook-dev's namespace is created by its first sync.
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		return admin.Get(ctx, client.ObjectKey{Name: "guestbook-dev"}, &corev1.Namespace{}) == nil, nil
	}); err != nil {
		return fmt.Errorf("namespace guestbook-dev never appeared: %w", err)
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: otherNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: controllerNS}},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: "ui-test-apps"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"argoproj.io"}, Resources: []string{"applications"}, Verbs: []string{"get", "list", "watch", "patch"}},
				{APIGroups: []string{"argoproj.io"}, Resources: []string{"appprojects"}, Verbs: []string{"get", "list"}},
			},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: "ui-test-apps"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "ui-test-apps"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: alice}},
		},
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "ui-test-view"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"", "apps", "batch"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
			},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "guestbook-dev", Name: "ui-test-view"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "ui-test-view"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: alice}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: "ui-test-view"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "ui-test-view"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: alice}},
		},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: "ui-test-token"}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: "ui-test-token"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "ui-test-apps"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: argoNS, Name: "ui-test-token"}},
		},
	}
	for _, o := range objs {
		if err := admin.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// get fetches url from ui as user (none: no proxy header).
func get(t *testing.T, url, user string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.Header.Set(userHeader, user)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
