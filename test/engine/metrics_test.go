package engine_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// TestArgoCDMetrics scrapes the engine's /metrics after it synced an
// Application: Argo CD's metrics show it as Argo CD's controller would, so
// that Argo CD's dashboards and alerts read it. argocd_app_info says Synced
// and Healthy, argocd_app_sync_total counted the sync as Succeeded, and
// the Application's comparisons, requests to the cluster and destination
// are counted too.
func TestArgoCDMetrics(t *testing.T) {
	f := newFixture(t, map[string]string{"manifests/configmap.yaml": configMap("settings", "v1")})
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	f.waitSynced(f.head)
	app := map[string]string{"namespace": argoNS, "name": f.name}
	wantInfo := map[string]string{
		"namespace": argoNS, "name": f.name, "project": f.name, "autosync_enabled": "true", "repo": reposerver.NormalizeURL(f.repoURL),
		"dest_server": inCluster, "dest_namespace": f.ns, "sync_status": "Synced", "health_status": "Healthy", "operation": "",
	}
	eventually(t, "Argo CD's metrics of the Application", func() (bool, string) {
		families, err := scrapeMetrics()
		if err != nil {
			return false, err.Error()
		}
		info := seriesMatching(families, "argocd_app_info", app)
		if len(info) != 1 {
			return false, fmt.Sprintf("%d argocd_app_info series of the Application, want 1", len(info))
		}
		if diff := cmp.Diff(wantInfo, seriesLabels(info[0])); diff != "" {
			return false, "argocd_app_info (-want +got):\n" + diff
		}
		checks := []struct {
			name  string
			match map[string]string
		}{
			{"argocd_app_sync_total", map[string]string{"namespace": argoNS, "name": f.name, "project": f.name, "dest_server": inCluster, "phase": "Succeeded", "dry_run": "false"}},
			{"argocd_app_k8s_request_total", map[string]string{"namespace": argoNS, "name": f.name, "server": inCluster, "verb": "Patch", "resource_kind": "configmaps", "resource_namespace": f.ns}},
			{"argocd_app_reconcile", map[string]string{"namespace": argoNS, "dest_server": inCluster}},
			{"argocd_cluster_info", map[string]string{"server": inCluster, "name": "in-cluster"}},
		}
		for _, c := range checks {
			if seriesTotal(seriesMatching(families, c.name, c.match)) < 1 {
				return false, fmt.Sprintf("no %s%v", c.name, c.match)
			}
		}
		return true, ""
	})
}

// scrapeMetrics reads the engine under test's metrics in the text format.
func scrapeMetrics() (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(metricsURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", metricsURL, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(io.LimitReader(resp.Body, 64<<20))
}

// seriesMatching returns the series of the family name whose labels include
// match.
func seriesMatching(families map[string]*dto.MetricFamily, name string, match map[string]string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range families[name].GetMetric() {
		l := seriesLabels(m)
		ok := true
		for k, v := range match {
			ok = ok && l[k] == v
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func seriesLabels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// seriesTotal sums the series: counters' and gauges' values, histograms' counts.
func seriesTotal(ms []*dto.Metric) float64 {
	var n float64
	for _, m := range ms {
		n += m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
	}
	return n
}
