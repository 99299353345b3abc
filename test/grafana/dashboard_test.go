// Package grafana_test checks the Grafana dashboard of config/grafana: a
// dashboard model Grafana imports (a Prometheus data source variable,
// panels on the grid, each query with its reference), whose every query
// reads metrics, and labels of them, that tollgate's processes export.
package grafana_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgate-dev/tollgate/engine/metrics"
	"github.com/tollgate-dev/tollgate/reposerver/server"
	"github.com/tollgate-dev/tollgate/webhook"
	"github.com/tollgate-dev/tollgate/webhook/audit"
)

const dashboardFile = "../../config/grafana/tollgate.json"

// capture is a Registerer that keeps what is registered with it.
type capture struct{ collectors []prometheus.Collector }

func (c *capture) Register(col prometheus.Collector) error {
	c.collectors = append(c.collectors, col)
	return nil
}
func (c *capture) MustRegister(cs ...prometheus.Collector) {
	c.collectors = append(c.collectors, cs...)
}
func (c *capture) Unregister(prometheus.Collector) bool { return false }

// exported returns every metric tollgate's processes export, by name, with
// its labels: the controller's (tollgate's and Argo CD's, those read at
// scrape time included), the webhook's, the audit's and the
// repo-server's. A histogram's series (_bucket with le, _sum, _count) are
// listed.
func exported(t *testing.T) map[string][]string {
	t.Helper()
	var reg capture
	for _, register := range []func(prometheus.Registerer) error{
		metrics.NewMetrics().Register, webhook.NewMetrics().Register, audit.NewMetrics().Register, server.NewGitMetrics().Register,
	} {
		if err := register(&reg); err != nil {
			t.Fatal(err)
		}
	}
	reg.MustRegister(metrics.NewAppCollector(t.Context(), nil), metrics.NewClusterCollector(nil))
	descRE := regexp.MustCompile(`^Desc\{fqName: "([^"]+)", .*variableLabels: \{([^}]*)\}\}$`)
	out := map[string][]string{}
	for _, c := range reg.collectors {
		histogram := false
		switch c.(type) {
		case prometheus.Histogram, *prometheus.HistogramVec:
			histogram = true
		}
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			m := descRE.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("cannot read %s", d)
			}
			var labels []string
			for l := range strings.SplitSeq(m[2], ",") {
				if l = strings.TrimSuffix(strings.TrimPrefix(l, "c("), ")"); l != "" {
					labels = append(labels, l)
				}
			}
			if !histogram {
				out[m[1]] = labels
				continue
			}
			out[m[1]+"_bucket"] = append(slices.Clone(labels), "le")
			out[m[1]+"_sum"], out[m[1]+"_count"] = labels, labels
		}
	}
	if len(out) < 30 {
		t.Fatalf("found %d metrics; the check would prove little", len(out))
	}
	return out
}

// dashboard is the part of Grafana's dashboard model the test reads.
type dashboard struct {
	UID           string  `json:"uid"`
	Title         string  `json:"title"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []struct {
			Type       string     `json:"type"`
			Name       string     `json:"name"`
			Query      any        `json:"query"`
			Definition string     `json:"definition"`
			Datasource datasource `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	GridPos    struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		RefID        string     `json:"refId"`
		Expr         string     `json:"expr"`
		LegendFormat string     `json:"legendFormat"`
		Datasource   datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// promDatasource is how every panel and query names the data source: the
// dashboard's variable, so that the dashboard imports anywhere.
var promDatasource = datasource{Type: "prometheus", UID: "${datasource}"}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// TestDashboardModel checks what Grafana needs to import the dashboard and
// show every panel.
func TestDashboardModel(t *testing.T) {
	d := readDashboard(t)
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 {
		t.Errorf("uid %q, title %q, schemaVersion %d: want a uid, a title and a schema of Grafana 9 or later", d.UID, d.Title, d.SchemaVersion)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
		if v.Type == "datasource" && v.Query != "prometheus" {
			t.Errorf("variable %s chooses %v data sources, want prometheus", v.Name, v.Query)
		}
		if v.Type == "query" && v.Datasource != promDatasource {
			t.Errorf("variable %s queries %+v, want %+v", v.Name, v.Datasource, promDatasource)
		}
	}
	if vars["datasource"] != "datasource" {
		t.Fatalf("variables %v: want a data source variable named datasource", vars)
	}
	ids := map[int]bool{}
	queries := 0
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d is used twice", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X < 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q: gridPos %+v is off Grafana's 24-column grid", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Title == "" || p.Datasource == nil || *p.Datasource != promDatasource || len(p.Targets) == 0 {
			t.Errorf("panel %q: want a title, the data source %+v and queries", p.Title, promDatasource)
		}
		refs := map[string]bool{}
		for _, q := range p.Targets {
			queries++
			if q.Expr == "" || q.RefID == "" || refs[q.RefID] || q.Datasource != promDatasource {
				t.Errorf("panel %q: query %q (ref %q): want an expression, a reference of its own and the data source %+v", p.Title, q.Expr, q.RefID, promDatasource)
			}
			refs[q.RefID] = true
		}
	}
	if queries < 10 {
		t.Errorf("%d queries; the dashboard lost its panels", queries)
	}
}

// TestDashboardReadsExportedMetrics checks every metric a query or
// variable of the dashboard reads, and every label it selects, groups by
// or shows, against what tollgate exports.
func TestDashboardReadsExportedMetrics(t *testing.T) {
	known := exported(t)
	d := readDashboard(t)
	type query struct{ where, expr, legend string }
	var qs []query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, q := range p.Targets {
				qs = append(qs, query{fmt.Sprintf("panel %q %s", p.Title, q.RefID), q.Expr, q.LegendFormat})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			qs = append(qs, query{"variable " + v.Name, v.Definition, ""})
		}
	}
	read := map[string]bool{}
	for _, q := range qs {
		refs, err := readsOf(q.expr)
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
			continue
		}
		if len(refs.metrics) == 0 {
			t.Errorf("%s: %q reads no metric", q.where, q.expr)
		}
		var labels []string
		for name, selected := range refs.metrics {
			read[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")] = true
			have, ok := known[name]
			if !ok {
				t.Errorf("%s: %s is not a metric tollgate exports", q.where, name)
				continue
			}
			labels = append(labels, have...)
			for _, l := range selected {
				if !slices.Contains(have, l) {
					t.Errorf("%s: %s has no label %s (it has %v)", q.where, name, l, have)
				}
			}
		}
		for _, l := range append(refs.grouped, legendLabels(q.legend)...) {
			if !slices.Contains(labels, l) {
				t.Errorf("%s: label %s is on none of the metrics read (%v)", q.where, l, slices.Sorted(maps.Keys(refs.metrics)))
			}
		}
	}
	// The panels the issue asks for.
	for _, name := range []string{"argocd_app_sync_total", "argocd_app_info", "tollgate_engine_syncs_total", "tollgate_admission_requests_total",
		"tollgate_admission_duration_seconds", "argocd_app_reconcile"} {
		if !read[name] {
			t.Errorf("no query reads %s", name)
		}
	}
}

// reads are what a PromQL expression reads: metrics with the labels their
// selectors match on, and the labels it groups by.
type reads struct {
	metrics map[string][]string
	grouped []string
}

var (
	stringRE   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	selectorRE = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{([^}]*)\}`)
	matcherRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	groupingRE = regexp.MustCompile(`\b(?:by|without|on|ignoring)\s*\(([^)]*)\)`)
	rangeRE    = regexp.MustCompile(`\[[^\]]*\]`)
	identRE    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*\s*\(?`)
	legendRE   = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
	// promqlWords are PromQL's keywords; function names are told by the
	// parenthesis that follows them.
	promqlWords = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset"}
)

// readsOf parses enough of a PromQL expression (or a label_values()
// variable query) to tell the metrics it reads.
func readsOf(expr string) (reads, error) {
	r := reads{metrics: map[string][]string{}}
	s := stringRE.ReplaceAllString(expr, `""`)
	for _, m := range selectorRE.FindAllStringSubmatch(s, -1) {
		var labels []string
		for _, l := range matcherRE.FindAllStringSubmatch(m[2], -1) {
			labels = append(labels, l[1])
		}
		if m[1] == "" {
			return r, fmt.Errorf("%q: a selector without a metric name", expr)
		}
		r.metrics[m[1]] = append(r.metrics[m[1]], labels...)
	}
	s = selectorRE.ReplaceAllString(s, " ")
	for _, m := range groupingRE.FindAllStringSubmatch(s, -1) {
		for l := range strings.SplitSeq(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				r.grouped = append(r.grouped, l)
			}
		}
	}
	s = groupingRE.ReplaceAllString(s, " ")
	s = rangeRE.ReplaceAllString(s, " ")
	for _, tok := range identRE.FindAllString(s, -1) {
		tok, fn := strings.CutSuffix(tok, "(")
		tok = strings.TrimSpace(tok)
		if fn || slices.Contains(promqlWords, tok) {
			continue // a function, or a keyword
		}
		if _, ok := r.metrics[tok]; !ok {
			r.metrics[tok] = nil
		}
	}
	// label_values(metric, label) names a label as its second argument.
	if rest, ok := strings.CutPrefix(strings.TrimSpace(expr), "label_values("); ok {
		if i := strings.LastIndex(rest, ","); i >= 0 {
			r.grouped = append(r.grouped, strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest[i+1:]), ")")))
			delete(r.metrics, r.grouped[len(r.grouped)-1])
		}
	}
	return r, nil
}

// legendLabels are the labels a legend format shows ({{label}}).
func legendLabels(legend string) []string {
	var out []string
	for _, m := range legendRE.FindAllStringSubmatch(legend, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestReadsOf pins the little PromQL reading the checks rely on.
func TestReadsOf(t *testing.T) {
	r, err := readsOf(`histogram_quantile(0.95, sum by (le, request_type) (rate(argocd_git_request_duration_seconds_bucket{repo=~"a|b"}[$__rate_interval]))) / on (x) count(up) or vector(0)`)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(map[string][]string{"argocd_git_request_duration_seconds_bucket": {"repo"}, "up": nil}, []string{"le", "request_type", "x"})
	if got := fmt.Sprint(r.metrics, r.grouped); got != want {
		t.Errorf("readsOf = %s, want %s", got, want)
	}
	r, err = readsOf(`label_values(argocd_app_info{namespace=~"$namespace"}, project)`)
	if err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprint(map[string][]string{"argocd_app_info": {"namespace"}}, []string{"project"})
	if got := fmt.Sprint(r.metrics, r.grouped); got != want {
		t.Errorf("readsOf(label_values) = %s, want %s", got, want)
	}
}
