package server

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/tollgate-dev/tollgate/reposerver/source"
)

// TestGitMetrics exposes Git requests under Argo CD's repo-server names,
// labels and buckets.
func TestGitMetrics(t *testing.T) {
	m := NewGitMetrics()
	reg := prometheus.NewPedanticRegistry()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	var _ source.RequestObserver = m
	const repo = "https://github.com/org/app"
	m.ObserveGitRequest(repo, source.RequestLsRemote, 300*time.Millisecond)
	m.ObserveGitRequest(repo, source.RequestLsRemote, 100*time.Millisecond)
	m.ObserveGitRequest(repo, source.RequestFetch, 3*time.Second)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			t.Fatal(err)
		}
	}
	want := `# HELP argocd_git_request_duration_seconds Time of requests to Git servers, by repository and type (ls-remote, fetch), in seconds (Argo CD's metric).
# TYPE argocd_git_request_duration_seconds histogram
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="fetch",le="0.1"} 0
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="fetch",le="0.25"} 0
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="fetch",le="0.5"} 0
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="fetch",le="1"} 0
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="fetch",le="2"} 0
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="fetch",le="4"} 1
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="fetch",le="10"} 1
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="fetch",le="20"} 1
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="fetch",le="+Inf"} 1
argocd_git_request_duration_seconds_sum{repo="https://github.com/org/app",request_type="fetch"} 3
argocd_git_request_duration_seconds_count{repo="https://github.com/org/app",request_type="fetch"} 1
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="ls-remote",le="0.1"} 1
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="ls-remote",le="0.25"} 1
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="ls-remote",le="0.5"} 2
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="ls-remote",le="1"} 2
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="ls-remote",le="2"} 2
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="ls-remote",le="4"} 2
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="ls-remote",le="10"} 2
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="ls-remote",le="20"} 2
argocd_git_request_duration_seconds_bucket{repo="https://github.com/org/app",request_type="ls-remote",le="+Inf"} 2
argocd_git_request_duration_seconds_sum{repo="https://github.com/org/app",request_type="ls-remote"} 0.4
argocd_git_request_duration_seconds_count{repo="https://github.com/org/app",request_type="ls-remote"} 2
# HELP argocd_git_request_total Requests to Git servers, by repository and type (ls-remote, fetch), counted when they end (Argo CD's metric).
# TYPE argocd_git_request_total counter
argocd_git_request_total{repo="https://github.com/org/app",request_type="fetch"} 1
argocd_git_request_total{repo="https://github.com/org/app",request_type="ls-remote"} 2
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("exposition (-want +got):\n%s", diff)
	}
}
