package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
)

// The idle goal of one controller replica, per resync cycle: at most a
// tenth of one core over the default resync period (the run may resync
// more often to finish sooner; a cycle's work does not depend on the
// period), peak RSS within the shipped memory limit (config/controller:
// 1Gi), and no apply or dry-run call.
const (
	goalCPUShare = 0.10
	goalRSS      = 1 << 30
)

// goalCPU is the most CPU one idle cycle of a replica may take.
var goalCPU = time.Duration(goalCPUShare * float64(application.DefaultResync))

// replicaRun is one controller replica of the scale part, with the proxy
// that counts its API calls.
type replicaRun struct {
	name  string
	c     *controller
	kinds *breakdown
	stop  func()
}

// scaleResult is one measured configuration.
type scaleResult struct {
	replicas int
	apps     int
	// synced is how many new Applications the phase created, and
	// firstSync the wall time from creating them to every one Synced and
	// Healthy (0 when none was created).
	synced    int
	firstSync time.Duration
	// kubectl and kubectlPar are the same objects written by one kubectl
	// process and by kubectlProcesses (scalePeers), in the same run.
	kubectl, kubectlPar measurement
	idle                []idleResult
	owned               []float64
}

// withinGoal reports whether every replica met the idle goal.
func (r scaleResult) withinGoal() bool {
	for _, i := range r.idle {
		if i.cpu > goalCPU || i.mem.peak > goalRSS || i.applies+i.dryRuns > 0 {
			return false
		}
	}
	return true
}

// runScale is -part scale: o.apps Applications of o.appObjects objects
// synced by one replica (first full sync, then idle cycles), then the same
// Applications shared by two replicas (idle cycles, per replica), then more
// Applications in steps of o.step for the two replicas (the time to sync
// each step, then idle cycles) until the idle goal fails or o.maxApps is
// reached.
func (b *bench) runScale(ctx context.Context, o options, out io.Writer) (err error) {
	var replicas []*replicaRun
	defer func() {
		for _, r := range replicas {
			if err != nil {
				err = r.c.explain(err)
			}
		}
	}()
	batches := []string{"a"}
	sizes := []int{o.apps}
	for n, i := o.apps+o.step, 0; o.step > 0 && n <= o.maxApps; n, i = n+o.step, i+1 {
		batches, sizes = append(batches, fmt.Sprintf("s%d", i)), append(sizes, o.step)
	}
	for i, batch := range batches {
		for j := range sizes[i] {
			manifests(b.files, appPath(batch, j), fmt.Sprintf("%s%04d", batch, j), o.appObjects)
		}
	}
	if b.repoURL, err = writeRepo(filepath.Join(b.tmp, "repo"), b.files); err != nil {
		return err
	}
	if err := b.createProject(ctx); err != nil {
		return err
	}
	var results []scaleResult
	r1, err := b.startReplica(ctx, o, "replica-1")
	if err != nil {
		return err
	}
	defer r1.stop()
	replicas = []*replicaRun{r1}
	// The replica's RSS with no Application, once its caches synced.
	if err := sleep(ctx, 10*time.Second); err != nil {
		return err
	}
	base, err := r1.c.memory()
	if err != nil {
		return err
	}
	// phase syncs a batch of n new Applications with the replicas running
	// now and measures them idle; total is how many Applications they then
	// have.
	phase := func(batch string, n, total int) error {
		desc := fmt.Sprintf("%d replica(s), %d Applications", len(replicas), total)
		fmt.Fprintf(out, "scale: %s...\n", desc)
		r, err := b.scalePhase(ctx, o, replicas, batch, n)
		if err != nil {
			return fmt.Errorf("%s: %w", desc, err)
		}
		r.apps = total
		results = append(results, r)
		printRows(out, o, r)
		return nil
	}
	if err := phase("a", o.apps, o.apps); err != nil {
		return err
	}

	// A second replica joins and the two share the same Applications: the
	// idle cost per replica, with nothing new to sync. (Syncing a fresh batch
	// instead leaves the first batch's objects in the cluster, twice what
	// the 2-core machine's API server holds; run C of docs/scale.md.)
	r2, err := b.startReplica(ctx, o, "replica-2")
	if err != nil {
		return err
	}
	defer r2.stop()
	replicas = append(replicas, r2)
	if err := waitMembers(ctx, replicas); err != nil {
		return err
	}
	if err := phase("a", 0, o.apps); err != nil {
		return err
	}
	total := o.apps
	for i, batch := range batches[1:] {
		if !results[len(results)-1].withinGoal() {
			break
		}
		total += sizes[i+1]
		if err := phase(batch, sizes[i+1], total); err != nil {
			return err
		}
	}
	reportScale(out, o, results, base)
	return nil
}

// appPath is the repository directory of Application j of batch.
func appPath(batch string, j int) string { return fmt.Sprintf("scale/%s-%04d", batch, j) }

// startReplica starts a controller replica behind a counting proxy of its
// own.
func (b *bench) startReplica(ctx context.Context, o options, name string) (*replicaRun, error) {
	r := &replicaRun{name: name, kinds: &breakdown{}}
	kubeconfig := filepath.Join(b.tmp, name+".kubeconfig")
	stopProxy, err := serveProxy(b.env.Config, r.kinds, kubeconfig)
	if err != nil {
		return nil, err
	}
	if r.c, err = startController(ctx, o, b.tmp, kubeconfig, name); err != nil {
		stopProxy()
		return nil, err
	}
	r.stop = func() {
		r.c.stop()
		stopProxy()
	}
	return r, nil
}

// waitMembers waits until every replica counts all of them as members.
func waitMembers(ctx context.Context, rs []*replicaRun) error {
	for {
		all := true
		for _, r := range rs {
			if n, err := r.c.gauge(ctx, "tollgate_engine_shard_members"); err != nil || int(n) != len(rs) {
				all = false
			}
		}
		if all {
			return nil
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for %d shard members: %w", len(rs), err)
		}
	}
}

// scalePhase creates n Applications of batch (none when n is 0), waits
// until all are synced (timed), lets the replicas settle and measures
// o.cycles idle cycles.
func (b *bench) scalePhase(ctx context.Context, o options, rs []*replicaRun, batch string, n int) (scaleResult, error) {
	res := scaleResult{replicas: len(rs), synced: n}
	// The fake kubelet runs while the Applications sync, not while the
	// replicas are measured.
	kubeletCtx, stopKubelet := context.WithCancel(ctx)
	defer stopKubelet()
	if n > 0 {
		if err := watchKubelet(kubeletCtx, b.env.Config, b.env.Client.Scheme()); err != nil {
			return scaleResult{}, err
		}
		var err error
		if res.kubectl, res.kubectlPar, err = b.scalePeers(ctx, batch, n); err != nil {
			return scaleResult{}, err
		}
		start := time.Now()
		for j := range n {
			name := fmt.Sprintf("%s-%04d", batch, j)
			if err := b.env.Client.Create(ctx, b.newApp(name, appPath(batch, j), "bench-"+name)); err != nil {
				return scaleResult{}, err
			}
		}
		if err := b.waitSynced(ctx, batch+"-", n); err != nil {
			return scaleResult{}, err
		}
		res.firstSync = time.Since(start)
	}
	stopKubelet()
	cs := make([]*controller, len(rs))
	for i, r := range rs {
		cs[i] = r.c
	}
	if err := settle(ctx, cs, o.resync); err != nil {
		return scaleResult{}, err
	}
	idle, err := measureIdle(ctx, rs, o)
	if err != nil {
		return scaleResult{}, err
	}
	res.idle = idle
	for _, r := range rs {
		owned, err := r.c.gauge(ctx, "tollgate_engine_shard_applications")
		if err != nil {
			return scaleResult{}, err
		}
		res.owned = append(res.owned, owned)
	}
	return res, nil
}

// waitSynced waits until n Applications whose names start with prefix are
// synced and healthy, reading them from an informer cache.
func (b *bench) waitSynced(ctx context.Context, prefix string, n int) error {
	if b.apps == nil {
		c, err := cache.New(b.env.Config, cache.Options{
			Scheme:            b.env.Client.Scheme(),
			DefaultNamespaces: map[string]cache.Config{argoNS: {}},
		})
		if err != nil {
			return err
		}
		if _, err := c.GetInformer(ctx, &v1alpha1.Application{}); err != nil {
			return err
		}
		go func() { _ = c.Start(ctx) }()
		if !c.WaitForCacheSync(ctx) {
			return fmt.Errorf("application cache did not sync: %w", ctx.Err())
		}
		b.apps = c
	}
	for {
		var apps v1alpha1.ApplicationList
		if err := b.apps.List(ctx, &apps, client.InNamespace(argoNS), client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		synced := 0
		for i := range apps.Items {
			if !strings.HasPrefix(apps.Items[i].Name, prefix) {
				continue
			}
			ok, err := done(&apps.Items[i])
			if err != nil {
				return err
			}
			if ok {
				synced++
			}
		}
		if synced == n {
			return nil
		}
		if err := sleep(ctx, time.Second); err != nil {
			return fmt.Errorf("%d of %d applications synced: %w", synced, n, err)
		}
	}
}

// measureIdle measures o.cycles idle resync cycles of every replica at
// once: CPU time and peak RSS of its process, its API calls.
func measureIdle(ctx context.Context, rs []*replicaRun, o options) ([]idleResult, error) {
	type mark struct {
		cpu    time.Duration
		kinds  map[string]int64
		passes uint64
		secs   float64
	}
	before := make([]mark, len(rs))
	for i, r := range rs {
		if err := r.c.resetPeakRSS(); err != nil {
			return nil, err
		}
		cpu, err := r.c.cpuTime()
		if err != nil {
			return nil, err
		}
		passes, secs, err := r.c.passes(ctx)
		if err != nil {
			return nil, err
		}
		before[i] = mark{cpu: cpu, kinds: r.kinds.snapshot(), passes: passes, secs: secs}
	}
	if err := sleep(ctx, time.Duration(o.cycles)*o.resync); err != nil {
		return nil, err
	}
	n := float64(o.cycles)
	out := make([]idleResult, len(rs))
	for i, r := range rs {
		cpu, err := r.c.cpuTime()
		if err != nil {
			return nil, err
		}
		mem, err := r.c.memory()
		if err != nil {
			return nil, err
		}
		kinds := r.kinds.since(before[i].kinds)
		passes, secs, err := r.c.passes(ctx)
		if err != nil {
			return nil, err
		}
		var passTime time.Duration
		if d := passes - before[i].passes; d > 0 {
			passTime = time.Duration((secs - before[i].secs) / float64(d) * float64(time.Second))
		}
		out[i] = idleResult{
			passes: float64(passes-before[i].passes) / n, passTime: passTime,
			cpu: (cpu - before[i].cpu) / time.Duration(o.cycles), mem: mem,
			calls: float64(total(kinds)) / n, applies: float64(kinds[classApply]) / n, dryRuns: float64(kinds[classDryRun]) / n,
		}
	}
	return out, nil
}

// printRows prints one measured configuration as it is done, so that a run
// cut short still shows what it measured.
func printRows(out io.Writer, o options, r scaleResult) {
	if r.synced > 0 {
		fmt.Fprintf(out, "  %d new Applications synced in %.0fs; the same objects by one kubectl in %.0fs (%.2fx), by %d kubectl processes in %.0fs (%.2fx)\n",
			r.synced, r.firstSync.Seconds(), r.kubectl.wall.Seconds(), r.firstSync.Seconds()/r.kubectl.wall.Seconds(),
			kubectlProcesses, r.kubectlPar.wall.Seconds(), r.firstSync.Seconds()/r.kubectlPar.wall.Seconds())
	}
	for i, idle := range r.idle {
		fmt.Fprintf(out, "  %d replica(s), %d Applications: replica %d owns %.0f; %d new synced in %.0fs; per idle cycle %.2fs CPU, %.0f MiB peak RSS, %.0f API calls, %.0f apply+dry-run, %.0f reconciles of %s mean\n",
			r.replicas, r.apps, i+1, r.owned[i], r.synced, r.firstSync.Seconds(), idle.cpu.Seconds(), mib(idle.mem.peak), idle.calls, idle.applies+idle.dryRuns,
			idle.passes, idle.passTime.Round(time.Millisecond))
	}
}

// reportScale prints the scale part's table; base is the first replica's
// memory before any Application.
func reportScale(out io.Writer, o options, results []scaleResult, base memory) {
	fmt.Fprintf(out, "\nscale: %d objects per Application, resync %s; figures per replica and idle cycle\n", o.appObjects, o.resync)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "replicas\tApplications\towned\tnew Applications synced in\tCPU per cycle\tpeak RSS\tAPI calls per cycle\tapply+dry-run\treconciles per cycle (mean)\twithin goal\t")
	largest := 0
	for _, r := range results {
		for i, idle := range r.idle {
			first := "-"
			if r.synced > 0 && i == 0 {
				first = fmt.Sprintf("%d in %.0fs (%.2fx one kubectl, %.2fx %d)", r.synced, r.firstSync.Seconds(),
					r.firstSync.Seconds()/r.kubectl.wall.Seconds(), r.firstSync.Seconds()/r.kubectlPar.wall.Seconds(), kubectlProcesses)
			}
			fmt.Fprintf(w, "%d\t%d\t%.0f\t%s\t%.2fs\t%.0f MiB\t%.0f (%.1f/s)\t%.0f\t%.0f (%s)\t%v\t\n", r.replicas, r.apps, r.owned[i], first,
				idle.cpu.Seconds(), mib(idle.mem.peak), idle.calls, idle.calls/o.resync.Seconds(), idle.applies+idle.dryRuns,
				idle.passes, idle.passTime.Round(time.Millisecond), r.withinGoal())
		}
		if r.replicas == 2 && r.withinGoal() {
			largest = max(largest, r.apps)
		}
	}
	_ = w.Flush()
	fmt.Fprintf(out, "goal per replica and idle cycle: CPU <= %s (%.0f%% of a core at the default resync %s), peak RSS <= %d MiB, no apply or dry-run call\n",
		goalCPU, 100*goalCPUShare, application.DefaultResync, goalRSS>>20)
	fmt.Fprintf(out, "largest count within the goal with 2 replicas: %d Applications (tried up to %d)\n", largest, results[len(results)-1].apps)
	one := results[0]
	if len(one.idle) == 1 && one.apps > 0 {
		n := float64(one.apps)
		fmt.Fprintf(out, "per Application, 1 replica: %.2f ms CPU and %.2f API calls per idle cycle; %.0f KiB of RSS (peak %.0f MiB less %.0f MiB with none)\n",
			1000*one.idle[0].cpu.Seconds()/n, one.idle[0].calls/n, (float64(one.idle[0].mem.peak)-float64(base.anon+base.file))/1024/n, mib(one.idle[0].mem.peak), mib(base.anon+base.file))
	}
}
