package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// gitRequestBuckets are the buckets of argocd_git_request_duration_seconds,
// Argo CD's.
var gitRequestBuckets = []float64{0.1, 0.25, 0.5, 1, 2, 4, 10, 20}

// GitMetrics are the repository service's Prometheus collectors of its
// requests to Git servers, under the names, labels and request types of
// Argo CD's repo-server:
//
//   - argocd_git_request_total{repo,request_type}
//   - argocd_git_request_duration_seconds{repo,request_type} (histogram)
//
// request_type is ls-remote or fetch; repo is the repository's normalized
// URL (reposerver.NormalizeURL), which never holds credentials. Give them
// to the Git cache as source.Options.Requests; register them once.
type GitMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewGitMetrics returns unregistered collectors.
func NewGitMetrics() *GitMetrics {
	return &GitMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_git_request_total",
			Help: "Requests to Git servers, by repository and type (ls-remote, fetch), counted when they end (Argo CD's metric).",
		}, []string{"repo", "request_type"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "argocd_git_request_duration_seconds",
			Help:    "Time of requests to Git servers, by repository and type (ls-remote, fetch), in seconds (Argo CD's metric).",
			Buckets: gitRequestBuckets,
		}, []string{"repo", "request_type"}),
	}
}

// ObserveGitRequest implements source.RequestObserver.
func (m *GitMetrics) ObserveGitRequest(repo, requestType string, took time.Duration) {
	m.requests.WithLabelValues(repo, requestType).Inc()
	m.duration.WithLabelValues(repo, requestType).Observe(took.Seconds())
}

// Register registers the collectors with reg.
func (m *GitMetrics) Register(reg prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("register repo-server metrics: %w", err)
	}
	return nil
}
