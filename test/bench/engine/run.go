package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
	"github.com/tollgate-dev/tollgate/test/envtest"
)

const argoNS = "argocd"

// bench is one run's world.
type bench struct {
	env     *envtest.Env
	repoURL string
	files   map[string]string
	tmp     string
	// ctrl is the tollgate controller process.
	controller *controller
	// kinds counts the controller's API requests: its kubeconfig points at
	// a counting proxy of its own.
	kinds *breakdown
	// apps is an informer cache of the Applications, which waitSynced
	// reads: listing thousands of Applications from the API server every
	// few seconds would load it more than the controller under test.
	apps cache.Cache
}

func run(ctx context.Context, o options, out io.Writer) error {
	bin, err := filepath.Abs(o.tollgate)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		return fmt.Errorf("tollgate binary %s not found: run `make build` first, or pass -tollgate", o.tollgate)
	}
	o.tollgate = bin
	// envtest logs through controller-runtime's logger.
	ctrl.SetLogger(logr.Discard())
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

	b := &bench{env: env, tmp: tmp, files: map[string]string{}, kinds: &breakdown{}}
	switch o.part {
	case partScale:
		return b.runScale(ctx, o, out)
	case partFirst:
		return b.runFirstSync(ctx, o, out)
	}
	manifests(b.files, "big", "big", o.objects)
	for i := range o.apps {
		manifests(b.files, fmt.Sprintf("apps/app-%03d", i), fmt.Sprintf("a%03d", i), o.appObjects)
	}
	if b.repoURL, err = writeRepo(filepath.Join(tmp, "repo"), b.files); err != nil {
		return err
	}
	if err := b.createProject(ctx); err != nil {
		return err
	}
	kubeconfig := filepath.Join(tmp, "controller.kubeconfig")
	stopProxy, err := serveProxy(env.Config, b.kinds, kubeconfig)
	if err != nil {
		return err
	}
	defer stopProxy()
	fmt.Fprintf(out, "starting %s controller...\n", o.tollgate)
	if b.controller, err = startController(ctx, o, tmp, kubeconfig, "controller"); err != nil {
		return err
	}
	// Deferred after the proxy and the control plane, so it runs before
	// them: the controller stops first.
	defer b.controller.stop()
	running, release := b.controller.running(ctx)
	defer release()
	if err := b.measure(running, o, out); err != nil {
		return b.controller.explain(err)
	}
	return nil
}

// measure runs parts 1 and 2 and prints the report.
func (b *bench) measure(ctx context.Context, o options, out io.Writer) error {
	kubeletCtx, stopKubelet := context.WithCancel(ctx)
	go fakeKubelet(kubeletCtx, b.env.Client, 200*time.Millisecond)
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
	return nil
}

// createProject creates the Argo CD namespace and the AppProject of every
// Application.
func (b *bench) createProject(ctx context.Context) error {
	if err := b.env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argoNS}}); err != nil {
		return err
	}
	project := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: argoNS},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{"*"},
			Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "bench-*"}},
			// CreateNamespace=true writes a Namespace, which the project
			// must permit, as in Argo CD.
			ClusterResourceWhitelist: []v1alpha1.ClusterResourceRestrictionItem{{Group: "", Kind: "Namespace"}},
		},
	}
	return b.env.Client.Create(ctx, project)
}

// newApp returns an automated Application of path into namespace ns.
func (b *bench) newApp(name, path, ns string) *v1alpha1.Application {
	return &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: argoNS},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "bench",
			Source:      &v1alpha1.ApplicationSource{RepoURL: b.repoURL, Path: path, TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: application.InClusterServer, Namespace: ns},
			SyncPolicy: &v1alpha1.SyncPolicy{
				Automated:   &v1alpha1.SyncPolicyAutomated{Prune: true},
				SyncOptions: []string{"CreateNamespace=true"},
			},
		},
	}
}

// done reports whether app finished syncing successfully and is healthy.
// An operation another replica abandoned (its replica's Lease expired
// under load) is not an error: the next comparison syncs again.
func done(app *v1alpha1.Application) (bool, error) {
	st := app.Status.OperationState
	if st != nil && st.Phase.Completed() && !st.Phase.Successful() && !strings.HasPrefix(st.Message, application.OperationAbandoned) {
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
	m := measurement{wall: time.Since(start), kinds: b.kinds.since(before)}
	m.total = total(m.kinds)
	return m, nil
}

// kubectlApply applies the same objects with kubectl server-side apply
// into a fresh namespace, through a counting proxy.
func (b *bench) kubectlApply(ctx context.Context) (measurement, error) {
	dir := filepath.Join(b.tmp, "kubectl")
	for p, content := range b.files {
		if !strings.HasPrefix(p, "big/") {
			continue
		}
		if err := writeFile(filepath.Join(dir, filepath.Base(p)), content); err != nil {
			return measurement{}, err
		}
	}
	if err := b.env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench-kubectl"}}); err != nil {
		return measurement{}, err
	}
	return b.kubectlRun(ctx, "kubectl", []string{dir}, "bench-kubectl", "apply", "--server-side")
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
	if err := b.waitSynced(ctx, "app-", o.apps); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// idleResult is the cost of idle resync cycles, per cycle.
type idleResult struct {
	// passes are the reconciles per cycle and passTime their mean wall
	// time (scale part only).
	passes              float64
	passTime            time.Duration
	cpu                 time.Duration
	mem                 memory
	peakHeap            uint64
	calls, applies      float64
	dryRuns             float64
	reused, fullCompare float64
}

// settlePeriods bounds the wait for the controller to go idle.
const settlePeriods = 12

// settle waits until a whole resync period passes without a full
// comparison by any of cs (the last syncs settled), for at most
// settlePeriods periods, then warns and returns.
func settle(ctx context.Context, cs []*controller, resync time.Duration) error {
	for range settlePeriods {
		before, err := fullCompares(ctx, cs)
		if err != nil {
			return err
		}
		if err := sleep(ctx, resync+resync/5); err != nil {
			return err
		}
		after, err := fullCompares(ctx, cs)
		if err != nil {
			return err
		}
		if after == before {
			return nil
		}
	}
	fmt.Fprintf(os.Stderr, "bench-engine: warning: the controller still compared in full after %d resync periods; measuring anyway\n", settlePeriods)
	return nil
}

// fullCompares is the sum of the full comparisons of cs so far.
func fullCompares(ctx context.Context, cs []*controller) (float64, error) {
	var sum float64
	for _, c := range cs {
		_, full, err := c.compares(ctx)
		if err != nil {
			return 0, err
		}
		sum += full
	}
	return sum, nil
}

// idle waits until a whole resync period passes without a full comparison
// (the last syncs settled), then lets the controller resync the untouched
// Applications for o.cycles periods and measures its process: CPU time
// and peak RSS from /proc/<pid>, the Go heap from its GC trace, API
// calls from its proxy. The heap profiles of -memprofile are taken just
// outside the window so that their cost is not measured.
func (b *bench) idle(ctx context.Context, o options) (idleResult, error) {
	c := b.controller
	if err := settle(ctx, []*controller{c}, o.resync); err != nil {
		return idleResult{}, err
	}
	if o.memProfile != "" {
		if err := c.heapProfile(ctx, o.memProfile+".base"); err != nil {
			return idleResult{}, err
		}
	}
	reusedBefore, fullBefore, err := c.compares(ctx)
	if err != nil {
		return idleResult{}, err
	}
	kindsBefore := b.kinds.snapshot()
	if err := c.resetPeakRSS(); err != nil {
		return idleResult{}, err
	}
	cpuBefore, err := c.cpuTime()
	if err != nil {
		return idleResult{}, err
	}
	logStart, err := c.logSize()
	if err != nil {
		return idleResult{}, err
	}
	window := time.Duration(o.cycles) * o.resync
	profiled := make(chan error, 1)
	if o.cpuProfile != "" {
		go func() { profiled <- c.cpuProfile(ctx, window, o.cpuProfile) }()
	} else {
		profiled <- nil
	}
	if err := sleep(ctx, window); err != nil {
		return idleResult{}, err
	}
	if err := <-profiled; err != nil {
		return idleResult{}, err
	}
	cpuAfter, err := c.cpuTime()
	if err != nil {
		return idleResult{}, err
	}
	mem, err := c.memory()
	if err != nil {
		return idleResult{}, err
	}
	kinds := b.kinds.since(kindsBefore)
	reused, full, err := c.compares(ctx)
	if err != nil {
		return idleResult{}, err
	}
	peakHeap, err := c.peakHeapSince(logStart)
	if err != nil {
		return idleResult{}, err
	}
	if o.memProfile != "" {
		if err := c.heapProfile(ctx, o.memProfile); err != nil {
			return idleResult{}, err
		}
	}
	n := float64(o.cycles)
	return idleResult{
		cpu: (cpuAfter - cpuBefore) / time.Duration(o.cycles), mem: mem, peakHeap: peakHeap,
		calls: float64(total(kinds)) / n, applies: float64(kinds[classApply]) / n, dryRuns: float64(kinds[classDryRun]) / n,
		reused: (reused - reusedBefore) / n, fullCompare: (full - fullBefore) / n,
	}, nil
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

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
	fmt.Fprintf(w, "CPU (controller process, utime+stime)\t%.2fs\t\n", idle.cpu.Seconds())
	fmt.Fprintf(w, "peak RSS (controller process, VmHWM)\t%.1f MiB\t\n", mib(idle.mem.peak))
	fmt.Fprintf(w, "  RSS at the end: anonymous / file-backed\t%.1f / %.1f MiB\t\n", mib(idle.mem.anon), mib(idle.mem.file))
	fmt.Fprintf(w, "peak Go heap (controller, at GC start)\t%.1f MiB\t\n", mib(idle.peakHeap))
	fmt.Fprintf(w, "API calls (status patches, reads)\t%.1f\t\n", idle.calls)
	fmt.Fprintf(w, "apply calls (target 0)\t%.1f\t\n", idle.applies)
	fmt.Fprintf(w, "dry-run apply calls (target 0)\t%.1f\t\n", idle.dryRuns)
	fmt.Fprintf(w, "comparisons reused / full\t%.1f / %.1f\t\n", idle.reused, idle.fullCompare)
	_ = w.Flush()
}
