// Command webhookload measures tollgate's admission webhook under load, the
// way the API server uses it: over HTTPS with keep-alive, with real
// AdmissionReview requests. It serves webhook.Handler (built-in rules, an
// in-memory cache holding one AppProject and one Application) on
// 127.0.0.1 with a self-signed certificate from package certs, then sends a
// mix of Deployment, Secret and Application reviews at rising concurrency
// for a bounded time each, and prints requests per second, latency
// percentiles and CPU time per request:
//
//	go run ./test/bench/webhookload -duration 3s
//
// Server and load generator share the process, so CPU per request includes
// the client's TLS and JSON work. Everything stays on loopback and the
// command stops by itself.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/certs"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/webhook"
)

func main() {
	duration := flag.Duration("duration", 3*time.Second, "how long each concurrency level runs")
	levels := flag.String("concurrency", "1,4,16,64", "comma-separated concurrency levels")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *duration, *levels, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhookload:", err)
		os.Exit(1)
	}
}

// run serves the webhook, checks each request kind once, then runs the load
// levels.
func run(ctx context.Context, duration time.Duration, levelList string, out io.Writer) error {
	if duration <= 0 || duration > 5*time.Minute {
		return fmt.Errorf("-duration %s: want more than 0 and at most 5m", duration)
	}
	levels, err := parseLevels(levelList)
	if err != nil {
		return err
	}
	// Safety net: the whole run is bounded even if something stalls.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(len(levels))*(duration+10*time.Second)+time.Minute)
	defer cancel()

	srv, client, err := serve(ctx)
	if err != nil {
		return err
	}
	defer srv.shutdown()

	for _, k := range kinds {
		if err := check(ctx, client, srv.url, k); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "tollgate webhook over HTTPS on %s, GOMAXPROCS=%d, %s per level, mix: %s\n\n",
		srv.addr, runtime.GOMAXPROCS(0), duration, kindNames())
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "concurrency\trequests\treq/s\tp50\tp95\tp99\tCPU/req\terrors\t")
	for _, n := range levels {
		r, err := load(ctx, client, srv.url, n, duration)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%d\t\n",
			n, r.requests, r.rate(), micros(r.percentile(50)), micros(r.percentile(95)), micros(r.percentile(99)),
			micros(r.cpuPerRequest()), r.errors)
	}
	return tw.Flush()
}

// parseLevels parses "1,4,16,64".
func parseLevels(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return nil, fmt.Errorf("-concurrency %q: %q is not a number from 1 to 1024", s, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// --- the server ----------------------------------------------------------------

// server is the webhook on loopback.
type server struct {
	addr, url string
	http      *http.Server
	done      chan error
}

// shutdown stops the server and waits for it.
func (s *server) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.http.Shutdown(ctx)
	<-s.done
}

// serve starts the handler over HTTPS on 127.0.0.1 and returns a keep-alive
// client that trusts its certificate.
func serve(ctx context.Context) (*server, *http.Client, error) {
	now := time.Now()
	ca, err := certs.CreateCA(now, 24*time.Hour, rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	leaf, err := certs.CreateServing(ca, []string{"localhost"}, now, time.Hour, rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	cert, err := tls.X509KeyPair(leaf.CertPEM, leaf.KeyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("load serving certificate: %w", err)
	}

	eval, err := policies.New(ctx, policies.DefaultOptions())
	if err != nil {
		return nil, nil, err
	}
	h, err := webhook.NewHandler(webhook.Options{
		Config:    webhook.DefaultConfig(),
		Evaluator: eval,
		Reader:    newMemReader(project, app),
		Namespace: "tollgate-system",
	})
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/validate", webhook.NewHTTPHandler(h, logr.Discard()))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("listen on loopback: %w", err)
	}
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			MinVersion:   tls.VersionTLS12,
			NextProtos:   []string{"http/1.1"},
		},
	}
	s := &server{addr: ln.Addr().String(), http: hs, done: make(chan error, 1)}
	s.url = "https://" + s.addr + "/validate"
	go func() { s.done <- hs.ServeTLS(ln, "", "") }()

	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	client := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12},
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 1024,
			IdleConnTimeout:     time.Minute,
			ForceAttemptHTTP2:   false,
		},
	}
	return s, client, nil
}

// --- the load ------------------------------------------------------------------

// result is one concurrency level's measurements.
type result struct {
	requests  int
	errors    int
	elapsed   time.Duration
	cpu       time.Duration
	latencies []time.Duration
}

func (r result) rate() float64 { return float64(r.requests) / r.elapsed.Seconds() }

func (r result) percentile(p int) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[min(len(r.latencies)-1, len(r.latencies)*p/100)]
}

func (r result) cpuPerRequest() time.Duration {
	if r.requests == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.requests)
}

// load runs n workers sending the request mix for d.
func load(ctx context.Context, client *http.Client, url string, n int, d time.Duration) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	perWorker := make([][]time.Duration, n)
	errs := make([]int, n)
	cpu0, err := cpuTime()
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 4096)
			for i := w; ctx.Err() == nil; i++ {
				k := kinds[i%len(kinds)]
				t0 := time.Now()
				err := post(ctx, client, url, k.body)
				if ctx.Err() != nil {
					break // the level ended mid-request: not a sample
				}
				if err != nil {
					errs[w]++
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			perWorker[w] = lat
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, err := cpuTime()
	if err != nil {
		return result{}, err
	}
	r := result{elapsed: elapsed, cpu: cpu1 - cpu0}
	for w := range n {
		r.latencies = append(r.latencies, perWorker[w]...)
		r.errors += errs[w]
	}
	r.requests = len(r.latencies)
	slices.Sort(r.latencies)
	return r, nil
}

// post sends one review and reads the whole answer, so the connection is
// reused.
func post(ctx context.Context, client *http.Client, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

// check sends one request of a kind and verifies the decision, so the
// numbers are about real decisions.
func check(ctx context.Context, client *http.Client, url string, k kind) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(k.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("check %s: %w", k.name, err)
	}
	defer resp.Body.Close()
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&review); err != nil {
		return fmt.Errorf("check %s: decode response (HTTP %d): %w", k.name, resp.StatusCode, err)
	}
	if review.Response == nil || review.Response.Allowed != k.allowed {
		return fmt.Errorf("check %s: want allowed=%v, got %+v", k.name, k.allowed, review.Response)
	}
	return nil
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// micros formats a duration in microseconds.
func micros(d time.Duration) string {
	return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
}

// --- the requests --------------------------------------------------------------

// kind is one request of the mix with the decision it gets.
type kind struct {
	name    string
	body    []byte
	allowed bool
}

func kindNames() string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

var (
	project = map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "AppProject",
		"metadata":   map[string]any{"name": "team", "namespace": "argocd"},
		"spec": map[string]any{
			"sourceRepos":  []any{"https://github.com/example/*"},
			"destinations": []any{map[string]any{"server": "https://kubernetes.default.svc", "namespace": "team-a"}},
		},
	}
	app = application("web")

	kinds = []kind{
		{"Deployment (tracked by an Application, allowed)", reviewOf(admissionv1.Create, deployment()), true},
		{"Secret (plain text, denied)", reviewOf(admissionv1.Create, map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "db", "namespace": "team-a"},
			"data":     map[string]any{"password": "aHVudGVyMg=="},
		}), false},
		{"Application (project from cache, allowed)", reviewOf(admissionv1.Create, application("api")), true},
	}
)

func application(name string) map[string]any {
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Application",
		"metadata": map[string]any{
			"name": name, "namespace": "argocd",
			"finalizers": []any{"resources-finalizer.argocd.argoproj.io"},
		},
		"spec": map[string]any{
			"project":     "team",
			"source":      map[string]any{"repoURL": "https://github.com/example/apps.git", "path": name, "targetRevision": "main"},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "team-a"},
		},
	}
}

func deployment() map[string]any {
	labels := map[string]any{"app": "api"}
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "api", "namespace": "team-a", "labels": labels,
			"annotations": map[string]any{webhook.TrackingIDAnnotation: "web:apps/Deployment:team-a/api"},
		},
		"spec": map[string]any{
			"replicas": 3,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "api", "image": "ghcr.io/example/api:1.4.2",
						"ports": []any{map[string]any{"containerPort": 8080}}},
					map[string]any{"name": "proxy", "image": "envoyproxy/envoy@sha256:" + strings.Repeat("ab", 32)},
				}},
			},
		},
	}
}

// reviewOf encodes an AdmissionReview for obj as the API server sends it.
func reviewOf(op admissionv1.Operation, obj map[string]any) []byte {
	md := obj["metadata"].(map[string]any)
	gv, err := schema.ParseGroupVersion(obj["apiVersion"].(string))
	if err != nil {
		panic(err) // static data
	}
	kind := obj["kind"].(string)
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	ns, _ := md["namespace"].(string)
	b, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID("00000000-0000-0000-0000-000000000001"),
			Kind:      metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: kind},
			Resource:  metav1.GroupVersionResource{Group: gv.Group, Version: gv.Version, Resource: strings.ToLower(kind) + "s"},
			Name:      md["name"].(string),
			Namespace: ns,
			Operation: op,
			UserInfo:  authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}},
			Object:    rawExtension(raw),
		},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// errUnsupported is returned by memReader for objects it does not hold.
var errUnsupported = errors.New("memReader holds only typed Applications and AppProjects")
