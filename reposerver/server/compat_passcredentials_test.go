package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/chartserver"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/chart"
)

// TestPassCredentials: a source's helm.passCredentials sends the Helm
// repository's basic auth to an archive its index names on another host,
// as Argo CD's helm --pass-credentials does; without it only the
// repository's own host gets it.
func TestPassCredentials(t *testing.T) {
	archive, err := chartserver.Package("web", "1.0.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var archiveAuth []string
	archives := compatTLSServer(t, func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		mu.Lock()
		archiveAuth = append(archiveAuth, user+":"+pass)
		mu.Unlock()
		_, _ = w.Write(archive)
	})
	sum := sha256.Sum256(archive)
	repo := compatTLSServer(t, func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "reader" || pass != "s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = fmt.Fprintf(w, "apiVersion: v1\nentries:\n  web:\n  - {name: web, version: 1.0.0, digest: %s, urls: [%q]}\n", hex.EncodeToString(sum[:]), archives.URL+"/web-1.0.0.tgz")
	})
	req := &reposerver.Request{HelmRepositories: []reposerver.HelmRepository{{URL: repo.URL, Username: "reader", Password: "s3cret", Insecure: true}}}

	for _, pass := range []bool{false, true} {
		src := v1alpha1.ApplicationSource{RepoURL: repo.URL, Chart: "web", TargetRevision: "1.0.0", Helm: &v1alpha1.ApplicationSourceHelm{PassCredentials: pass}}
		// A fresh cache each time: the archive is downloaded again.
		c, err := chart.New(chart.Options{Dir: t.TempDir(), AllowLoopback: func(netip.AddrPort) bool { return true }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Fetch(t.Context(), src.RepoURL, src.Chart, src.TargetRevision, chartOptions(req, src)); err != nil {
			t.Fatalf("passCredentials %v: %v", pass, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{":", "reader:s3cret"}; len(archiveAuth) != 2 || archiveAuth[0] != want[0] || archiveAuth[1] != want[1] {
		t.Errorf("the archive host saw basic auth %q, want %q (none without passCredentials, the repository's with it)", archiveAuth, want)
	}
}

// compatTLSServer starts an HTTPS test server that does not log refused
// handshakes.
func compatTLSServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}
