package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// stats collects the requests of one way (with or without the webhook)
// over its rounds.
type stats struct {
	// label names the way in the report.
	label     string
	mu        sync.Mutex
	latencies []time.Duration
	failed    int
	firstErr  error
	elapsed   time.Duration
	// cpu is the CPU time this process and its children (the API server
	// and etcd) spent over the rounds.
	cpu cpuTimes
	// handled is how long the webhook's handler took for each review.
	handled []time.Duration
}

// record adds one request's outcome.
func (s *stats) record(lat time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failed++
		if s.firstErr == nil {
			s.firstErr = err
		}
		return
	}
	s.latencies = append(s.latencies, lat)
}

// rate is the requests per second that succeeded.
func (s *stats) rate() float64 { return float64(len(s.latencies)) / s.elapsed.Seconds() }

// cpuPerRequest is the CPU time each request that succeeded cost, over
// the processes.
func (s *stats) cpuPerRequest() cpuTimes { return s.cpu.per(len(s.latencies)) }

// load runs concurrency clients for d, each sending its next sequence as
// soon as the last is answered.
func load(ctx context.Context, c client.Client, d time.Duration, concurrency int, seq *atomic.Int64, s *stats) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for ctx.Err() == nil {
				sequence(ctx, c, seq.Add(1), time.Now(), s)
			}
		})
	}
	wg.Wait()
}

// paced starts rate requests' worth of sequences per second for d, each
// when it is due whether or not the ones before it were answered (an open
// loop: a slow answer does not hold back the next arrival, so it is not
// hidden from the figures), and waits for them to finish.
func paced(ctx context.Context, c client.Client, d time.Duration, rate float64, seq *atomic.Int64, s *stats) {
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	interval := time.Duration(float64(time.Second) * requestsPerSequence / rate)
	var wg sync.WaitGroup
	start := time.Now()
	for due := start; due.Sub(start) < d; due = due.Add(interval) {
		time.Sleep(time.Until(due))
		wg.Go(func() { sequence(ctx, c, seq.Add(1), due, s) })
	}
	wg.Wait()
}

// requestsPerSequence is how many requests a sequence sends.
const requestsPerSequence = 3

// round runs one round of load and adds its time, CPU and handler times
// to s.
func round(ctx context.Context, c client.Client, d time.Duration, concurrency int, rate float64, seq *atomic.Int64, s *stats) {
	handled.take()
	start, cpuStart := time.Now(), treeCPU()
	if rate > 0 {
		paced(ctx, c, d, rate, seq, s)
	} else {
		load(ctx, c, d, concurrency, seq, s)
	}
	s.elapsed += time.Since(start)
	s.cpu = s.cpu.add(treeCPU().sub(cpuStart))
	s.handled = append(s.handled, handled.take()...)
}

// sequence creates, updates and deletes the n-th object of the mix,
// recording each request; the requests the round's end cuts short are not
// recorded.
func sequence(ctx context.Context, c client.Client, n int64, due time.Time, s *stats) {
	obj := object(n)
	timed := func(fn func() error) bool {
		t := due
		err := fn()
		due = time.Now()
		if ctx.Err() != nil {
			return false
		}
		s.record(time.Since(t), err)
		return err == nil
	}
	if !timed(func() error { return c.Create(ctx, obj) }) {
		return
	}
	touch(obj)
	timed(func() error { return c.Update(ctx, obj) })
	timed(func() error { return c.Delete(ctx, obj) })
}

// object is the n-th object of the mix: a Deployment, a ConfigMap, a
// Secret or an Application, each admitted by the built-in rules, so that
// every request is judged and none drops out of the figures.
func object(n int64) client.Object {
	name := fmt.Sprintf("obj-%d", n)
	switch n % 4 {
	case 0:
		return testutil.Deployment(loadNS, name, "registry.example.com/web:1.2.3")
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

// percentile returns the p-th percentile of sorted latencies.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// report prints the ways of one load under title (tollgate, the no-op
// peer, none), the latency and the CPU each webhook added to the way
// without, and tollgate's handler's own time; it returns the p99 tollgate
// and the no-op webhook added.
func report(out io.Writer, title string, ways []way) (p99Added, noopAdded time.Duration, err error) {
	tollgate, peer, none := ways[0].stats, ways[1].stats, ways[2].stats
	for _, w := range ways {
		slices.Sort(w.stats.latencies)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tp50\tp95\tp99\trequests/s\tCPU/request\tfailed\n", title)
	for _, w := range ways {
		s := w.stats
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f\t%s\t%d\n", s.label, ms(percentile(s.latencies, 0.5)), ms(percentile(s.latencies, 0.95)),
			ms(percentile(s.latencies, 0.99)), s.rate(), us(s.cpuPerRequest().total()), s.failed)
	}
	added := func(s *stats, p float64) time.Duration {
		return percentile(s.latencies, p) - percentile(none.latencies, p)
	}
	for _, s := range []*stats{tollgate, peer} {
		fmt.Fprintf(tw, "added %s\t%s\t%s\t%s\t%.2fx\t%s\t\n", strings.TrimPrefix(s.label, "with "), ms(added(s, 0.5)), ms(added(s, 0.95)), ms(added(s, 0.99)),
			s.rate()/none.rate(), us(s.cpuPerRequest().total()-none.cpuPerRequest().total()))
	}
	if err := tw.Flush(); err != nil {
		return 0, 0, err
	}
	for _, s := range []*stats{tollgate, peer} {
		extra := s.cpuPerRequest().sub(none.cpuPerRequest())
		fmt.Fprintf(out, "CPU added per request %s: %s in this process (webhook and clients), %s in kube-apiserver, %s in etcd\n",
			s.label, us(extra.self), us(extra.apiServer), us(extra.etcd))
	}
	slices.Sort(tollgate.handled)
	fmt.Fprintf(out, "tollgate's handler, %d reviews: p50 %s, p95 %s, p99 %s, max %s\n", len(tollgate.handled),
		ms(percentile(tollgate.handled, 0.5)), ms(percentile(tollgate.handled, 0.95)), ms(percentile(tollgate.handled, 0.99)), ms(percentile(tollgate.handled, 1)))
	for _, w := range ways {
		if w.stats.firstErr != nil {
			fmt.Fprintf(out, "first failure %s: %v\n", w.stats.label, w.stats.firstErr)
		}
	}
	return added(tollgate, 0.99), added(peer, 0.99), nil
}
