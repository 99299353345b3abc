package devstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/certs"
	"github.com/tollgate-dev/tollgate/internal/controlplane"
)

// The repo-server of the stack: a child process the controller calls at
// RepoServerName:port, with a certificate kept in RepoServerSecret of
// TollgateNamespace, as in config/.
const (
	RepoServerName   = "localhost"
	RepoServerSecret = "tollgate-repo-server-tls"
)

// repoServer is the running repo-server child.
type repoServer struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// StartRepoServer starts `exe repo-server` as a child process with an empty
// environment (no kubeconfig, no token, no HOME: it cannot reach the API
// server) serving HTTPS on a free loopback port, its Git cache in the data
// directory. Its certificate is issued first into RepoServerSecret with
// the certs package, as the controller does at start, and written to the
// data directory for the child. It returns the address the controller
// calls and the child's process ID.
func (s *Stack) StartRepoServer(ctx context.Context, exe string) (addr string, pid int, err error) {
	certDir := filepath.Join(s.dataDir, "repo-server-tls")
	if err := s.writeRepoServerCert(ctx, certDir); err != nil {
		return "", 0, err
	}
	// The webhook's port is chosen, but not yet listened on, when the
	// repo-server starts: never hand it out twice.
	port, err := freePort(s.WebhookPort)
	if err != nil {
		return "", 0, fmt.Errorf("repo-server: %w", err)
	}
	logFile, err := os.Create(filepath.Join(s.dataDir, "repo-server.log"))
	if err != nil {
		return "", 0, fmt.Errorf("repo-server: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(exe, "repo-server", "--addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		"--cert-dir", certDir, "--repo-cache", filepath.Join(s.dataDir, "repo-cache"), "--allow-insecure-repos", "--metrics-addr", "0")
	cmd.Env = []string{}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = controlplane.ChildProcAttr()
	if err := cmd.Start(); err != nil {
		return "", 0, fmt.Errorf("start repo-server: %w", err)
	}
	rs := &repoServer{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(rs.done)
	}()
	s.repoServer = rs
	if err := waitListening(ctx, port, rs.done); err != nil {
		return "", 0, fmt.Errorf("repo-server (log: %s): %w", logFile.Name(), err)
	}
	return net.JoinHostPort(RepoServerName, strconv.Itoa(port)), cmd.Process.Pid, nil
}

// writeRepoServerCert makes sure RepoServerSecret holds a CA and a serving
// certificate for RepoServerName and writes tls.crt, tls.key and ca.crt
// (the CA the controller's client certificate must chain to) to dir.
func (s *Stack) writeRepoServerCert(ctx context.Context, dir string) error {
	m := certs.NewManager(s.Client, certs.Options{Namespace: TollgateNamespace, SecretName: RepoServerSecret, ServiceName: RepoServerName})
	if _, err := m.Ensure(ctx); err != nil {
		return fmt.Errorf("repo-server certificate: %w", err)
	}
	var sec corev1.Secret
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: TollgateNamespace, Name: RepoServerSecret}, &sec); err != nil {
		return fmt.Errorf("repo-server certificate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("repo-server certificate: %w", err)
	}
	for _, k := range []string{certs.SecretKeyCert, certs.SecretKeyKey, certs.SecretKeyCACert} {
		if err := os.WriteFile(filepath.Join(dir, k), sec.Data[k], 0o600); err != nil {
			return fmt.Errorf("repo-server certificate: %w", err)
		}
	}
	return nil
}

// stop ends the child: SIGTERM, then SIGKILL after 5 s.
func (r *repoServer) stop() {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

// freePort returns a loopback port nothing listens on and that is not
// one of taken (ports chosen for something that listens later).
func freePort(taken ...int) (int, error) {
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if !slices.Contains(taken, port) {
			return port, nil
		}
	}
}

// waitListening waits until something accepts connections on the loopback
// port, the child exits (done) or 30 s pass.
func waitListening(ctx context.Context, port int, done <-chan struct{}) error {
	deadline := time.After(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			return c.Close()
		}
		select {
		case <-done:
			return errors.New("it exited at start")
		case <-deadline:
			return fmt.Errorf("nothing listens on port %d after 30s", port)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
