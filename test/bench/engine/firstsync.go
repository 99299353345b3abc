package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/test/envtest"
)

// kubectlProcesses is how many kubectl processes the parallel peer runs:
// the controller's operation processors (engine/controller/application's
// default), each applying a share of the Applications' objects.
const kubectlProcesses = 10

// firstSyncResult is one count of Applications of -part firstsync.
type firstSyncResult struct {
	apps int
	// kubectl is one kubectl process, kubectlPar kubectlProcesses of them,
	// tollgate the controller from creating the Applications to all
	// Synced and Healthy.
	kubectl, kubectlPar, tollgate measurement
}

// runFirstSync is -part firstsync: for each count of -counts, that many
// Applications of -app-objects objects that are healthy as soon as they
// exist (ConfigMaps, headless Services, ServiceAccounts, one wave, each
// Application into a namespace of its own, created with it), synced by
// one replica, beside the same objects written by one `kubectl apply
// --server-side` process and by kubectlProcesses of them, in the same
// run: the engine's own cost, apart from health waits, as the count grows.
func (b *bench) runFirstSync(ctx context.Context, o options, out io.Writer) error {
	counts, err := parseCounts(o.counts)
	if err != nil {
		return err
	}
	for _, n := range counts {
		for j := range n {
			b.files[filepath.Join(firstSyncPath(n, j), "objects.yaml")] = healthyManifests(firstSyncName(n, j), "", o.appObjects)
		}
	}
	if b.repoURL, err = writeRepo(filepath.Join(b.tmp, "repo"), b.files); err != nil {
		return err
	}
	if err := b.createProject(ctx); err != nil {
		return err
	}
	r, err := b.startReplica(ctx, o, "replica-1")
	if err != nil {
		return err
	}
	defer r.stop()
	var results []firstSyncResult
	for _, n := range counts {
		fmt.Fprintf(out, "first sync: %d Applications of %d objects...\n", n, o.appObjects)
		res := firstSyncResult{apps: n}
		if res.kubectl, err = b.kubectlMany(ctx, fmt.Sprintf("k1-%d", n), n, o.appObjects, 1); err != nil {
			return err
		}
		if res.kubectlPar, err = b.kubectlMany(ctx, fmt.Sprintf("kp-%d", n), n, o.appObjects, kubectlProcesses); err != nil {
			return err
		}
		before := r.kinds.snapshot()
		start := time.Now()
		for j := range n {
			name := firstSyncName(n, j)
			if err := b.env.Client.Create(ctx, b.newApp(name, firstSyncPath(n, j), "bench-"+name)); err != nil {
				return err
			}
		}
		if err := b.waitSynced(ctx, fmt.Sprintf("f%d-", n), n); err != nil {
			return r.c.explain(err)
		}
		res.tollgate = measurement{wall: time.Since(start), kinds: r.kinds.since(before)}
		res.tollgate.total = total(res.tollgate.kinds)
		results = append(results, res)
		fmt.Fprintf(out, "  kubectl %.1fs, %d kubectl processes %.1fs, tollgate %.1fs (%.2fx one kubectl); tollgate's API calls per Application:",
			res.kubectl.wall.Seconds(), kubectlProcesses, res.kubectlPar.wall.Seconds(), res.tollgate.wall.Seconds(), ratio(res.tollgate, res.kubectl))
		for _, c := range classes {
			fmt.Fprintf(out, " %s %.1f", c, float64(res.tollgate.kinds[c])/float64(n))
		}
		fmt.Fprintln(out)
	}
	reportFirstSync(out, o, results)
	return nil
}

// parseCounts reads -counts: comma-separated positive integers.
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-counts %q: want comma-separated positive integers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func firstSyncName(n, j int) string      { return fmt.Sprintf("f%d-%04d", n, j) }
func firstSyncPath(n, j int) string      { return "first/" + firstSyncName(n, j) }
func ratio(a, b measurement) float64     { return a.wall.Seconds() / b.wall.Seconds() }
func perApp(m measurement, n int) string { return fmt.Sprintf("%.3fs", m.wall.Seconds()/float64(n)) }

// healthyManifests returns n objects of one Application named prefix,
// healthy once they exist, in one wave: ConfigMaps, headless Services and
// ServiceAccounts in turn. With ns set they name it and a Namespace comes
// first (what kubectl applies); without, the Application's destination
// places them and CreateNamespace creates it.
func healthyManifests(prefix, ns string, n int) string {
	var b strings.Builder
	meta := func(name string) {
		fmt.Fprintf(&b, "metadata:\n  name: %s\n", name)
		if ns != "" {
			fmt.Fprintf(&b, "  namespace: %s\n", ns)
		}
	}
	if ns != "" {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n---\n", ns)
	}
	for i := range n {
		name := fmt.Sprintf("%s-%02d", prefix, i)
		switch i % 3 {
		case 0:
			b.WriteString("apiVersion: v1\nkind: ConfigMap\n")
			meta(name)
			fmt.Fprintf(&b, "data:\n  setting: value-%d\n", i)
		case 1:
			b.WriteString("apiVersion: v1\nkind: Service\n")
			meta(name)
			fmt.Fprintf(&b, "spec:\n  clusterIP: None\n  selector:\n    app: %s\n  ports:\n  - port: 80\n    targetPort: 8080\n", name)
		default:
			b.WriteString("apiVersion: v1\nkind: ServiceAccount\n")
			meta(name)
		}
		b.WriteString("---\n")
	}
	return b.String()
}

// kubectlMany writes the objects of n Applications (each into a
// namespace of its own, prefix-j) with procs `kubectl apply --server-side`
// processes at once, each applying every procs-th Application's file.
func (b *bench) kubectlMany(ctx context.Context, prefix string, n, objects, procs int) (measurement, error) {
	procs = min(procs, n)
	root := filepath.Join(b.tmp, prefix)
	dirs := make([]string, procs)
	for p := range procs {
		dirs[p] = filepath.Join(root, strconv.Itoa(p))
	}
	for j := range n {
		ns := fmt.Sprintf("%s-%04d", prefix, j)
		if err := writeFile(filepath.Join(dirs[j%procs], ns+".yaml"), healthyManifests(ns, ns, objects)); err != nil {
			return measurement{}, err
		}
	}
	return b.kubectlRun(ctx, prefix, dirs, "", "apply", "--server-side")
}

// kubectlRun runs one `kubectl VERB... -R -f DIR` process per directory of
// dirs at once (in namespace ns when set), through one counting proxy, and
// measures them together.
func (b *bench) kubectlRun(ctx context.Context, name string, dirs []string, ns string, verb ...string) (measurement, error) {
	counts := &breakdown{}
	kubeconfig := filepath.Join(b.tmp, name+".kubeconfig")
	stopProxy, err := serveProxy(b.env.Config, counts, kubeconfig)
	if err != nil {
		return measurement{}, err
	}
	defer stopProxy()
	start := time.Now()
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	for p, dir := range dirs {
		wg.Go(func() {
			args := append(slices.Clone(verb), "-R", "-f", dir)
			if ns != "" {
				args = append(args, "-n", ns)
			}
			errs[p] = b.kubectl(ctx, kubeconfig, filepath.Join(b.tmp, name+"-cache", strconv.Itoa(p)), args...)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return measurement{}, err
	}
	m := measurement{wall: time.Since(start), kinds: counts.snapshot()}
	m.total = total(m.kinds)
	return m, nil
}

// kubectl runs the test control plane's kubectl with args.
func (b *bench) kubectl(ctx context.Context, kubeconfig, cacheDir string, args ...string) error {
	kubectl := filepath.Join(envtest.BinaryDir(), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		return fmt.Errorf("kubectl not found: %w (run make tools)", err)
	}
	cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", cacheDir}, args...)...)
	cmd.Stdout = io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := stderr.String()
		if len(msg) > 2000 {
			msg = msg[:2000] + "..."
		}
		return fmt.Errorf("kubectl %s: %w: %s", args[0], err, msg)
	}
	return nil
}

// writeFile writes content to path, creating its directory.
func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// reportFirstSync prints the first-sync table and how the ratio to one
// kubectl process moved from the smallest count to the largest.
func reportFirstSync(out io.Writer, o options, results []firstSyncResult) {
	fmt.Fprintf(out, "\nfirst sync: %d healthy-at-once objects per Application, one wave, one controller replica\n", o.appObjects)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "Applications\tkubectl (1 process)\tkubectl (%d processes)\ttollgate\ttollgate / kubectl\ttollgate / kubectl x%d\tper Application: kubectl, tollgate\tAPI calls per Application: kubectl, tollgate\t\n", kubectlProcesses, kubectlProcesses)
	for _, r := range results {
		fmt.Fprintf(w, "%d\t%.1fs\t%.1fs\t%.1fs\t%.2fx\t%.2fx\t%s, %s\t%.1f, %.1f\t\n", r.apps, r.kubectl.wall.Seconds(), r.kubectlPar.wall.Seconds(), r.tollgate.wall.Seconds(),
			ratio(r.tollgate, r.kubectl), ratio(r.tollgate, r.kubectlPar), perApp(r.kubectl, r.apps), perApp(r.tollgate, r.apps),
			float64(r.kubectl.total)/float64(r.apps), float64(r.tollgate.total)/float64(r.apps))
	}
	_ = w.Flush()
	if len(results) > 1 {
		first, last := results[0], results[len(results)-1]
		fmt.Fprintf(out, "ratio to one kubectl at %d Applications / at %d: %.2f (goal: at most 1.2, and tollgate no slower than one kubectl)\n",
			last.apps, first.apps, ratio(last.tollgate, last.kubectl)/ratio(first.tollgate, first.kubectl))
	}
}

// scalePeers writes the objects of the n Applications of batch as kubectl
// would, in the same run as the controller syncs them: one `kubectl apply
// --server-side` process, then kubectlProcesses of them, each into a
// namespace of its own; their objects are deleted afterwards (not timed),
// so that the cluster the controller works on keeps its size.
func (b *bench) scalePeers(ctx context.Context, batch string, n int) (one, many measurement, err error) {
	for i, procs := range []int{1, kubectlProcesses} {
		name := fmt.Sprintf("k%d-%s", procs, batch)
		procs = min(procs, n)
		ns := "bench-" + name
		if err := b.env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return one, many, err
		}
		root := filepath.Join(b.tmp, name)
		dirs := make([]string, procs)
		for p := range procs {
			dirs[p] = filepath.Join(root, strconv.Itoa(p))
		}
		for j := range n {
			prefix := appPath(batch, j) + "/"
			for path, content := range b.files {
				if strings.HasPrefix(path, prefix) {
					if err := writeFile(filepath.Join(dirs[j%procs], path), content); err != nil {
						return one, many, err
					}
				}
			}
		}
		m, err := b.kubectlRun(ctx, name, dirs, ns, "apply", "--server-side")
		if err != nil {
			return one, many, err
		}
		if _, err := b.kubectlRun(ctx, name+"-delete", dirs, ns, "delete", "--wait=false", "--ignore-not-found"); err != nil {
			return one, many, err
		}
		if i == 0 {
			one = m
		} else {
			many = m
		}
	}
	return one, many, nil
}
