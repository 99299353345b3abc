package chart_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/chartserver"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/chart"
)

func newCache(t *testing.T) *chart.Cache {
	t.Helper()
	c, err := chart.New(chart.Options{Dir: t.TempDir(), AllowLoopback: anyLoopback})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// anyLoopback lets a cache reach the test servers, which listen on
// loopback.
func anyLoopback(netip.AddrPort) bool { return true }

func pkg(t *testing.T, name, version string, files map[string]string) []byte {
	t.Helper()
	data, err := chartserver.Package(name, version, files)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestFetchFromRepository(t *testing.T) {
	repo := chartserver.NewRepo("reader", "s3cret")
	defer repo.Close()
	for _, v := range []string{"1.0.0", "1.0.3", "1.1.0"} {
		repo.Add("web", v, pkg(t, "web", v, map[string]string{"templates/cm.yaml": "kind: ConfigMap\n"}), "")
	}
	creds := []reposerver.HelmRepository{{URL: repo.URL + "/", Username: "reader", Password: "s3cret", Insecure: true}}
	c := newCache(t)

	ch, err := c.Fetch(t.Context(), repo.URL, "web", "~1.0", chart.FetchOptions{Repositories: creds})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Version != "1.0.3" {
		t.Errorf("~1.0 resolved to %s, want 1.0.3", ch.Version)
	}
	if _, err := os.Stat(filepath.Join(ch.Dir, "templates", "cm.yaml")); err != nil {
		t.Errorf("unpacked chart: %v", err)
	}
	if !strings.HasPrefix(ch.Digest, "sha256:") {
		t.Errorf("digest = %q", ch.Digest)
	}

	if _, err := c.Fetch(t.Context(), repo.URL, "web", "1.1.0", chart.FetchOptions{Repositories: []reposerver.HelmRepository{{URL: repo.URL, Username: "reader", Password: "wrong", Insecure: true}}}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong password: err = %v, want 401", err)
	}
	if _, err := c.Fetch(t.Context(), repo.URL, "web", "1.1.0", chart.FetchOptions{}); err == nil {
		t.Error("no credentials and no insecure: fetched a chart from a server whose certificate is not trusted")
	}

	// A version published since is seen once the index may be no older.
	hour := chart.FetchOptions{Repositories: creds, IndexMaxAge: time.Hour}
	if ch, err := c.Fetch(t.Context(), repo.URL, "web", "^1", hour); err != nil || ch.Version != "1.1.0" {
		t.Fatalf("^1 = %s, %v; want 1.1.0", ch.Version, err)
	}
	repo.Add("web", "1.2.0", pkg(t, "web", "1.2.0", nil), "")
	if ch, err := c.Fetch(t.Context(), repo.URL, "web", "^1", hour); err != nil || ch.Version != "1.1.0" {
		t.Errorf("^1 from an index up to an hour old = %s, %v; want 1.1.0", ch.Version, err)
	}
	if ch, err := c.Fetch(t.Context(), repo.URL, "web", "^1", chart.FetchOptions{Repositories: creds}); err != nil || ch.Version != "1.2.0" {
		t.Errorf("^1 from a fresh index = %s, %v; want 1.2.0", ch.Version, err)
	}

	// An exact version in the cache needs no network.
	repo.Close()
	if again, err := c.Fetch(t.Context(), repo.URL, "web", "1.0.3", chart.FetchOptions{Repositories: creds}); err != nil || again.Dir != ch.Dir {
		t.Errorf("cached fetch = %+v, %v; want %s from the cache", again, err, ch.Dir)
	}
	if _, err := c.Fetch(t.Context(), repo.URL, "web", "1.0.0", chart.FetchOptions{Repositories: creds}); !errors.Is(err, chart.ErrUnreachable) {
		t.Errorf("repository down: err = %v, want ErrUnreachable", err)
	}
}

func TestFetchRefusesAWrongDigest(t *testing.T) {
	repo := chartserver.NewRepo("", "")
	defer repo.Close()
	repo.Add("web", "1.0.0", pkg(t, "web", "1.0.0", nil), strings.Repeat("ab", 32))
	_, err := newCache(t).Fetch(t.Context(), repo.URL, "web", "1.0.0", chart.FetchOptions{Repositories: []reposerver.HelmRepository{{URL: repo.URL, Insecure: true}}})
	if err == nil || !strings.Contains(err.Error(), "digest mismatch") {
		t.Fatalf("err = %v, want a digest mismatch", err)
	}
}

func TestFetchRefusesHostileRepositories(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/notindex/index.yaml", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("<html>internal admin page: password=hunter2</html>"))
	})
	mux.HandleFunc("/huge/index.yaml", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("apiVersion: v1\nentries: {}\n# " + strings.Repeat("x", 2<<20)))
	})
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	c, err := chart.New(chart.Options{Dir: t.TempDir(), MaxIndexBytes: 1 << 20, AllowLoopback: anyLoopback})
	if err != nil {
		t.Fatal(err)
	}
	insecure := func(u string) []reposerver.HelmRepository {
		return []reposerver.HelmRepository{{URL: u, Insecure: true}}
	}

	_, err = c.Fetch(t.Context(), srv.URL+"/notindex", "web", "1.0.0", chart.FetchOptions{Repositories: insecure(srv.URL + "/notindex")})
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "not a Helm repository index") {
		t.Errorf("not an index: err = %v, want a refusal that does not quote the page", err)
	}
	if _, err = c.Fetch(t.Context(), srv.URL+"/huge", "web", "1.0.0", chart.FetchOptions{Repositories: insecure(srv.URL + "/huge")}); !errors.Is(err, chart.ErrTooLarge) {
		t.Errorf("huge index: err = %v, want ErrTooLarge", err)
	}
	if _, err = c.Fetch(t.Context(), "http://charts.invalid", "web", "1.0.0", chart.FetchOptions{}); err == nil || !strings.Contains(err.Error(), "insecure") {
		t.Errorf("http:// without insecure: err = %v, want a refusal", err)
	}
	if _, err = c.Fetch(t.Context(), srv.URL, "../../etc", "1.0.0", chart.FetchOptions{}); err == nil || !strings.Contains(err.Error(), "not a valid chart name") {
		t.Errorf("chart name with a path: err = %v", err)
	}
}

func TestFetchFromOCI(t *testing.T) {
	reg := chartserver.NewRegistry("puller", "pw")
	defer reg.Close()
	for _, v := range []string{"0.9.0", "1.2.0", "1.3.0"} {
		if err := reg.Push("charts", "api", v, pkg(t, "api", v, nil)); err != nil {
			t.Fatal(err)
		}
	}
	creds := []reposerver.HelmRepository{{URL: reg.Host, Username: "puller", Password: "pw", Insecure: true, EnableOCI: true, Template: true}}
	c := newCache(t)
	for _, tt := range []struct{ repoURL, version, want string }{
		{reg.URL + "/charts", "1.2.0", "1.2.0"},
		{reg.URL + "/charts", "<1.3", "1.2.0"},
		{reg.Host + "/charts", "", "1.3.0"}, // enableOCI without the scheme
	} {
		ch, err := c.Fetch(t.Context(), tt.repoURL, "api", tt.version, chart.FetchOptions{Repositories: creds})
		if err != nil {
			t.Fatalf("%s %q: %v", tt.repoURL, tt.version, err)
		}
		if ch.Version != tt.want || !strings.HasPrefix(ch.Digest, "sha256:") {
			t.Errorf("%s %q = %s (%s), want %s", tt.repoURL, tt.version, ch.Version, ch.Digest, tt.want)
		}
	}
	// A tag pushed since is seen once the listing may be no older.
	hour := chart.FetchOptions{Repositories: creds, IndexMaxAge: time.Hour}
	if ch, err := c.Fetch(t.Context(), reg.URL+"/charts", "api", "^1", hour); err != nil || ch.Version != "1.3.0" {
		t.Fatalf("^1 = %s, %v; want 1.3.0", ch.Version, err)
	}
	if err := reg.Push("charts", "api", "1.4.0", pkg(t, "api", "1.4.0", nil)); err != nil {
		t.Fatal(err)
	}
	if ch, err := c.Fetch(t.Context(), reg.URL+"/charts", "api", "^1", hour); err != nil || ch.Version != "1.3.0" {
		t.Errorf("^1 from tags listed up to an hour ago = %s, %v; want 1.3.0", ch.Version, err)
	}
	if ch, err := c.Fetch(t.Context(), reg.URL+"/charts", "api", "^1", chart.FetchOptions{Repositories: creds}); err != nil || ch.Version != "1.4.0" {
		t.Errorf("^1 from a fresh listing = %s, %v; want 1.4.0", ch.Version, err)
	}
	if _, err := newCache(t).Fetch(t.Context(), reg.URL+"/charts", "api", "1.3.0", chart.FetchOptions{Repositories: []reposerver.HelmRepository{{URL: reg.Host, Insecure: true, Template: true}}}); err == nil {
		t.Error("pulled without credentials")
	}
}

func TestMatch(t *testing.T) {
	repos := []reposerver.HelmRepository{
		{URL: "https://charts.example.com/stable", Username: "repo"},
		{URL: "https://charts.example.com", Username: "tmpl", Template: true},
		{URL: "registry.example.com/team", Username: "team", Template: true, EnableOCI: true},
		{URL: "https://charts.example.com.evil.example", Username: "evil", Template: true},
	}
	for _, tt := range []struct{ url, want string }{
		{"https://charts.example.com/stable/", "repo"},
		{"https://Charts.example.com/other", "tmpl"},
		{"oci://registry.example.com/team/charts", "team"},
		{"oci://registry.example.com/teamx", ""},
		{"https://charts.example.com.evil.example/x", "evil"},
	} {
		got, _ := reposerver.MatchHelmRepository(tt.url, repos)
		if got.Username != tt.want {
			t.Errorf("reposerver.MatchHelmRepository(%s) = %q, want %q", tt.url, got.Username, tt.want)
		}
	}
	if !reposerver.IsOCI("registry.example.com/team/charts", repos) || reposerver.IsOCI("https://charts.example.com/stable", repos) {
		t.Error("IsOCI: enableOCI on a template should mark its registry, and only it")
	}
}

// archive builds a gzipped tar of entries.
func archive(t *testing.T, entries []tar.Header, body string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, hd := range entries {
		hd.Mode = 0o644
		if hd.Typeflag == tar.TypeReg {
			hd.Size = int64(len(body))
		}
		if err := tw.WriteHeader(&hd); err != nil {
			t.Fatal(err)
		}
		if hd.Typeflag == tar.TypeReg {
			_, _ = tw.Write([]byte(body))
		}
	}
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}

func TestFetchRefusesHostileArchives(t *testing.T) {
	chartYAML := tar.Header{Name: "web/Chart.yaml", Typeflag: tar.TypeReg}
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"climbs out", archive(t, []tar.Header{chartYAML, {Name: "web/../../etc/x", Typeflag: tar.TypeReg}}, "apiVersion: v2\nname: web\nversion: 1.0.0\n"), "outside the chart"},
		{"absolute", archive(t, []tar.Header{chartYAML, {Name: "/etc/x", Typeflag: tar.TypeReg}}, "apiVersion: v2\nname: web\nversion: 1.0.0\n"), "outside the chart"},
		{"two top directories", archive(t, []tar.Header{chartYAML, {Name: "other/x", Typeflag: tar.TypeReg}}, "apiVersion: v2\nname: web\nversion: 1.0.0\n"), "not under the chart's directory"},
		{"no Chart.yaml", archive(t, []tar.Header{{Name: "web/values.yaml", Typeflag: tar.TypeReg}}, "a: 1\n"), "no Chart.yaml"},
		{"not gzip", []byte("PK\x03\x04 a zip file"), "not a gzipped archive"},
		{"a file past Helm's limit", archive(t, []tar.Header{chartYAML, {Name: "web/big", Typeflag: tar.TypeReg}}, strings.Repeat("x", 6<<20)), "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := chartserver.NewRepo("", "")
			defer repo.Close()
			repo.Add("web", "1.0.0", tt.data, "")
			dir := t.TempDir()
			c, err := chart.New(chart.Options{Dir: filepath.Join(dir, "cache"), AllowLoopback: anyLoopback})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Fetch(t.Context(), repo.URL, "web", "1.0.0", chart.FetchOptions{Repositories: []reposerver.HelmRepository{{URL: repo.URL, Insecure: true}}})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if _, err := os.Stat(filepath.Join(dir, "etc")); err == nil {
				t.Error("a file was written outside the cache")
			}
		})
	}
}
