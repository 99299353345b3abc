package metrics

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// Verbs of argocd_app_k8s_request_total, Argo CD's spellings.
const (
	VerbGet     = "Get"
	VerbList    = "List"
	VerbWatch   = "Watch"
	VerbCreate  = "Create"
	VerbUpdate  = "Update"
	VerbPatch   = "Patch"
	VerbDelete  = "Delete"
	VerbUnknown = "Unknown"
)

// requestApp is the Application a request to a destination cluster is
// made for, as its labels.
type requestApp struct {
	namespace, name, project, dryRun string
}

type requestAppKey struct{}

// noApp labels the requests no Application made: the destination caches'
// lists and watches, discovery.
var noApp = &requestApp{dryRun: "false"}

// WithApplication returns ctx under which the requests made to
// destination clusters count as app's in argocd_app_k8s_request_total (see
// KubernetesRequests), with dry_run "true" when app's operation is a dry
// run, as Argo CD labels them.
func WithApplication(ctx context.Context, app *v1alpha1.Application) context.Context {
	dryRun := app.Operation != nil && app.Operation.Sync != nil && app.Operation.Sync.DryRun
	return context.WithValue(ctx, requestAppKey{}, &requestApp{
		namespace: app.Namespace, name: app.Name, project: app.ProjectName(), dryRun: strconv.FormatBool(dryRun),
	})
}

// WithoutApplication returns ctx under which requests count as no
// Application's, whatever ctx was made for: for what outlives the
// reconcile that started it (a destination's caches).
func WithoutApplication(ctx context.Context) context.Context {
	return context.WithValue(ctx, requestAppKey{}, noApp)
}

// KubernetesRequests returns a wrapper of the transport of the clients of
// the destination cluster server (for rest.Config.Wrap). It counts every
// request in argocd_app_k8s_request_total once its response headers are
// in (response_code 0 when there was no response), labelled with the
// Application of the request's context (WithApplication); requests made
// under no Application's context (the destination's caches listing and
// watching, discovery) have empty namespace, name and project. Counting
// allocates nothing beyond the label set's first use.
func (m *Metrics) KubernetesRequests(server string) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return &requestCounter{next: next, server: server, requests: m.argo.k8sRequests}
	}
}

// requestCounter is the RoundTripper of KubernetesRequests.
type requestCounter struct {
	next     http.RoundTripper
	server   string
	requests *requestCounts
}

// RoundTrip implements http.RoundTripper.
func (c *requestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	code := 0
	if resp != nil {
		code = resp.StatusCode
	}
	app, _ := req.Context().Value(requestAppKey{}).(*requestApp)
	if app == nil {
		app = noApp
	}
	verb, resource, namespace := describeRequest(req.Method, req.URL.Path, req.URL.RawQuery)
	c.requests.inc(requestLabels{
		namespace: app.namespace, name: app.name, project: app.project, server: c.server, code: statusText(code),
		verb: verb, resource: resource, resourceNamespace: namespace, dryRun: app.dryRun,
	})
	return resp, err
}

// WrappedRoundTripper returns the wrapped transport (client-go's
// net.RoundTripperWrapper), so that client-go finds the transport below.
func (c *requestCounter) WrappedRoundTripper() http.RoundTripper { return c.next }

// statusTexts are the response codes as label values, made once.
var statusTexts = func() (out [600]string) {
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}()

func statusText(code int) string {
	if code >= 0 && code < len(statusTexts) {
		return statusTexts[code]
	}
	return strconv.Itoa(code)
}

// describeRequest returns the verb of a request to an API server, as
// Argo CD names it, and the resource (plural, "deployments") and namespace
// its path names; a path outside /api and /apis (discovery, /version) has
// no resource. The strings returned are parts of path: nothing is
// allocated.
func describeRequest(method, path, query string) (verb, resource, namespace string) {
	rest, ok := resourcePath(path)
	name := ""
	if ok {
		if first, after, _ := strings.Cut(rest, "/"); first == "namespaces" {
			// /namespaces/{ns}/{resource}..., unless it is the Namespace's
			// own subresource.
			if ns, inNS, found := strings.Cut(after, "/"); found && inNS != "" && inNS != "status" && inNS != "finalize" {
				namespace, rest = ns, inNS
			}
		}
		resource, name, _ = strings.Cut(rest, "/")
	}
	switch method {
	case http.MethodGet:
		switch {
		case !ok || name != "":
			return VerbGet, resource, namespace
		case queryHas(query, "watch", "true") || queryHas(query, "watch", "1"):
			return VerbWatch, resource, namespace
		}
		return VerbList, resource, namespace
	case http.MethodPost:
		return VerbCreate, resource, namespace
	case http.MethodPut:
		return VerbUpdate, resource, namespace
	case http.MethodPatch:
		return VerbPatch, resource, namespace
	case http.MethodDelete:
		return VerbDelete, resource, namespace
	}
	return VerbUnknown, resource, namespace
}

// resourcePath returns what follows the group and version of an API path
// (/api/v1/... or /apis/{group}/{version}/...), and false when the path
// names no resource. A server URL with a path (a proxy's) is allowed in
// front.
func resourcePath(path string) (string, bool) {
	var rest string
	if i := strings.Index(path, "/apis/"); i >= 0 {
		_, rest, _ = strings.Cut(path[i+len("/apis/"):], "/") // group
	} else if i := strings.Index(path, "/api/"); i >= 0 {
		rest = path[i+len("/api/"):]
	} else {
		return "", false
	}
	_, rest, _ = strings.Cut(rest, "/") // version
	rest = strings.Trim(rest, "/")
	return rest, rest != ""
}

// queryHas reports whether the raw query holds key=value.
func queryHas(query, key, value string) bool {
	for query != "" {
		var kv string
		kv, query, _ = strings.Cut(query, "&")
		if k, v, _ := strings.Cut(kv, "="); k == key && v == value {
			return true
		}
	}
	return false
}

var descK8sRequests = prometheus.NewDesc("argocd_app_k8s_request_total",
	"Requests to destination clusters' API servers, by the Application that made them (empty for the cluster caches and discovery), verb, resource and response code (Argo CD's metric).",
	[]string{"namespace", "name", "project", "server", "response_code", "verb", "resource_kind", "resource_namespace", "dry_run"}, nil)

// requestCounts is argocd_app_k8s_request_total: a count per label set,
// turned into metrics at scrape time. An installation has a series per
// Application, kind, verb and response code, and a CounterVec keeps a
// metric with its label pairs for each, several times what a count and
// its label values take.
type requestCounts struct {
	mu     sync.RWMutex
	counts map[requestLabels]*atomic.Uint64
}

// requestLabels are the label values of one series.
type requestLabels struct {
	namespace, name, project, server, code, verb, resource, resourceNamespace, dryRun string
}

func newRequestCounts() *requestCounts {
	return &requestCounts{counts: map[requestLabels]*atomic.Uint64{}}
}

// inc counts one request of l; a label set already in use allocates
// nothing.
func (c *requestCounts) inc(l requestLabels) {
	c.mu.RLock()
	n := c.counts[l]
	c.mu.RUnlock()
	if n == nil {
		c.mu.Lock()
		if n = c.counts[l]; n == nil {
			// resource and resourceNamespace are parts of a request's
			// path: keep copies, not the path.
			l.resource, l.resourceNamespace = strings.Clone(l.resource), strings.Clone(l.resourceNamespace)
			n = new(atomic.Uint64)
			c.counts[l] = n
		}
		c.mu.Unlock()
	}
	n.Add(1)
}

// Describe implements prometheus.Collector.
func (c *requestCounts) Describe(ch chan<- *prometheus.Desc) { ch <- descK8sRequests }

// Collect implements prometheus.Collector.
func (c *requestCounts) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for l, n := range c.counts {
		ch <- prometheus.MustNewConstMetric(descK8sRequests, prometheus.CounterValue, float64(n.Load()),
			l.namespace, l.name, l.project, l.server, l.code, l.verb, l.resource, l.resourceNamespace, l.dryRun)
	}
}
