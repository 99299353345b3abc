// Package faults runs `tollgate controller` replicas as separate processes
// against a real control plane and Git server, and breaks things under
// them: a replica killed in the middle of a sync, replicas joining and
// leaving. Each replica reaches the API server through its own recording
// proxy, so the test knows which replica applied what, and when.
package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/envtest"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// argoNS is the control-plane namespace the replicas reconcile; podNS is
// where their shard Leases live, as $POD_NAMESPACE in config/.
const (
	argoNS = "argocd"
	podNS  = "tollgate-system"
)

var (
	env *envtest.Env
	// bin is bin/tollgate, built once for the package.
	bin string
)

func TestMain(m *testing.M) {
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		fmt.Fprintln(os.Stderr, "build scheme:", err)
		os.Exit(1)
	}
	// A data directory, so that TestAPIServerStoppedMidWave can stop and
	// start the API server.
	data, err := os.MkdirTemp("", "tollgate-faults-cp-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := envtest.Run(m, envtest.Options{Scheme: scheme, DataDir: data}, setup)
	_ = os.RemoveAll(data)
	if bin != "" {
		_ = os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// setup builds the binary and creates the namespaces.
func setup(e *envtest.Env) error {
	env = e
	dir, err := os.MkdirTemp("", "tollgate-faults-")
	if err != nil {
		return err
	}
	if bin, err = envtest.BuildTollgate(dir); err != nil {
		return err
	}
	for _, ns := range []string{argoNS, podNS} {
		if err := e.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// apply is one server-side apply request a replica made (dry runs
// excluded).
type apply struct {
	// path is the object's API path.
	path string
	at   time.Time
}

// apiProxy stands between one replica and the API server, as an
// administrator, recording the replica's applies.
type apiProxy struct {
	srv     *httptest.Server
	mu      sync.Mutex
	applies []apply
	// failing, when not 0, is the status every request is answered with
	// (fail); refused counts them.
	failing int
	refused int
}

// fail answers every new request with code until heal: 429 with
// Retry-After: 1, as an API server shedding load, or 500, as one whose
// etcd fails. Open watches keep streaming.
func (p *apiProxy) fail(code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failing, p.refused = code, 0
}

// heal ends fail and returns how many requests it refused.
func (p *apiProxy) heal() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failing = 0
	return p.refused
}

// refuse answers r with the injected failure, if any.
func (p *apiProxy) refuse(w http.ResponseWriter) bool {
	p.mu.Lock()
	code := p.failing
	if code != 0 {
		p.refused++
	}
	p.mu.Unlock()
	if code == 0 {
		return false
	}
	reason := metav1.StatusReasonInternalError
	if code == http.StatusTooManyRequests {
		reason = metav1.StatusReasonTooManyRequests
		w.Header().Set("Retry-After", "1")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected by the test","reason":%q,"code":%d}`, reason, code)
	return true
}

func newAPIProxy(t *testing.T) *apiProxy {
	t.Helper()
	target, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	p := &apiProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport, rp.FlushInterval = transport, -1 // watches stream
	rp.ErrorLog = nil
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.refuse(w) {
			return
		}
		if r.Method == http.MethodPatch && r.Header.Get("Content-Type") == string(types.ApplyPatchType) && r.URL.Query().Get("dryRun") == "" {
			p.mu.Lock()
			p.applies = append(p.applies, apply{path: r.URL.Path, at: time.Now()})
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// appliesTo returns the applies recorded on paths containing substr.
func (p *apiProxy) appliesTo(substr string) []apply {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []apply
	for _, a := range p.applies {
		if strings.Contains(a.path, substr) {
			out = append(out, a)
		}
	}
	return out
}

// kubeconfig writes a kubeconfig that reaches the API server through p.
func (p *apiProxy) kubeconfig(t *testing.T) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: p.srv.URL, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	cfg.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// replica is one `tollgate controller` process.
type replica struct {
	name    string
	api     *apiProxy
	cmd     *exec.Cmd
	metrics string
	log     *os.File
	logPath string
	exited  chan struct{}
}

// replicaOptions are the flags the tests vary.
type replicaOptions struct {
	leaseDuration time.Duration
	resync        time.Duration
	// args are more flags.
	args []string
}

// startReplica starts a controller replica named name, sharing the
// Applications of argoNS by Leases in podNS.
func startReplica(t *testing.T, name string, o replicaOptions) *replica {
	t.Helper()
	r := &replica{name: name, api: newAPIProxy(t), metrics: testutil.FreeAddr(t), exited: make(chan struct{})}
	logPath := filepath.Join(t.TempDir(), name+".log")
	r.logPath = logPath
	var err error
	if r.log, err = os.Create(logPath); err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(bin, "controller", "--kubeconfig", r.api.kubeconfig(t), "--namespace", argoNS,
		"--repo-cache", filepath.Join(t.TempDir(), "cache"), "--allow-insecure-repos",
		"--resync", o.resync.String(), "--sharding", "dynamic", "--shard-lease-duration", o.leaseDuration.String(),
		"--metrics-addr", r.metrics, "--health-addr", "0", "--webhook-addr", "0", "-v", "1")
	r.cmd.Args = append(r.cmd.Args, o.args...)
	r.cmd.Env = append(os.Environ(), "POD_NAME="+name, "POD_NAMESPACE="+podNS)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("start replica %s: %v", name, err)
	}
	go func() {
		_ = r.cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		// As Kubernetes stops a pod: SIGTERM, then SIGKILL. Its Lease goes
		// too, so that the next test's replicas do not wait for it to
		// expire.
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(30 * time.Second):
			r.kill()
		}
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: podNS, Name: "tollgate-shard-" + name}}
		_ = env.Client.Delete(context.Background(), lease)
		_ = r.log.Close()
		if t.Failed() {
			if out, err := os.ReadFile(logPath); err == nil {
				t.Logf("replica %s log (last 60 lines):\n%s", name, tail(string(out), 60))
			}
		}
	})
	return r
}

// kill ends the replica at once (SIGKILL): no release of its Lease, no
// last status write.
func (r *replica) kill() {
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.exited
}

// stop ends the replica as Kubernetes does (SIGTERM) and waits.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(45 * time.Second):
		t.Fatalf("replica %s did not stop within 45s of SIGTERM", r.name)
	}
}

// logged reports whether the replica's log holds s.
func (r *replica) logged(s string) bool {
	out, err := os.ReadFile(r.logPath)
	return err == nil && strings.Contains(string(out), s)
}

// metric returns the value of an unlabelled metric of the replica, or -1
// when it cannot be read.
func (r *replica) metric(name string) float64 {
	resp, err := http.Get("http://" + r.metrics + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// timeout bounds every wait.
const timeout = 90 * time.Second

// poll is how the tests wait for the replicas.
var poll = testutil.Poll{Timeout: timeout, Interval: 200 * time.Millisecond}

// eventually waits until cond holds (poll.Eventually).
func eventually(t *testing.T, desc string, cond func() (bool, string)) {
	t.Helper()
	poll.Eventually(t, desc, cond)
}

// markAvailable marks the Deployments of ns whose name starts with one of
// prefixes available, as their pods would, until ctx ends.
func markAvailable(ctx context.Context, ns string, prefixes ...string) {
	for {
		var deps appsv1.DeploymentList
		if err := env.Client.List(ctx, &deps, client.InNamespace(ns)); err == nil {
			for i := range deps.Items {
				for _, p := range prefixes {
					if strings.HasPrefix(deps.Items[i].Name, p) {
						envtest.MarkAvailable(ctx, env.Client, &deps.Items[i])
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(150 * time.Millisecond):
		}
	}
}
