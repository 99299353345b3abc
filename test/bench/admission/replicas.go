package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
)

// rollingRestart runs a round against 2 replicas while one of them is
// restarted, and reports the requests that failed. Its line comes before
// the summary line, which stays last.
func rollingRestart(ctx context.Context, admin, c client.Client, reps *replicas, vwc *admissionregistrationv1.ValidatingWebhookConfiguration, d time.Duration, concurrency int, seq *atomic.Int64, out io.Writer) error {
	if err := useWebhook(ctx, admin, vwc); err != nil {
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
	load(ctx, c, d, concurrency, seq, s)
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

// replicas are webhook servers on ports of their own behind one address,
// the one the API server calls (as replicas behind a Service): a TCP proxy
// hands each new connection to the next ready replica.
type replicas struct {
	opts    crenvtest.WebhookInstallOptions
	path    string // where the handler is served
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
	r := &replicas{opts: opts, path: "/validate", handler: h}
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
	srv.Register(r.path, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		served.Add(1)
		t := time.Now()
		r.handler.ServeHTTP(w, req)
		handled.add(time.Since(t))
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

// addr is the address replica i serves on.
func (r *replicas) addr(i int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.servers[i].addr
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

// handled collects how long the webhook's handler took for each review
// (from the request's headers to its answer), as its server saw it.
var handled durations

// durations is a list of durations safe for concurrent use.
type durations struct {
	mu   sync.Mutex
	list []time.Duration
}

func (d *durations) add(v time.Duration) {
	d.mu.Lock()
	d.list = append(d.list, v)
	d.mu.Unlock()
}

// take returns the list and empties it.
func (d *durations) take() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.list
	d.list = nil
	return out
}
