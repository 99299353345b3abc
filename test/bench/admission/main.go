// Command admission measures what tollgate's admission webhook adds to a
// write as clients see it: through a real kube-apiserver (the test control
// plane), with the shipped ValidatingWebhookConfiguration registered and
// then removed, in the same run, at the same client concurrency. Each
// round creates, updates and deletes a mix of Deployments, ConfigMaps,
// Secrets and Applications; rounds with and without the webhook alternate
// so that the machine's noise falls on both. It prints latency percentiles
// and throughput each way, and as its last line
//
//	admission p99 added: X ms at N requests/s (goal < 2 ms)
//
// where N is the throughput with the webhook. A last round runs against 2
// webhook replicas behind the one address the API server calls (a TCP
// proxy standing in for a Service) while one is restarted as a rolling
// update does, and counts the requests that failed. Run it with
// `make bench-admission` (it needs bin/k8s from `make tools`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/controlplane"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/test/envtest"
	"github.com/tollgate-dev/tollgate/webhook"
)

const (
	argocdNS = "argocd"
	loadNS   = "load"
)

func main() {
	duration := flag.Duration("duration", 5*time.Second, "length of one round")
	rounds := flag.Int("rounds", 3, "rounds each way (with and without the webhook, alternating)")
	concurrency := flag.Int("concurrency", 4, "clients writing at once")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the measured rounds (clients and webhook: this process) to `FILE`")
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard()) // client-go's "context deadline exceeded" at the end of each round
	log.SetOutput(io.Discard)      // the webhook servers' handshakes cut short as they stop
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *duration, *rounds, *concurrency, *cpuProfile, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-admission:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, duration time.Duration, rounds, concurrency int, cpuProfile string, out io.Writer) error {
	vwc, err := controlplane.ReadWebhookConfiguration(envtest.RepoRoot() + "/config/webhook/validating_webhook_configuration.yaml")
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	env, err := envtest.Start(envtest.Options{Scheme: scheme, Webhooks: crenvtest.WebhookInstallOptions{
		ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{vwc},
	}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		_ = env.Stop()
	}()
	reps, err := serveWebhook(ctx, env)
	if err != nil {
		return err
	}
	if err := fixtures(ctx, env.Client); err != nil {
		return err
	}
	// The registered configuration, with the caBundle envtest filled in.
	var registered admissionregistrationv1.ValidatingWebhookConfiguration
	if err := env.Client.Get(ctx, client.ObjectKey{Name: vwc.Name}, &registered); err != nil {
		return fmt.Errorf("read the webhook configuration: %w", err)
	}
	// No client-side rate limit: the API server, not the client, is what
	// limits the load.
	cfg := rest.CopyConfig(env.Config)
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	with, without := &stats{label: "with the webhook"}, &stats{label: "without"}
	var seq atomic.Int64
	// One warm-up round each way, not counted.
	for i := -1; i < rounds; i++ {
		if i == 0 && cpuProfile != "" {
			stopProfile, err := startCPUProfile(cpuProfile)
			if err != nil {
				return err
			}
			defer stopProfile()
		}
		for _, on := range []bool{true, false} {
			if err := setWebhook(ctx, env.Client, &registered, on); err != nil {
				return err
			}
			s := with
			if !on {
				s = without
			}
			if i < 0 {
				s = &stats{}
			}
			if err := load(ctx, c, duration, concurrency, &seq, s); err != nil {
				return err
			}
		}
	}
	summary, err := report(out, with, without, concurrency)
	if err != nil {
		return err
	}
	if err := rollingRestart(ctx, env.Client, c, reps, &registered, duration, concurrency, &seq, out); err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, summary)
	return err
}

// rollingRestart runs a round against 2 replicas while one of them is
// restarted, and reports the requests that failed. Its line comes before
// the summary line, which stays last.
func rollingRestart(ctx context.Context, admin, c client.Client, reps *replicas, vwc *admissionregistrationv1.ValidatingWebhookConfiguration, d time.Duration, concurrency int, seq *atomic.Int64, out io.Writer) error {
	if err := setWebhook(ctx, admin, vwc, true); err != nil {
		return err
	}
	if err := reps.add(ctx); err != nil {
		return err
	}
	s := &stats{}
	errs := make(chan error, 1)
	go func() {
		time.Sleep(d / 4)
		errs <- reps.restart(ctx, 0)
	}()
	if err := load(ctx, c, d, concurrency, seq, s); err != nil {
		return err
	}
	if err := <-errs; err != nil {
		return fmt.Errorf("restart a replica: %w", err)
	}
	before, after, other := reps.served(0, 0), reps.served(0, 1), reps.served(1, 0)
	_, err := fmt.Fprintf(out, "2 replicas, one restarted during the load: %d requests, %d failed (reviews over the run: the restarted replica %d before its restart and %d after, the other %d)\n",
		len(s.latencies)+s.failed, s.failed, before, after, other)
	if s.firstErr != nil {
		fmt.Fprintf(out, "first failure: %v\n", s.firstErr)
	}
	return err
}

// setWebhook registers or removes the webhook configuration and waits
// until the API server acts on it: a Deployment with a latest tag is
// denied while it is registered and admitted otherwise.
func setWebhook(ctx context.Context, c client.Client, vwc *admissionregistrationv1.ValidatingWebhookConfiguration, on bool) error {
	cur := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	err := c.Get(ctx, client.ObjectKey{Name: vwc.Name}, cur)
	switch {
	case on && err != nil:
		fresh := vwc.DeepCopy()
		fresh.ResourceVersion, fresh.UID = "", ""
		if err := c.Create(ctx, fresh); err != nil {
			return fmt.Errorf("register the webhook: %w", err)
		}
	case !on && err == nil:
		if err := c.Delete(ctx, cur); err != nil {
			return fmt.Errorf("remove the webhook: %w", err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		probe := deployment("probe", "nginx:latest")
		err := c.Create(ctx, probe, client.DryRunAll)
		if (err != nil) == on {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the API server did not %s the webhook within 30s", map[bool]string{true: "call", false: "stop calling"}[on])
}

// stats collects the latencies of one way.
type stats struct {
	// label names the way in the report.
	label     string
	mu        sync.Mutex
	latencies []time.Duration
	failed    int
	firstErr  error
	elapsed   time.Duration
}

// load runs concurrency clients for d, each cycling through the kinds:
// create, update, delete.
func load(ctx context.Context, c client.Client, d time.Duration, concurrency int, seq *atomic.Int64, s *stats) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			var mine []time.Duration
			failed := 0
			var firstErr error
			timed := func(fn func() error) bool {
				t := time.Now()
				err := fn()
				if ctx.Err() != nil {
					return false
				}
				if err != nil {
					failed++
					if firstErr == nil {
						firstErr = err
					}
					return false
				}
				mine = append(mine, time.Since(t))
				return true
			}
			for ctx.Err() == nil {
				n := seq.Add(1)
				obj := object(n)
				if !timed(func() error { return c.Create(ctx, obj) }) {
					continue
				}
				touch(obj)
				timed(func() error { return c.Update(ctx, obj) })
				timed(func() error { return c.Delete(ctx, obj) })
			}
			s.mu.Lock()
			s.latencies = append(s.latencies, mine...)
			s.failed += failed
			if s.firstErr == nil {
				s.firstErr = firstErr
			}
			s.mu.Unlock()
		})
	}
	wg.Wait()
	s.elapsed += time.Since(start)
	return nil
}

// object is the n-th object of the mix: a Deployment, a ConfigMap, a
// Secret or an Application, each admitted by the built-in rules, so that
// every request is judged and none drops out of the figures.
func object(n int64) client.Object {
	name := fmt.Sprintf("obj-%d", n)
	switch n % 4 {
	case 0:
		return deployment(name, "registry.example.com/web:1.2.3")
	case 1:
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: loadNS}, Data: map[string]string{"k": "v"}}
	case 2:
		// A placeholder Secret (no values) is admitted; one with values
		// is not (no-plaintext-secret), and would leave the mix.
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: loadNS, Annotations: map[string]string{"filled-by": "operator"}}}
	}
	return &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: argocdNS},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "load",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/load.git", Path: "apps", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: loadNS},
		},
	}
}

// touch changes obj for its update.
func touch(obj client.Object) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["touched"] = "true"
	obj.SetLabels(labels)
}

func deployment(name, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: loadNS},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
		},
	}
}

// fixtures creates the namespaces and the AppProject the Applications of
// the mix belong to.
func fixtures(ctx context.Context, c client.Client) error {
	for _, ns := range []string{argocdNS, loadNS} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	proj := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "load", Namespace: argocdNS},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{"https://git.example.com/*"},
			Destinations: []v1alpha1.ApplicationDestination{{Server: "https://kubernetes.default.svc", Namespace: loadNS}},
		},
	}
	if err := c.Create(ctx, proj); err != nil {
		return fmt.Errorf("create the AppProject: %w", err)
	}
	// The webhook's cache must see the AppProject before an Application of
	// it is admitted.
	time.Sleep(time.Second)
	return nil
}

// serveWebhook serves the webhook handler, with the built-in rules and an
// informer cache of Applications and AppProjects as `tollgate webhook`
// has, where the API server calls it.
func serveWebhook(ctx context.Context, env *envtest.Env) (*replicas, error) {
	c, err := envtest.WebhookCache(ctx, env.Config, cache.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		return nil, err
	}
	eval, err := policies.New(ctx, policies.DefaultOptions())
	if err != nil {
		return nil, fmt.Errorf("compile policies: %w", err)
	}
	h, err := webhook.NewHandler(webhook.Options{Config: webhook.DefaultConfig(), Evaluator: eval, Reader: c, Namespace: "tollgate-system"})
	if err != nil {
		return nil, err
	}
	return newReplicas(ctx, env.WebhookInstallOptions, webhook.NewHTTPHandler(h, logr.Discard()))
}

// replicas are webhook servers on ports of their own behind one address,
// the one the API server calls (as replicas behind a Service): a TCP proxy
// hands each new connection to the next ready replica.
type replicas struct {
	opts    crenvtest.WebhookInstallOptions
	handler http.Handler
	mu      sync.Mutex
	servers []*replica
	next    int
}

type replica struct {
	addr  string
	ready bool
	stop  context.CancelFunc
	done  chan struct{}
	// served counts the reviews each start of the replica answered.
	served []*atomic.Int64
}

// newReplicas listens on the address the API server calls and starts one
// replica behind it.
func newReplicas(ctx context.Context, opts crenvtest.WebhookInstallOptions, h http.Handler) (*replicas, error) {
	r := &replicas{opts: opts, handler: h}
	ln, err := net.Listen("tcp", net.JoinHostPort(opts.LocalServingHost, strconv.Itoa(opts.LocalServingPort)))
	if err != nil {
		return nil, fmt.Errorf("listen for the webhook: %w", err)
	}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	go r.proxy(ln)
	if err := r.add(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// add starts a replica on a free port and puts it in rotation once it
// serves.
func (r *replicas) add(ctx context.Context) error {
	rep := &replica{}
	r.mu.Lock()
	r.servers = append(r.servers, rep)
	r.mu.Unlock()
	return r.start(ctx, rep)
}

// start (re)starts replica rep.
func (r *replicas) start(ctx context.Context, rep *replica) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(r.opts.LocalServingHost, "0"))
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	srv := crwebhook.NewServer(crwebhook.Options{Host: r.opts.LocalServingHost, Port: port, CertDir: r.opts.LocalServingCertDir})
	served := &atomic.Int64{}
	srv.Register("/validate", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		served.Add(1)
		r.handler.ServeHTTP(w, req)
	}))
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Start(sctx)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for srv.StartedChecker()(nil) != nil {
		if time.Now().After(deadline) {
			stop()
			return errors.New("webhook server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.mu.Lock()
	rep.addr, rep.ready, rep.stop, rep.done = net.JoinHostPort(r.opts.LocalServingHost, strconv.Itoa(port)), true, stop, done
	rep.served = append(rep.served, served)
	r.mu.Unlock()
	return nil
}

// restart restarts replica i as a rolling update does: out of rotation
// first, connections drained by a graceful shutdown (HTTP/2 GOAWAY), then
// started again and back in rotation.
func (r *replicas) restart(ctx context.Context, i int) error {
	r.mu.Lock()
	rep := r.servers[i]
	rep.ready = false
	r.mu.Unlock()
	time.Sleep(time.Second) // endpoints propagate
	rep.stop()
	<-rep.done
	return r.start(ctx, rep)
}

// served is what start n of replica i answered.
func (r *replicas) served(i, n int) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i >= len(r.servers) || n >= len(r.servers[i].served) {
		return 0
	}
	return r.servers[i].served[n].Load()
}

// proxy passes each connection to the next ready replica.
func (r *replicas) proxy(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		var addr string
		for range r.servers {
			rep := r.servers[r.next%len(r.servers)]
			r.next++
			if rep.ready {
				addr = rep.addr
				break
			}
		}
		r.mu.Unlock()
		go pipe(conn, addr)
	}
}

// pipe copies between conn and the replica at addr.
func pipe(conn net.Conn, addr string) {
	defer conn.Close()
	if addr == "" {
		return
	}
	up, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer up.Close()
	go func() {
		_, _ = io.Copy(up, conn)
		up.Close()
	}()
	_, _ = io.Copy(conn, up)
}

// percentile returns the p-th percentile of sorted latencies.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// report prints both ways and the added latency, and returns the summary
// line.
func report(out io.Writer, with, without *stats, concurrency int) (summary string, err error) {
	slices.Sort(with.latencies)
	slices.Sort(without.latencies)
	added := func(p float64) time.Duration {
		return percentile(with.latencies, p) - percentile(without.latencies, p)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "admission through kube-apiserver, %d clients\tp50\tp95\tp99\trequests/s\tfailed\n", concurrency)
	for _, s := range []*stats{with, without} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f\t%d\n", s.label, ms(percentile(s.latencies, 0.5)), ms(percentile(s.latencies, 0.95)), ms(percentile(s.latencies, 0.99)), s.rate(), s.failed)
	}
	fmt.Fprintf(tw, "added\t%s\t%s\t%s\t\t\n", ms(added(0.5)), ms(added(0.95)), ms(added(0.99)))
	if err := tw.Flush(); err != nil {
		return "", err
	}
	for _, s := range []*stats{with, without} {
		if s.firstErr != nil {
			fmt.Fprintf(out, "first failure %s: %v\n", s.label, s.firstErr)
		}
	}
	return fmt.Sprintf("admission p99 added: %.2f ms at %.0f requests/s (goal < 2 ms)",
		float64(added(0.99))/float64(time.Millisecond), with.rate()), nil
}

// rate is the requests per second that succeeded.
func (s *stats) rate() float64 { return float64(len(s.latencies)) / s.elapsed.Seconds() }

// startCPUProfile starts writing a CPU profile to path; stop ends it.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
