package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/tollgate-dev/tollgate/certs"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// loopback resolves every name to 127.0.0.1.
type loopback struct{}

func (loopback) LookupHost(context.Context, string) ([]string, error) {
	return []string{"127.0.0.1"}, nil
}

// testCA issues serving certificates for repo-servers in tests.
type testCA struct {
	ca *certs.KeyPair
}

func newTestCA(t testing.TB) *testCA {
	t.Helper()
	ca, err := certs.CreateCA(time.Now(), time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{ca: ca}
}

func (c *testCA) roots() (*x509.CertPool, error) {
	p := x509.NewCertPool()
	p.AddCert(c.ca.Cert)
	return p, nil
}

// serve starts an HTTPS server of h with a certificate for name and
// returns name:port.
func (c *testCA) serve(t testing.TB, name string, h http.Handler) string {
	t.Helper()
	kp, err := certs.CreateServing(c.ca, []string{name}, time.Now(), time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	serving := &tls.Certificate{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}
	srv.TLS = ServerTLSConfig(func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return serving, nil }, c.roots)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return net.JoinHostPort(name, port)
}

// clientCert issues a client certificate of the CA, as the controller's
// certs.Manager does.
func (c *testCA) clientCert(t testing.TB) func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	t.Helper()
	kp, err := certs.CreateClient(c.ca, certs.ClientCommonName, time.Now(), time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	cert := &tls.Certificate{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}
	return func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
}

// counted counts the requests a handler serves.
func counted(h http.Handler, n *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == reposerver.ManifestsPath {
			n.Add(1)
		}
		h.ServeHTTP(w, r)
	})
}

// newClient returns a client trusting ca, presenting a certificate of
// ca.
func newClient(t *testing.T, ca *testCA, addrs ...string) *reposerver.Client {
	t.Helper()
	c, err := reposerver.NewClient(reposerver.ClientOptions{Addresses: addrs, RootCAs: ca.roots, Certificate: ca.clientCert(t), Resolver: loopback{}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientServer(t *testing.T) {
	f := newFixture(t)
	ca := newTestCA(t)
	var a, b atomic.Int32
	h := NewHandler(f.svc, logr.Discard())
	addrA := ca.serve(t, "repo-a.test", counted(h, &a))
	addrB := ca.serve(t, "repo-b.test", counted(h, &b))
	c := newClient(t, ca, addrA, addrB)

	req := &reposerver.Request{AppName: "shop", Sources: []reposerver.Source{src(f.charts, "plain")}}
	local, err := f.svc.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		resp, err := c.Generate(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Key != local.Key || len(resp.Objects) != 1 || string(resp.Objects[0]) != string(local.Objects[0]) {
			t.Fatalf("over the wire: key %s objects %d; in process: key %s", resp.Key, len(resp.Objects), local.Key)
		}
	}
	if a.Load() != 2 || b.Load() != 2 {
		t.Errorf("requests per repo-server = %d and %d, want 2 and 2 (round robin)", a.Load(), b.Load())
	}

	// An error crosses the wire with its message and meaning.
	bad := &reposerver.Request{Sources: []reposerver.Source{src("http://127.0.0.1:1/x.git", "")}}
	_, err = c.Generate(t.Context(), bad)
	_, localErr := f.svc.Generate(t.Context(), bad)
	if err == nil || localErr == nil || err.Error() != localErr.Error() || !errors.Is(err, reposerver.ErrRepoUnreachable) {
		t.Errorf("unreachable repository over the wire: %v; in process: %v", err, localErr)
	}
	invalid := &reposerver.Request{Sources: []reposerver.Source{src(f.charts, "nope")}}
	_, err = c.Generate(t.Context(), invalid)
	_, localErr = f.svc.Generate(t.Context(), invalid)
	var we *reposerver.Error
	if !errors.As(err, &we) || we.Code != reposerver.CodeInvalid || err.Error() != localErr.Error() {
		t.Errorf("invalid request over the wire: %v; in process: %v", err, localErr)
	}
}

func TestClientTriesTheNextRepoServer(t *testing.T) {
	f := newFixture(t)
	ca := newTestCA(t)
	live := ca.serve(t, "repo-live.test", NewHandler(f.svc, logr.Discard()))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close() // nothing listens there any more
	c := newClient(t, ca, "repo-dead.test:"+port, live)
	for range 3 {
		if _, err := c.Generate(t.Context(), &reposerver.Request{Sources: []reposerver.Source{src(f.charts, "plain")}}); err != nil {
			t.Fatalf("with one repo-server down: %v", err)
		}
	}

	down := newClient(t, ca, "repo-dead.test:"+port)
	_, err = down.Generate(t.Context(), &reposerver.Request{Sources: []reposerver.Source{src(f.charts, "plain")}})
	if !errors.Is(err, reposerver.ErrRepoUnreachable) || !strings.Contains(err.Error(), "no repo-server answered") {
		t.Errorf("with every repo-server down: %v, want an unreachable error", err)
	}
}

func TestClientVerifiesTheRepoServer(t *testing.T) {
	f := newFixture(t)
	ca := newTestCA(t)
	other := newTestCA(t)
	addr := ca.serve(t, "repo.test", NewHandler(f.svc, logr.Discard()))
	req := &reposerver.Request{Sources: []reposerver.Source{src(f.charts, "plain")}}

	trustsOther, err := reposerver.NewClient(reposerver.ClientOptions{Addresses: []string{addr}, RootCAs: other.roots, Certificate: ca.clientCert(t), Resolver: loopback{}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = trustsOther.Generate(t.Context(), req)
	if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("repo-server with a certificate of another CA: %v", err)
	}
	_, port, _ := net.SplitHostPort(addr)
	_, err = newClient(t, ca, "impostor.test:"+port).Generate(t.Context(), req)
	if err == nil || !strings.Contains(err.Error(), "impostor.test") {
		t.Errorf("repo-server with a certificate for another name: %v", err)
	}
}

// TestRepoServerRequiresTheControllersCertificate: a caller that reached
// the repo-server past the NetworkPolicy (or on a cluster that does not
// enforce one) gets no answer without a client certificate of the
// controller's CA: the repo-server's checkouts of private repositories stay
// out of its reach.
func TestRepoServerRequiresTheControllersCertificate(t *testing.T) {
	f := newFixture(t)
	ca := newTestCA(t)
	other := newTestCA(t)
	addr := ca.serve(t, "repo.test", NewHandler(f.svc, logr.Discard()))
	req := &reposerver.Request{Sources: []reposerver.Source{src(f.charts, "plain")}}
	for name, cert := range map[string]func(*tls.CertificateRequestInfo) (*tls.Certificate, error){
		"no certificate": func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &tls.Certificate{}, nil },
		"another CA's":   other.clientCert(t),
	} {
		c, err := reposerver.NewClient(reposerver.ClientOptions{Addresses: []string{addr}, RootCAs: ca.roots, Certificate: cert, Resolver: loopback{}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Generate(t.Context(), req); err == nil || !strings.Contains(err.Error(), "no repo-server answered") {
			t.Errorf("%s: %v, want the repo-server to refuse the handshake", name, err)
		}
	}
	// The repo-server's own serving certificate, of the same CA, is not a
	// client certificate.
	serving, err := certs.CreateServing(ca.ca, []string{"repo.test"}, time.Now(), time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	servingCert := &tls.Certificate{Certificate: [][]byte{serving.Cert.Raw}, PrivateKey: serving.Key}
	c, err := reposerver.NewClient(reposerver.ClientOptions{Addresses: []string{addr}, RootCAs: ca.roots, Resolver: loopback{},
		Certificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return servingCert, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Generate(t.Context(), req); err == nil {
		t.Error("a serving certificate of the CA was accepted as a client certificate")
	}
	if _, err := newClient(t, ca, addr).Generate(t.Context(), req); err != nil {
		t.Errorf("with the controller's certificate: %v", err)
	}
}

func TestClientLimitsTheResponse(t *testing.T) {
	f := newFixture(t)
	ca := newTestCA(t)
	addr := ca.serve(t, "repo.test", NewHandler(f.svc, logr.Discard()))
	c, err := reposerver.NewClient(reposerver.ClientOptions{Addresses: []string{addr}, RootCAs: ca.roots, Certificate: ca.clientCert(t), Resolver: loopback{}, MaxResponseBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Generate(t.Context(), &reposerver.Request{Sources: []reposerver.Source{src(f.charts, "plain")}})
	var we *reposerver.Error
	if !errors.As(err, &we) || we.Code != reposerver.CodeLimit {
		t.Errorf("oversized response: %v, want a limit error", err)
	}
}

// TestClientDeadline: a repo-server that never answers holds a request
// only until the client's deadline, which the error names; it counts as
// no repo-server answering (retried, never a failed operation).
func TestClientDeadline(t *testing.T) {
	ca := newTestCA(t)
	release := make(chan struct{})
	addr := ca.serve(t, "repo.test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release) })
	c, err := reposerver.NewClient(reposerver.ClientOptions{Addresses: []string{addr}, RootCAs: ca.roots, Certificate: ca.clientCert(t), Resolver: loopback{}, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.GenerateApplications(t.Context(), &reposerver.AppSetRequest{})
	var we *reposerver.Error
	if !errors.As(err, &we) || we.Code != reposerver.CodeUnreachable || !strings.Contains(we.Message, "no answer within 500ms") {
		t.Errorf("got %v, want an Unreachable error naming the deadline", err)
	}
	if !errors.Is(err, reposerver.ErrRepoUnreachable) {
		t.Errorf("%v is not reposerver.ErrRepoUnreachable", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s, want the deadline to end it", took)
	}
}

func TestHandlerRejectsBadRequests(t *testing.T) {
	h := NewHandler(nil, logr.Discard())
	for _, tc := range []struct{ method, body string }{
		{http.MethodPost, "{"},
		{http.MethodPost, `{"appName":"a"} {}`},
		{http.MethodPost, `{"sources": "x"}`},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, reposerver.ManifestsPath, strings.NewReader(tc.body)))
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"code":"Invalid"`) {
			t.Errorf("%s %q: %d %s", tc.method, tc.body, rec.Code, rec.Body.String())
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, reposerver.ManifestsPath, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET %s: %d", reposerver.ManifestsPath, rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, reposerver.ManifestsPath, strings.NewReader(`{"appName":"`+strings.Repeat("a", MaxRequestBytes)+`"}`)))
	if rec.Code != http.StatusBadRequest {
		t.Errorf("oversized request: %d", rec.Code)
	}
}
