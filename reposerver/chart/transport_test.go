package chart_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/chartserver"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/chart"
)

// indexYAML is an index.yaml with one chart version whose archive is at
// url.
func indexYAML(name, version, url string, archive []byte) string {
	sum := sha256.Sum256(archive)
	return fmt.Sprintf("apiVersion: v1\nentries:\n  %s:\n  - {name: %s, version: %s, digest: %s, urls: [%q]}\n", name, name, version, hex.EncodeToString(sum[:]), url)
}

// startTLS starts an HTTPS test server with tlsConfig (nil: the default)
// that does not log the handshakes clients refuse.
func startTLS(t *testing.T, h http.Handler, tlsConfig *tls.Config) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = tlsConfig
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// TestFetchRedirectsAndAddresses: an index or archive is fetched through
// redirects only within the scheme and host of the request, at most five,
// and nothing is dialled at a loopback address the cache does not allow,
// or at a link-local or metadata address, whether an index names it or a
// redirect does; the other host receives no request.
func TestFetchRedirectsAndAddresses(t *testing.T) {
	archive := pkg(t, "web", "1.0.0", nil)
	other := chartserver.NewRepo("", "") // another host, on loopback
	defer other.Close()
	other.Add("web", "1.0.0", archive, "")
	otherAddr := strings.TrimPrefix(other.URL, "https://")

	var srv *httptest.Server
	index := func(archiveURL func() string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, indexYAML("web", "1.0.0", archiveURL(), archive))
		}
	}
	redirect := func(to func() string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to(), http.StatusFound) }
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/index.yaml", index(func() string { return srv.URL + "/web-1.0.0.tgz" }))
	mux.HandleFunc("/web-1.0.0.tgz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(archive) })
	mux.HandleFunc("/same/index.yaml", redirect(func() string { return srv.URL + "/index.yaml" }))
	mux.HandleFunc("/other/index.yaml", redirect(func() string { return other.URL + "/index.yaml" }))
	mux.HandleFunc("/http/index.yaml", redirect(func() string { return "http://" + srv.Listener.Addr().String() + "/index.yaml" }))
	mux.HandleFunc("/metadata/index.yaml", redirect(func() string { return "https://169.254.169.254/latest/meta-data/index.yaml" }))
	mux.HandleFunc("/loopback-archive/index.yaml", index(func() string { return other.URL + "/charts/web-1.0.0.tgz" }))
	mux.HandleFunc("/metadata-archive/index.yaml", index(func() string { return "https://169.254.169.254/web-1.0.0.tgz" }))
	// /hops/N/index.yaml redirects N times before it serves the index.
	mux.HandleFunc("/hops/{n}/index.yaml", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil || n == 0 {
			index(func() string { return srv.URL + "/web-1.0.0.tgz" })(w, r)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hops/%d/index.yaml", n-1), http.StatusFound)
	})
	srv = startTLS(t, mux, nil)
	srvPort := netip.MustParseAddrPort(srv.Listener.Addr().String()).Port()
	notAllowed := " not allowed: a repository may redirect only within " + srv.URL

	for _, tt := range []struct {
		name, repoURL, want string
	}{
		{name: "a redirect within the host", repoURL: srv.URL + "/same"},
		{name: "five redirects", repoURL: srv.URL + "/hops/5"},
		{
			name: "six redirects", repoURL: srv.URL + "/hops/6",
			want: "get " + srv.URL + "/hops/6/index.yaml: redirect not allowed: more than 5 redirects",
		},
		{
			name: "a redirect to another host", repoURL: srv.URL + "/other",
			want: "get " + srv.URL + "/other/index.yaml: redirect to " + other.URL + "/index.yaml" + notAllowed,
		},
		{
			name: "a redirect to http", repoURL: srv.URL + "/http",
			want: "get " + srv.URL + "/http/index.yaml: redirect to http://" + srv.Listener.Addr().String() + "/index.yaml" + notAllowed,
		},
		{
			name: "a redirect to the metadata endpoint", repoURL: srv.URL + "/metadata",
			want: "get " + srv.URL + "/metadata/index.yaml: redirect to https://169.254.169.254/latest/meta-data/index.yaml" + notAllowed,
		},
		{
			name: "an archive on a loopback address not allowed", repoURL: srv.URL + "/loopback-archive",
			want: "chart web-1.0.0: get " + other.URL + "/charts/web-1.0.0.tgz: dial tcp " + otherAddr + ": address not allowed: 127.0.0.1 is a loopback address",
		},
		{
			name: "an archive on the metadata endpoint", repoURL: srv.URL + "/metadata-archive",
			want: "chart web-1.0.0: get https://169.254.169.254/web-1.0.0.tgz: dial tcp 169.254.169.254:443: address not allowed: 169.254.169.254 is link-local or a cloud metadata endpoint",
		},
		{
			name: "a repository on loopback by name", repoURL: "https://localhost:" + strings.TrimPrefix(otherAddr, "127.0.0.1:"),
			want: "get https://localhost:" + strings.TrimPrefix(otherAddr, "127.0.0.1:") + "/index.yaml: dial tcp ",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Only the first server's loopback address is allowed.
			c, err := chart.New(chart.Options{Dir: t.TempDir(), AllowLoopback: func(ap netip.AddrPort) bool { return ap.Port() == srvPort }})
			if err != nil {
				t.Fatal(err)
			}
			ch, err := c.Fetch(t.Context(), tt.repoURL, "web", "1.0.0", chart.FetchOptions{Repositories: []reposerver.HelmRepository{{URL: tt.repoURL, Insecure: true}}})
			if tt.want == "" {
				if err != nil || ch.Version != "1.0.0" {
					t.Fatalf("Fetch = %s, %v; want web 1.0.0", ch.Version, err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, chart.ErrNotAllowed) || errors.Is(err, chart.ErrUnreachable) {
				t.Fatalf("err = %v, want ErrNotAllowed %q", err, tt.want)
			}
		})
	}
	if n := other.Requests(); n != 0 {
		t.Errorf("the other host received %d requests, want none", n)
	}
}

// TestClientCertificateOnlyToItsRepository: a repository's TLS client
// certificate and basic auth go to its own host only, not to the host its
// index names for an archive, even when that host asks for a certificate.
func TestClientCertificateOnlyToItsRepository(t *testing.T) {
	archive := pkg(t, "web", "1.0.0", nil)
	type seen struct {
		certs, auth bool
	}
	var mu sync.Mutex
	got := map[string]seen{}
	record := func(host string, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_, _, auth := r.BasicAuth()
		got[host] = seen{certs: len(r.TLS.PeerCertificates) > 0, auth: auth}
	}
	archives := startTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("archives", r)
		_, _ = w.Write(archive)
	}), &tls.Config{ClientAuth: tls.RequestClientCert})
	repo := startTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("repository", r)
		_, _ = io.WriteString(w, indexYAML("web", "1.0.0", archives.URL+"/web-1.0.0.tgz", archive))
	}), &tls.Config{ClientAuth: tls.RequireAnyClientCert})
	certPEM, keyPEM := clientCertificate(t)
	creds := []reposerver.HelmRepository{{URL: repo.URL, Username: "reader", Password: "s3cret", TLSClientCertData: certPEM, TLSClientCertKey: keyPEM, Insecure: true}}

	if _, err := newCache(t).Fetch(t.Context(), repo.URL, "web", "1.0.0", chart.FetchOptions{Repositories: creds}); err != nil {
		t.Fatal(err)
	}
	want := map[string]seen{"repository": {certs: true, auth: true}, "archives": {}}
	mu.Lock()
	defer mu.Unlock()
	for host, w := range want {
		if got[host] != w {
			t.Errorf("%s saw certificate %v, basic auth %v; want %v, %v", host, got[host].certs, got[host].auth, w.certs, w.auth)
		}
	}
}

// clientCertificate returns a self-signed client certificate and its key,
// PEM-encoded.
func clientCertificate(t *testing.T) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tollgate"},
		NotBefore: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}
