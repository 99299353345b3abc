package audit_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/certs"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// TestAuditLoop: two webhook replicas run; only the holder of the Lease
// tollgate-audit audits and writes the PolicyReports, every
// --audit-interval; when it stops, the other takes the Lease and audits.
func TestAuditLoop(t *testing.T) {
	s := newScene(t)
	dir := t.TempDir()
	kubeconfig, cfgFile := s.writeFiles(t, dir)
	ca, err := certs.CreateCA(time.Now(), time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	serving, err := certs.CreateServing(ca, []string{"localhost"}, time.Now(), time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{filepath.Join(dir, "tls.crt"): serving.CertPEM, filepath.Join(dir, "tls.key"): serving.KeyPEM}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ns := s.inside + "-tollgate" // the replicas' namespace, for their Lease
	testutil.Create(t, env.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})

	replicas := map[string]*replica{}
	for _, name := range []string{"a", "b"} {
		replicas[name] = startReplica(t, name, dir, "webhook", "--kubeconfig", kubeconfig, "--config", cfgFile,
			"--cert-dir", dir, "--namespace", ns, "--webhook-config-name", s.webhookConfig,
			"--audit-interval", "2s", "--audit-chunk-size", "50", "--health-addr", "0")
	}
	runs := func(name string) float64 { return replicas[name].metric(t, `tollgate_audit_runs_total{outcome="ok"}`) }
	holder := func() string {
		var l coordinationv1.Lease
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "tollgate-audit"}, &l); err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	var leader, follower, identity string
	testutil.Eventually(t, "one replica holds the audit Lease and has audited twice", func() (bool, string) {
		identity = holder()
		switch a, b := runs("a"), runs("b"); {
		case a >= 2 && b == 0:
			leader, follower = "a", "b"
		case b >= 2 && a == 0:
			leader, follower = "b", "a"
		default:
			return false, fmt.Sprintf("runs: a %v, b %v; Lease holder %q", a, b, identity)
		}
		return identity != "", "no Lease holder"
	})
	if got := results(report(t, s.inside)); len(got) != 2 {
		t.Errorf("PolicyReport %s: %v, want the Deployment and the Secret", s.inside, got)
	}
	if v := replicas[leader].metric(t, `tollgate_audit_violations{rule="no-latest-tag",severity="deny"}`); v < 1 {
		t.Errorf("tollgate_audit_violations of no-latest-tag: %v, want at least 1", v)
	}

	replicas[leader].stop(t)
	testutil.Eventually(t, "the other replica takes the Lease and audits", func() (bool, string) {
		h := holder()
		return h != "" && h != identity && runs(follower) >= 1, fmt.Sprintf("Lease holder %q, runs of %s %v", h, follower, runs(follower))
	})
}

// replica is a `tollgate` process of the test.
type replica struct {
	cmd     *exec.Cmd
	metrics string
}

// startReplica runs tollgate with args and a metrics address of its own;
// it is killed when the test ends.
func startReplica(t *testing.T, name, dir string, args ...string) *replica {
	t.Helper()
	metrics, port := testutil.FreeAddr(t), testutil.FreeAddr(t)
	_, p, _ := net.SplitHostPort(port)
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append(args, "--metrics-addr", metrics, "--port", p)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{cmd: cmd, metrics: "http://" + metrics + "/metrics"}
	t.Cleanup(func() {
		r.stop(t)
		if t.Failed() {
			data, _ := os.ReadFile(logf.Name())
			t.Logf("replica %s log:\n%s", name, data)
		}
	})
	return r
}

// stop ends the replica with SIGTERM, as a rolling update does.
func (r *replica) stop(t *testing.T) {
	if r.cmd.ProcessState != nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = r.cmd.Process.Kill()
		<-done
		t.Errorf("replica did not stop within 20s of SIGTERM")
	}
}

// metric returns the value of the sample series (name{labels} as
// Prometheus prints it), 0 when absent or unreadable.
func (r *replica) metric(t *testing.T, series string) float64 {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.metrics, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			var f float64
			_, _ = fmt.Sscan(v, &f)
			return f
		}
	}
	return 0
}
