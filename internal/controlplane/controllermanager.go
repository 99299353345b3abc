package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// controllers are the kube-controller-manager controllers a control plane
// without real nodes runs: the defaults but the node lifecycle (it would
// taint and evict the Pods of a node whose kubelet stopped) and node IPAM
// (it needs a cluster CIDR).
const controllers = "*,-node-lifecycle-controller,-node-ipam-controller"

// process is a child process with its log file.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // set before done closes
	log  string
	tmp  string // removed by stop when set
}

// startControllerManager runs kube-controller-manager as an administrator
// and waits until its controllers act: the service-account controller has
// created the default ServiceAccount of the default namespace.
func (e *Env) startControllerManager(opts Options) (*process, error) {
	p, err := e.launchControllerManager(opts.BinaryDir, opts.DataDir, controllers)
	if err != nil {
		return nil, err
	}
	if err := p.waitReady(e.Client, e.ControlPlaneStartTimeout); err != nil {
		_ = p.stop(e.ControlPlaneStopTimeout)
		return nil, err
	}
	return p, nil
}

// StartControllers runs kube-controller-manager from binaryDir with only
// the named controllers (e.g. serviceaccount-token-controller), for a test
// that needs what one controller does without the side effects of the
// others on a control plane other tests share. It does not wait for them
// to act: the caller waits for what it needs. stop ends the process.
func (e *Env) StartControllers(binaryDir string, names ...string) (stop func() error, err error) {
	if len(names) == 0 {
		return nil, errors.New("start kube-controller-manager: no controllers named")
	}
	p, err := e.launchControllerManager(binaryDir, "", strings.Join(names, ","))
	if err != nil {
		return nil, err
	}
	return func() error { return p.stop(e.ControlPlaneStopTimeout) }, nil
}

// launchControllerManager starts kube-controller-manager, as an
// administrator, with the controllers list; its files go to dir (a
// temporary directory when empty).
func (e *Env) launchControllerManager(binaryDir, dir, controllers string) (*process, error) {
	p := &process{}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "tollgate-kcm-")
		if err != nil {
			return nil, fmt.Errorf("start kube-controller-manager: %w", err)
		}
		dir, p.tmp = tmp, tmp
	}
	kc, err := e.KubeConfig("system:kube-controller-manager")
	if err != nil {
		p.cleanup()
		return nil, fmt.Errorf("start kube-controller-manager: %w", err)
	}
	apiserver := e.ControlPlane.GetAPIServer()
	files := map[string][]byte{"kube-controller-manager.kubeconfig": kc, "apiserver-ca.crt": apiserver.SecureServing.CA}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			p.cleanup()
			return nil, fmt.Errorf("start kube-controller-manager: %w", err)
		}
	}
	p.log = filepath.Join(dir, "kube-controller-manager.log")
	logFile, err := os.Create(p.log)
	if err != nil {
		p.cleanup()
		return nil, fmt.Errorf("start kube-controller-manager: %w", err)
	}
	defer logFile.Close()
	kubeconfig := filepath.Join(dir, "kube-controller-manager.kubeconfig")
	p.cmd = exec.Command(filepath.Join(binaryDir, ControllerManager),
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--secure-port=0",
		"--leader-elect=false",
		"--controllers="+controllers,
		"--use-service-account-credentials=false",
		"--service-account-private-key-file="+filepath.Join(apiserver.CertDir, "sa-signer.key"),
		"--root-ca-file="+filepath.Join(dir, "apiserver-ca.crt"),
		"--concurrent-gc-syncs=5",
	)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = ChildProcAttr()
	if err := p.cmd.Start(); err != nil {
		p.cleanup()
		return nil, fmt.Errorf("start kube-controller-manager: %w", err)
	}
	p.done = make(chan struct{})
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// waitReady polls for the default ServiceAccount, which only a running
// controller manager creates, and fails early when the process exits.
func (p *process) waitReady(c client.Client, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case <-p.done:
			return false, fmt.Errorf("exited: %v", p.err)
		default:
		}
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("start kube-controller-manager: %w; its log %s ends:\n%s", err, p.log, tail(p.log, 20))
	}
	return nil
}

// stop sends SIGTERM, then SIGKILL after timeout, and removes the temporary
// directory.
func (p *process) stop(timeout time.Duration) error {
	defer p.cleanup()
	if p.cmd == nil || p.cmd.Process == nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return errors.New("stop kube-controller-manager: killed after " + timeout.String())
}

func (p *process) cleanup() {
	if p.tmp != "" {
		_ = os.RemoveAll(p.tmp)
	}
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
