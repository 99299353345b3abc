package main

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"

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

// wrap fits rest.Config.Wrap.
func (b *breakdown) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		b.observe(req)
		return rt.RoundTrip(req)
	})
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

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// countingProxy is a plain-HTTP reverse proxy on loopback in front of the
// API server, authenticating with cfg, that counts what passes through. It
// is how kubectl's requests are counted.
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
	proxy.FlushInterval = -1
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.observe(r)
		proxy.ServeHTTP(w, r)
	}), nil
}
