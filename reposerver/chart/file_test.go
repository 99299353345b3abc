package chart_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/reposerver/chart"
)

// TestFetchFile: a remote file is downloaded without credentials,
// following a redirect to another host as a release asset's does, within
// its size limit; plain http needs AllowInsecure, a redirect from https to
// http (TestFileRedirect) and a loopback address without AllowLoopback
// are refused.
func TestFetchFile(t *testing.T) {
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("credentials sent: %q", r.Header.Get("Authorization"))
		}
		_, _ = w.Write([]byte("kind: ConfigMap\n"))
	}))
	defer storage.Close()
	// The release host redirects to the storage host, 127.0.0.1 by
	// another name.
	release := httptest.NewServer(http.RedirectHandler(strings.Replace(storage.URL, "127.0.0.1", "localhost", 1)+"/asset", http.StatusFound))
	defer release.Close()
	loopback := func(netip.AddrPort) bool { return true }
	c, err := chart.New(chart.Options{Dir: t.TempDir(), AllowInsecure: true, AllowLoopback: loopback})
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.FetchFile(t.Context(), release.URL+"/download/v1/install.yaml", 1<<20)
	if err != nil || string(data) != "kind: ConfigMap\n" {
		t.Errorf("FetchFile through a redirect = %q, %v", data, err)
	}
	if _, err := c.FetchFile(t.Context(), storage.URL+"/x.yaml", 4); !errors.Is(err, chart.ErrTooLarge) {
		t.Errorf("past the limit: error %v, want ErrTooLarge", err)
	}

	strict, err := chart.New(chart.Options{Dir: t.TempDir(), AllowLoopback: loopback})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strict.FetchFile(t.Context(), storage.URL+"/x.yaml", 1<<20); err == nil || !strings.Contains(err.Error(), "remote files are fetched over https only") {
		t.Errorf("plain http: error %v", err)
	}
	noLoopback, err := chart.New(chart.Options{Dir: t.TempDir(), AllowInsecure: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noLoopback.FetchFile(t.Context(), storage.URL+"/x.yaml", 1<<20); !errors.Is(err, chart.ErrNotAllowed) {
		t.Errorf("a loopback address: error %v, want ErrNotAllowed", err)
	}
}
