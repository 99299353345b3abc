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
// where N is the throughput with the webhook. Run it with
// `make bench-admission` (it needs bin/k8s from `make tools`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
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
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard()) // client-go's "context deadline exceeded" at the end of each round
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *duration, *rounds, *concurrency, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-admission:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, duration time.Duration, rounds, concurrency int, out io.Writer) error {
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
	if err := serveWebhook(ctx, env); err != nil {
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
	with, without := &stats{}, &stats{}
	var seq atomic.Int64
	// One warm-up round each way, not counted.
	for i := -1; i < rounds; i++ {
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
	return report(out, with, without, concurrency)
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
func serveWebhook(ctx context.Context, env *envtest.Env) error {
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		return fmt.Errorf("create cache: %w", err)
	}
	if err := webhook.IndexApplications(ctx, c); err != nil {
		return err
	}
	if _, err := c.GetInformer(ctx, webhook.NewAppProject()); err != nil {
		return fmt.Errorf("watch AppProjects: %w", err)
	}
	go func() { _ = c.Start(ctx) }()
	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !c.WaitForCacheSync(syncCtx) {
		return errors.New("webhook cache did not sync")
	}
	eval, err := policies.New(ctx, policies.DefaultOptions())
	if err != nil {
		return fmt.Errorf("compile policies: %w", err)
	}
	h, err := webhook.NewHandler(webhook.Options{Config: webhook.DefaultConfig(), Evaluator: eval, Reader: c, Namespace: "tollgate-system"})
	if err != nil {
		return err
	}
	opts := env.WebhookInstallOptions
	srv := crwebhook.NewServer(crwebhook.Options{Host: opts.LocalServingHost, Port: opts.LocalServingPort, CertDir: opts.LocalServingCertDir})
	srv.Register("/validate", webhook.NewHTTPHandler(h, logr.Discard()))
	go func() { _ = srv.Start(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for srv.StartedChecker()(nil) != nil {
		if time.Now().After(deadline) {
			return errors.New("webhook server did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
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

// report prints both ways and the added latency.
func report(out io.Writer, with, without *stats, concurrency int) error {
	rows := []struct {
		name string
		s    *stats
	}{{"with the webhook", with}, {"without", without}}
	p99 := map[string]time.Duration{}
	rate := map[string]float64{}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "admission through kube-apiserver, %d clients\tp50\tp95\tp99\trequests/s\tfailed\n", concurrency)
	for _, r := range rows {
		slices.Sort(r.s.latencies)
		rate[r.name] = float64(len(r.s.latencies)) / r.s.elapsed.Seconds()
		p99[r.name] = percentile(r.s.latencies, 0.99)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f\t%d\n", r.name, ms(percentile(r.s.latencies, 0.5)), ms(percentile(r.s.latencies, 0.95)), ms(p99[r.name]), rate[r.name], r.s.failed)
	}
	fmt.Fprintf(tw, "added\t%s\t%s\t%s\t\t\n",
		ms(percentile(with.latencies, 0.5)-percentile(without.latencies, 0.5)),
		ms(percentile(with.latencies, 0.95)-percentile(without.latencies, 0.95)),
		ms(p99["with the webhook"]-p99["without"]))
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.s.firstErr != nil {
			fmt.Fprintf(out, "first failure %s: %v\n", r.name, r.s.firstErr)
		}
	}
	_, err := fmt.Fprintf(out, "admission p99 added: %.2f ms at %.0f requests/s (goal < 2 ms)\n",
		float64(p99["with the webhook"]-p99["without"])/float64(time.Millisecond), rate["with the webhook"])
	return err
}
