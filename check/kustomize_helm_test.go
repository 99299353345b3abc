package check

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/chartserver"
	"github.com/tollgate-dev/tollgate/reposerver/chart"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// TestRunKustomizeHelmCharts: a kustomization whose helmCharts entry
// names a chart of a Helm repository is a note without --allow-network,
// which names the chart and pulls nothing; with it the chart is pulled,
// inflated and judged like the kustomization's own resources.
func TestRunKustomizeHelmCharts(t *testing.T) {
	repo := chartserver.NewRepo("", "")
	defer repo.Close()
	archive, err := chartserver.Package("web", "1.0.0", map[string]string{
		"values.yaml":        "image: nginx:latest\n",
		"templates/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: web, image: {{ .Values.image | quote }}}]}\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	repo.Add("web", "1.0.0", archive, "")
	srv := httptest.NewServer(repo.Handler())
	defer srv.Close()
	root := t.TempDir()
	testutil.WriteFiles(t, root, map[string]string{
		"app/kustomization.yaml": "namespace: web\nhelmCharts:\n- {name: web, repo: \"" + srv.URL + "\", version: 1.0.0, releaseName: web}\n",
	})
	opts := Options{Paths: []string{root + "/app"}, RepoRoot: root, KustomizeBuildOptions: "--enable-helm"}
	rep, notes, err := Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	wantNote := `app/kustomization.yaml:2: helmCharts chart "web" of ` + srv.URL + ` is not fetched by tollgate test; pass --allow-network to fetch it`
	if got := noteLines(notes); !slices.Contains(got, wantNote) || len(resultRows(rep)) != 0 || repo.Requests() != 0 {
		t.Errorf("without --allow-network: notes %q, results %q, %d requests; want the note %q alone", got, resultRows(rep), repo.Requests(), wantNote)
	}

	charts, err := chart.New(chart.Options{Dir: t.TempDir(), AllowInsecure: true, AllowLoopback: func(netip.AddrPort) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	opts.AllowNetwork, opts.Charts = true, charts
	rep, _, err = Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	rows := resultRows(rep)
	if !slices.ContainsFunc(rows, func(r string) bool {
		return strings.HasPrefix(r, "app/kustomization.yaml Pod/web") && strings.Contains(r, "no-latest-tag")
	}) {
		t.Errorf("with --allow-network: results %q, want the chart's Pod judged", rows)
	}
}

// TestRunKustomizeRemoteFile: a file a kustomization's resources name by
// URL is a note without --allow-network, and is downloaded and judged
// with it.
func TestRunKustomizeRemoteFile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: remote}\nspec: {containers: [{name: c, image: \"nginx:latest\"}]}\n"))
	}))
	defer srv.Close()
	url := srv.URL + "/deploy/pod.yaml"
	root := t.TempDir()
	testutil.WriteFiles(t, root, map[string]string{"app/kustomization.yaml": "namespace: web\nresources:\n- " + url + "\n"})
	opts := Options{Paths: []string{root + "/app"}, RepoRoot: root}
	rep, notes, err := Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	wantNote := `app/kustomization.yaml:3: remote file "` + url + `" is not fetched by tollgate test; pass --allow-network to fetch it`
	if got := noteLines(notes); !slices.Contains(got, wantNote) || len(resultRows(rep)) != 0 {
		t.Errorf("without --allow-network: notes %q, results %q; want the note %q alone", got, resultRows(rep), wantNote)
	}
	charts, err := chart.New(chart.Options{Dir: t.TempDir(), AllowInsecure: true, AllowLoopback: func(netip.AddrPort) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	opts.AllowNetwork, opts.Charts = true, charts
	if rep, _, err = Run(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	rows := resultRows(rep)
	if !slices.ContainsFunc(rows, func(r string) bool {
		return strings.HasPrefix(r, "app/kustomization.yaml Pod/remote") && strings.Contains(r, "no-latest-tag")
	}) {
		t.Errorf("with --allow-network: results %q, want the remote Pod judged", rows)
	}
}
