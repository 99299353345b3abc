// Command admission measures what tollgate's admission webhook adds to a
// write as clients see it: through a real kube-apiserver (the test control
// plane), with the shipped ValidatingWebhookConfiguration. Clients create,
// update and delete a mix of Deployments, ConfigMaps, Secrets and
// Applications as fast as the API server answers, in rounds that take
// turns: with tollgate registered, with a no-op webhook (the peer: the
// same server and configuration, answering allowed without judging), and
// with none, so that the machine's noise falls on all three. It prints
// each way's latency percentiles, throughput and CPU per request (this
// process, which serves the webhooks and runs the clients, kube-apiserver
// and etcd), what each webhook added to the way without, and the time
// tollgate's handler took per review. At saturation, Little's law makes
// the latency a webhook adds its loss of throughput: the no-op's figures
// are the floor any webhook starts from on the machine. With -rate, the
// requests are sent at that rate, each when it is due whatever the answers
// before it (an open loop, below saturation), and each latency counts from
// when its request was due. The last line reads
//
//	admission p99 added: X ms at N requests/s (goal < 2 ms)
//
// for tollgate, N its throughput. A last round runs against 2 tollgate
// replicas behind the one address the API server calls (a TCP proxy
// standing in for a Service) while one is restarted as a rolling update
// does, and counts the requests that failed. Run it with
// `make bench-admission` (it needs bin/k8s from `make tools`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
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

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/controlplane"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/test/envtest"
	"github.com/tollgate-dev/tollgate/test/testutil"
	"github.com/tollgate-dev/tollgate/webhook"
)

const (
	argocdNS = "argocd"
	loadNS   = "load"
)

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "length of one round")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds each way (tollgate, the no-op webhook, none), in turn")
	flag.IntVar(&o.concurrency, "concurrency", 4, "clients writing at once")
	flag.Float64Var(&o.rate, "rate", 0, "send this many requests per second, each when it is due (an open loop) instead of -concurrency clients each waiting for its answer")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the measured rounds (clients and webhook: this process) to `FILE`")
	flag.StringVar(&o.apiProfile, "apiserver-cpuprofile", "", "write a CPU profile of kube-apiserver over the first measured round with tollgate to `FILE`")
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard()) // client-go's "context deadline exceeded" at the end of each round
	log.SetOutput(io.Discard)      // the webhook servers' handshakes cut short as they stop
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-admission:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	duration    time.Duration
	rounds      int
	concurrency int
	rate        float64
	cpuProfile  string
	apiProfile  string
}

func run(ctx context.Context, o options, out io.Writer) error {
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
	// The measured rounds call the one replica directly, as the API
	// server's connection reaches a webhook pod through a Service: the
	// kernel forwards it (kube-proxy's rules), no process copies its
	// bytes. The proxy in front of the replicas is for the rolling
	// restart's round only.
	direct := registered.DeepCopy()
	for i := range direct.Webhooks {
		url := "https://" + reps.addr(0) + "/validate"
		direct.Webhooks[i].ClientConfig.URL = &url
	}
	// No client-side rate limit: the API server, not the client, is what
	// limits the load.
	cfg := rest.CopyConfig(env.Config)
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	noop, err := serveNoop(ctx, env.WebhookInstallOptions)
	if err != nil {
		return err
	}
	peer := direct.DeepCopy()
	for i := range peer.Webhooks {
		url := "https://" + noop.addr(0) + noopPath
		peer.Webhooks[i].ClientConfig.URL = &url
	}
	if o.cpuProfile != "" {
		stopProfile, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	b := &bench{ctx: ctx, admin: env.Client, cfg: env.Config, c: c, o: o}
	ways := func() []way {
		return []way{
			{stats: &stats{label: "with tollgate"}, vwc: direct},
			{stats: &stats{label: "with a no-op webhook"}, vwc: peer},
			{stats: &stats{label: "without"}},
		}
	}

	// One warm-up round each way, not counted.
	if err := b.rounds(1, ways(), ""); err != nil {
		return err
	}
	sat := ways()
	if err := b.rounds(o.rounds, sat, o.apiProfile); err != nil {
		return err
	}
	title := fmt.Sprintf("admission through kube-apiserver, %d clients", o.concurrency)
	if o.rate > 0 {
		title = fmt.Sprintf("admission through kube-apiserver, %.0f requests/s sent open-loop", o.rate)
	}
	added, floor, err := report(out, title, sat)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	if err := rollingRestart(ctx, env.Client, c, reps, &registered, o.duration, o.concurrency, &b.seq, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "a no-op webhook's p99 added in the same rounds: %.2f ms at %.0f requests/s (the floor of any webhook here)\n",
		float64(floor)/float64(time.Millisecond), sat[1].stats.rate())
	_, err = fmt.Fprintf(out, "admission p99 added: %.2f ms at %.0f requests/s (goal < 2 ms)\n",
		float64(added)/float64(time.Millisecond), sat[0].stats.rate())
	return err
}

// bench is what the rounds share.
type bench struct {
	ctx   context.Context
	admin client.Client // registers and removes the webhook
	cfg   *rest.Config  // the admin's, for kube-apiserver's profile
	c     client.Client // the load's client, without a rate limit
	o     options
	seq   atomic.Int64
}

// A way is one of the ways a round runs: the webhook configuration
// registered (nil: none) and the stats its rounds collect.
type way struct {
	stats *stats
	vwc   *admissionregistrationv1.ValidatingWebhookConfiguration
}

// rounds runs n rounds each way, in turn. With apiProfile,
// kube-apiserver's CPU profile over the first round of the first way is
// written there.
func (b *bench) rounds(n int, ways []way, apiProfile string) error {
	for i := range n {
		for j, w := range ways {
			if err := useWebhook(b.ctx, b.admin, w.vwc); err != nil {
				return err
			}
			var apiDone chan error
			if i == 0 && j == 0 && apiProfile != "" {
				apiDone = make(chan error, 1)
				go func() { apiDone <- apiServerProfile(b.ctx, b.cfg, b.o.duration, apiProfile) }()
			}
			round(b.ctx, b.c, b.o.duration, b.o.concurrency, b.o.rate, &b.seq, w.stats)
			if apiDone != nil {
				if err := <-apiDone; err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// useWebhook registers vwc in place of what is registered (nil: nothing)
// and waits until the API server acts on it, as two dry-run probes show:
// tollgate denies a Deployment with a latest tag, the no-op webhook denies
// the one named noopProbe; with no webhook both are admitted.
func useWebhook(ctx context.Context, c client.Client, vwc *admissionregistrationv1.ValidatingWebhookConfiguration) error {
	cur := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	err := c.Get(ctx, client.ObjectKey{Name: webhookName}, cur)
	if err == nil && (vwc == nil || *cur.Webhooks[0].ClientConfig.URL != *vwc.Webhooks[0].ClientConfig.URL) {
		if err := c.Delete(ctx, cur); err != nil {
			return fmt.Errorf("remove the webhook: %w", err)
		}
		err = errors.New("removed")
	}
	if err != nil && vwc != nil {
		fresh := vwc.DeepCopy()
		fresh.ResourceVersion, fresh.UID = "", ""
		if err := c.Create(ctx, fresh); err != nil {
			return fmt.Errorf("register the webhook: %w", err)
		}
	}
	wantTollgate := vwc != nil && !strings.Contains(*vwc.Webhooks[0].ClientConfig.URL, noopPath)
	wantNoop := vwc != nil && !wantTollgate
	var tollgate, noop error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		tollgate = c.Create(ctx, testutil.Deployment(loadNS, "probe", "nginx:latest"), client.DryRunAll)
		noop = c.Create(ctx, testutil.Deployment(loadNS, noopProbe, "nginx:1.27.3"), client.DryRunAll)
		if (tollgate != nil) == wantTollgate && (noop != nil) == wantNoop {
			return nil
		}
	}
	return fmt.Errorf("the API server did not switch webhooks within 30s (tollgate wanted %t, the no-op %t; the probes: %v; %v)", wantTollgate, wantNoop, tollgate, noop)
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
