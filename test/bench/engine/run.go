package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/source"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/test/envtest"
)

const argoNS = "argocd"

// bench is one run's world.
type bench struct {
	env     *envtest.Env
	repoURL string
	files   map[string]string
	tmp     string
	// calls and kinds count the controller's API requests.
	calls   *apply.CallCounter
	kinds   *breakdown
	metrics *prometheus.Registry
}

func run(ctx context.Context, o options, out io.Writer) error {
	log := logr.Discard()
	if os.Getenv("BENCH_LOG") != "" {
		cfg := zap.NewDevelopmentConfig()
		cfg.Level = zap.NewAtomicLevelAt(zapcore.Level(-1))
		z, err := cfg.Build()
		if err != nil {
			return err
		}
		log = zapr.NewLogger(z)
	}
	ctrl.SetLogger(log)
	scheme := kruntime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		return err
	}
	fmt.Fprintln(out, "starting kube-apiserver and etcd...")
	env, err := envtest.Start(envtest.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	tmp, err := os.MkdirTemp("", "tollgate-bench-engine-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	b := &bench{env: env, tmp: tmp, files: map[string]string{}, calls: &apply.CallCounter{}, kinds: &breakdown{}, metrics: prometheus.NewRegistry()}
	manifests(b.files, "big", "big", o.objects)
	for i := range o.apps {
		manifests(b.files, fmt.Sprintf("apps/app-%03d", i), fmt.Sprintf("a%03d", i), o.appObjects)
	}
	if b.repoURL, err = writeRepo(filepath.Join(tmp, "repo"), b.files); err != nil {
		return err
	}
	mgrCtx, stopManager := context.WithCancel(ctx)
	defer stopManager()
	mgrDone, err := b.startController(mgrCtx, scheme, o)
	if err != nil {
		return err
	}
	kubeletCtx, stopKubelet := context.WithCancel(ctx)
	go fakeKubelet(kubeletCtx, env.Client)
	defer stopKubelet()

	fmt.Fprintf(out, "part 1: one Application of %d objects...\n", o.objects)
	engineSync, err := b.syncOne(ctx, o)
	if err != nil {
		return fmt.Errorf("part 1, engine: %w", err)
	}
	kubectl, err := b.kubectlApply(ctx)
	if err != nil {
		return fmt.Errorf("part 1, kubectl: %w", err)
	}
	fmt.Fprintf(out, "part 2: %d Applications of %d objects, then %d idle resync cycles of %s...\n", o.apps, o.appObjects, o.cycles, o.resync)
	synced, err := b.syncMany(ctx, o)
	if err != nil {
		return fmt.Errorf("part 2: %w", err)
	}
	stopKubelet()
	idle, err := b.idle(ctx, o)
	if err != nil {
		return fmt.Errorf("part 2, idle: %w", err)
	}
	report(out, o, engineSync, kubectl, synced, idle)
	stopManager()
	<-mgrDone
	return nil
}

// startController runs the engine in a manager, as `tollgate controller`
// does, with every API request counted.
func (b *bench) startController(ctx context.Context, scheme *kruntime.Scheme, o options) (<-chan struct{}, error) {
	if err := b.env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argoNS}}); err != nil {
		return nil, err
	}
	project := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: argoNS},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{"*"},
			Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "bench-*"}},
		},
	}
	if err := b.env.Client.Create(ctx, project); err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(b.env.Config)
	cfg.Wrap(b.calls.Wrap)
	cfg.Wrap(b.kinds.wrap)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Cache: engine.CacheOptions(argoNS), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return nil, err
	}
	evaluator, err := policies.New(ctx, policies.DefaultOptions())
	if err != nil {
		return nil, err
	}
	sources, err := source.NewCache(filepath.Join(b.tmp, "cache"), source.DefaultOptions())
	if err != nil {
		return nil, err
	}
	metrics := engine.NewMetrics()
	if err := metrics.Register(b.metrics); err != nil {
		return nil, err
	}
	opts := engine.DefaultOptions()
	opts.Namespace, opts.Resync, opts.MaxConcurrentReconciles = argoNS, o.resync, 8
	r, err := engine.New(engine.Dependencies{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Config: mgr.GetConfig(), Scheme: scheme,
		Evaluator: evaluator, Sources: sources, Metrics: metrics,
	}, opts)
	if err != nil {
		return nil, err
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return done, nil
}

// newApp returns an automated Application of path into namespace ns.
func (b *bench) newApp(name, path, ns string) *v1alpha1.Application {
	return &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: argoNS},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "bench",
			Source:      &v1alpha1.ApplicationSource{RepoURL: b.repoURL, Path: path, TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: engine.InClusterServer, Namespace: ns},
			SyncPolicy: &v1alpha1.SyncPolicy{
				Automated:   &v1alpha1.SyncPolicyAutomated{Prune: true},
				SyncOptions: []string{"CreateNamespace=true"},
			},
		},
	}
}

// done reports whether app finished syncing successfully and is healthy.
func done(app *v1alpha1.Application) (bool, error) {
	st := app.Status.OperationState
	if st != nil && st.Phase.Completed() && !st.Phase.Successful() {
		return false, fmt.Errorf("application %s: %s: %s", app.Name, st.Phase, st.Message)
	}
	return st != nil && st.Phase.Successful() && app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced &&
		app.Status.Health.Status == v1alpha1.HealthStatusHealthy, nil
}

// measurement is one timed piece of work.
type measurement struct {
	wall  time.Duration
	total int64
	kinds map[string]int64
}

// syncOne creates the big Application and waits until it is synced and
// healthy.
func (b *bench) syncOne(ctx context.Context, o options) (measurement, error) {
	b.calls.Reset()
	before := b.kinds.snapshot()
	start := time.Now()
	if err := b.env.Client.Create(ctx, b.newApp("big", "big", "bench-big")); err != nil {
		return measurement{}, err
	}
	for {
		var app v1alpha1.Application
		if err := b.env.Client.Get(ctx, client.ObjectKey{Namespace: argoNS, Name: "big"}, &app); err != nil {
			return measurement{}, err
		}
		ok, err := done(&app)
		if err != nil {
			return measurement{}, err
		}
		if ok {
			break
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return measurement{}, err
		}
	}
	return measurement{wall: time.Since(start), total: b.calls.Total(), kinds: b.kinds.since(before)}, nil
}

// kubectlApply applies the same objects with kubectl server-side apply
// into a fresh namespace, through a counting proxy.
func (b *bench) kubectlApply(ctx context.Context) (measurement, error) {
	kubectl := filepath.Join(envtest.BinaryDir(), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		return measurement{}, fmt.Errorf("kubectl not found: %w (run make tools)", err)
	}
	dir := filepath.Join(b.tmp, "kubectl")
	for p, content := range b.files {
		if !strings.HasPrefix(p, "big/") {
			continue
		}
		full := filepath.Join(dir, filepath.Base(p))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return measurement{}, err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return measurement{}, err
		}
	}
	if err := b.env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench-kubectl"}}); err != nil {
		return measurement{}, err
	}
	counts := &breakdown{}
	handler, err := countingProxy(b.env.Config, counts)
	if err != nil {
		return measurement{}, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return measurement{}, err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	kubeconfig := filepath.Join(b.tmp, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: bench
  cluster:
    server: http://%s
contexts:
- name: bench
  context:
    cluster: bench
    user: bench
current-context: bench
users:
- name: bench
  user: {}
`, ln.Addr())
	if err := os.WriteFile(kubeconfig, []byte(kc), 0o600); err != nil {
		return measurement{}, err
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(b.tmp, "kubectl-cache"),
		"apply", "--server-side", "-n", "bench-kubectl", "-f", dir)
	cmd.Stdout = io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := stderr.String()
		if len(msg) > 2000 {
			msg = msg[:2000] + "..."
		}
		return measurement{}, fmt.Errorf("kubectl apply: %w: %s", err, msg)
	}
	m := measurement{wall: time.Since(start), kinds: counts.snapshot()}
	m.total = total(m.kinds)
	return m, nil
}

// syncMany creates the Applications of part 2 and waits until every one is
// synced and healthy.
func (b *bench) syncMany(ctx context.Context, o options) (time.Duration, error) {
	start := time.Now()
	for i := range o.apps {
		app := b.newApp(fmt.Sprintf("app-%03d", i), fmt.Sprintf("apps/app-%03d", i), fmt.Sprintf("bench-app-%03d", i))
		if err := b.env.Client.Create(ctx, app); err != nil {
			return 0, err
		}
	}
	for {
		var apps v1alpha1.ApplicationList
		if err := b.env.Client.List(ctx, &apps, client.InNamespace(argoNS)); err != nil {
			return 0, err
		}
		n := 0
		for i := range apps.Items {
			ok, err := done(&apps.Items[i])
			if err != nil {
				return 0, err
			}
			if ok && apps.Items[i].Name != "big" {
				n++
			}
		}
		if n == o.apps {
			return time.Since(start), nil
		}
		if err := sleep(ctx, time.Second); err != nil {
			return 0, fmt.Errorf("%d of %d applications synced: %w", n, o.apps, err)
		}
	}
}

// idleResult is the cost of idle resync cycles, per cycle.
type idleResult struct {
	cpu                 time.Duration
	peakRSS, peakHeap   uint64
	calls, applies      float64
	dryRuns             float64
	reused, fullCompare float64
}

// settlePeriods bounds the wait for the controller to go idle.
const settlePeriods = 12

// idle waits until a whole resync period passes without a full comparison
// (the last syncs settled), then lets the controller resync the untouched
// Applications for o.cycles periods and measures the process.
func (b *bench) idle(ctx context.Context, o options) (idleResult, error) {
	settled := false
	for range settlePeriods {
		_, before := b.compares()
		if err := sleep(ctx, o.resync+o.resync/5); err != nil {
			return idleResult{}, err
		}
		if _, after := b.compares(); after == before {
			settled = true
			break
		}
	}
	if !settled {
		fmt.Fprintf(os.Stderr, "bench-engine: warning: the controller still compared in full after %d resync periods; measuring anyway\n", settlePeriods)
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return idleResult{}, fmt.Errorf("reset peak RSS: %w", err)
	}
	var peakHeap atomic.Uint64
	sampleCtx, stopSampling := context.WithCancel(ctx)
	go func() {
		var ms runtime.MemStats
		for sleep(sampleCtx, 100*time.Millisecond) == nil {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peakHeap.Load() {
				peakHeap.Store(ms.HeapInuse)
			}
		}
	}()
	reusedBefore, fullBefore := b.compares()
	kindsBefore := b.kinds.snapshot()
	cpuBefore := cpuTime()
	err := sleep(ctx, time.Duration(o.cycles)*o.resync)
	stopSampling()
	if err != nil {
		return idleResult{}, err
	}
	cpu := cpuTime() - cpuBefore
	kinds := b.kinds.since(kindsBefore)
	reused, full := b.compares()
	rss, err := peakRSS()
	if err != nil {
		return idleResult{}, err
	}
	n := float64(o.cycles)
	return idleResult{
		cpu: cpu / time.Duration(o.cycles), peakRSS: rss, peakHeap: peakHeap.Load(),
		calls: float64(total(kinds)) / n, applies: float64(kinds[classApply]) / n, dryRuns: float64(kinds[classDryRun]) / n,
		reused: (reused - reusedBefore) / n, fullCompare: (full - fullBefore) / n,
	}, nil
}

// compares returns the engine's reused and full comparisons so far.
func (b *bench) compares() (reused, full float64) {
	families, err := b.metrics.Gather()
	if err != nil {
		return 0, 0
	}
	for _, f := range families {
		if f.GetName() != "tollgate_engine_compares_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				switch l.GetValue() {
				case "reused":
					reused = m.GetCounter().GetValue()
				case "full":
					full = m.GetCounter().GetValue()
				}
			}
		}
	}
	return reused, full
}

// cpuTime is the user plus system CPU time of this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS reads VmHWM (kB) from /proc/self/status, in bytes.
func peakRSS() (uint64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
				return 0, fmt.Errorf("parse VmHWM %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmHWM in /proc/self/status")
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// report prints the results table.
func report(out io.Writer, o options, engineSync, kubectl measurement, synced time.Duration, idle idleResult) {
	fmt.Fprintln(out)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "part 1: %d objects, 3 waves\twall\tAPI calls\t", o.objects)
	for _, c := range classes {
		fmt.Fprintf(w, "%s\t", c)
	}
	fmt.Fprintln(w)
	row := func(name string, m measurement) {
		fmt.Fprintf(w, "%s\t%.2fs\t%d\t", name, m.wall.Seconds(), m.total)
		for _, c := range classes {
			fmt.Fprintf(w, "%d\t", m.kinds[c])
		}
		fmt.Fprintln(w)
	}
	row("tollgate engine (render, gate, diff, waves, health)", engineSync)
	row("kubectl apply --server-side", kubectl)
	_ = w.Flush()
	fmt.Fprintln(out, "  engine: dry-run diffs before the sync, a dry run per object before each wave, a wait for health between waves,")
	fmt.Fprintln(out, "  and a comparison after the sync; kubectl applies once and waits for nothing. Watches are long-lived requests.")
	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "part 2: %d apps x %d objects, resync %s\tper idle cycle\t\n", o.apps, o.appObjects, o.resync)
	fmt.Fprintf(w, "initial sync of all apps (wall)\t%.1fs\t\n", synced.Seconds())
	fmt.Fprintf(w, "controller CPU\t%.3fs\t\n", idle.cpu.Seconds())
	fmt.Fprintf(w, "peak RSS (VmHWM)\t%.1f MiB\t\n", float64(idle.peakRSS)/(1<<20))
	fmt.Fprintf(w, "peak Go heap in use\t%.1f MiB\t\n", float64(idle.peakHeap)/(1<<20))
	fmt.Fprintf(w, "API calls (status patches, reads)\t%.1f\t\n", idle.calls)
	fmt.Fprintf(w, "apply calls (target 0)\t%.1f\t\n", idle.applies)
	fmt.Fprintf(w, "dry-run apply calls (target 0)\t%.1f\t\n", idle.dryRuns)
	fmt.Fprintf(w, "comparisons reused / full\t%.1f / %.1f\t\n", idle.reused, idle.fullCompare)
	_ = w.Flush()
}
