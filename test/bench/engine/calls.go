package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// Request classes of the breakdown.
const (
	classApply  = "apply"    // server-side apply that changes the cluster
	classDryRun = "dry-run"  // server-side apply with dryRun=All
	classRead   = "get/list" // GET without watch
	classWatch  = "watch"
	classPatch  = "patch" // other PATCH (status merge patches)
	classWrite  = "create/update/delete"
)

var classes = []string{classApply, classDryRun, classRead, classWatch, classPatch, classWrite}

// breakdown counts API requests by class. The zero value is ready.
type breakdown struct {
	mu     sync.Mutex
	counts map[string]int64
}

func (b *breakdown) observe(req *http.Request) {
	class := classify(req)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.counts == nil {
		b.counts = map[string]int64{}
	}
	b.counts[class]++
}

// snapshot returns a copy of the counts.
func (b *breakdown) snapshot() map[string]int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]int64, len(b.counts))
	for k, v := range b.counts {
		out[k] = v
	}
	return out
}

// since returns the counts added after before.
func (b *breakdown) since(before map[string]int64) map[string]int64 {
	now := b.snapshot()
	for k, v := range before {
		now[k] -= v
	}
	return now
}

func total(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func classify(req *http.Request) string {
	switch req.Method {
	case http.MethodGet:
		if req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1" {
			return classWatch
		}
		return classRead
	case http.MethodPatch:
		if strings.HasPrefix(req.Header.Get("Content-Type"), string(types.ApplyPatchType)) {
			if req.URL.Query().Get("dryRun") != "" {
				return classDryRun
			}
			return classApply
		}
		return classPatch
	}
	return classWrite
}

// countingProxy is a plain-HTTP reverse proxy in front of the API server,
// authenticating with cfg, that counts what passes through. kubectl and the
// controller each reach the API server through one of their own (see
// serveProxy), so their calls are counted apart.
func countingProxy(cfg *rest.Config, b *breakdown) (http.Handler, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = transport
	// Flush every write at once: watches are long-lived streams.
	proxy.FlushInterval = -1
	proxy.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		if r.Context().Err() != nil {
			return // the client went away (a watch ended, the controller stopped)
		}
		http.Error(w, "bench proxy: "+err.Error(), http.StatusBadGateway)
	}
	trace := os.Getenv("BENCH_TRACE")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.observe(r)
		if trace != "" && strings.Contains(r.URL.String(), trace) {
			fmt.Fprintf(os.Stderr, "BENCH_TRACE %s %s %s %s\n", time.Now().Format("15:04:05.000"), classify(r), r.Method, r.URL)
		}
		proxy.ServeHTTP(w, r)
	}), nil
}

// serveProxy serves countingProxy(cfg, b) on a free loopback port and
// writes a kubeconfig pointing at it to kubeconfig. The server has no
// request or write timeout, so watches stream for as long as the client
// keeps them, and it takes any number of connections. stop closes the
// listener and every connection.
func serveProxy(cfg *rest.Config, b *breakdown, kubeconfig string) (stop func(), err error) {
	handler, err := countingProxy(cfg, b)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
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
		_ = ln.Close()
		return nil, err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}
