package certs_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/certs"
	"github.com/tollgate-dev/tollgate/test/envtest"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{CRDDirectoryPaths: []string{}}, func(e *envtest.Env) error {
		env = e
		return nil
	}))
}

const (
	day  = 24 * time.Hour
	year = 365 * day
)

// newClock returns a fake clock at the current second.
func newClock() *testingclock.FakeClock {
	return testingclock.NewFakeClock(time.Now().UTC().Truncate(time.Second))
}

// fixture is one test's namespace and webhook configuration.
type fixture struct {
	ns, webhookConfig string
}

// newFixture creates a namespace and a ValidatingWebhookConfiguration with
// two webhooks. Their rules match only a resource that does not exist and
// fail open, so they never intercept anything.
func newFixture(t *testing.T) fixture {
	t.Helper()
	ns := env.Namespace(t)
	f := fixture{ns: ns, webhookConfig: "tollgate-" + ns}
	none := admissionregistrationv1.SideEffectClassNone
	ignore := admissionregistrationv1.Ignore
	path := "/validate"
	hook := func(name string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name:                    name,
			SideEffects:             &none,
			FailurePolicy:           &ignore,
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "tollgate-webhook", Path: &path},
			},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{"certs.test.tollgate.dev"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"},
				},
			}},
		}
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: f.webhookConfig},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{hook("objects.tollgate.dev"), hook("applications.tollgate.dev")},
	}
	if err := env.Client.Create(t.Context(), vwc); err != nil {
		t.Fatalf("create webhook configuration: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = env.Client.Delete(ctx, vwc)
	})
	return f
}

func (f fixture) options(clk *testingclock.FakeClock) certs.Options {
	return certs.Options{
		Namespace:         f.ns,
		ServiceName:       "tollgate-webhook",
		WebhookConfigName: f.webhookConfig,
		Now:               clk.Now,
	}
}

// newClient returns a client of its own, as another replica would have.
func newClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatalf("create client: %v", err)
	}
	return c
}

func (f fixture) secret(t *testing.T) *corev1.Secret {
	t.Helper()
	sec := &corev1.Secret{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: f.ns, Name: certs.DefaultSecretName}, sec); err != nil {
		t.Fatalf("get secret: %v", err)
	}
	return sec
}

func (f fixture) webhookBundles(t *testing.T) (bundles []string, resourceVersion string) {
	t.Helper()
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: f.webhookConfig}, vwc); err != nil {
		t.Fatalf("get webhook configuration: %v", err)
	}
	for _, w := range vwc.Webhooks {
		bundles = append(bundles, string(w.ClientConfig.CABundle))
	}
	return bundles, vwc.ResourceVersion
}

// checkInjected fails unless both webhooks carry the Secret's ca.crt.
func (f fixture) checkInjected(t *testing.T) {
	t.Helper()
	want := string(f.secret(t).Data[certs.SecretKeyCACert])
	got, _ := f.webhookBundles(t)
	if diff := cmp.Diff([]string{want, want}, got); diff != "" {
		t.Errorf("caBundles of the webhooks (-want +got):\n%s", diff)
	}
}

func ensure(t *testing.T, m *certs.Manager) *tls.Certificate {
	t.Helper()
	c, err := m.Ensure(t.Context())
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return c
}

// parseBundle parses every certificate of a PEM bundle.
func parseBundle(t *testing.T, data []byte) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	for rest := data; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("parse bundle: %v", err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		t.Fatalf("bundle holds no certificate")
	}
	return out
}

func poolOf(cas ...*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range cas {
		p.AddCert(c)
	}
	return p
}

func serials(cas []*x509.Certificate) []string {
	var out []string
	for _, c := range cas {
		out = append(out, c.SerialNumber.String())
	}
	return out
}

// verifyServing checks leaf as the API server would: for the Service's
// name, trusting roots, at now.
func verifyServing(leaf *x509.Certificate, ns string, roots *x509.CertPool, now time.Time) error {
	_, err := leaf.Verify(x509.VerifyOptions{
		Roots:       roots,
		DNSName:     "tollgate-webhook." + ns + ".svc",
		CurrentTime: now,
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	return err
}

func TestEnsureCreatesSecretAndInjectsBundle(t *testing.T) {
	f := newFixture(t)
	clk := newClock()
	m := certs.NewManager(newClient(t), f.options(clk))
	cert := ensure(t, m)

	sec := f.secret(t)
	var keys []string
	for k := range sec.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if diff := cmp.Diff([]string{"ca.crt", "ca.key", "tls.crt", "tls.key"}, keys); diff != "" {
		t.Errorf("Secret keys (-want +got):\n%s", diff)
	}
	if sec.Type != corev1.SecretTypeTLS {
		t.Errorf("Secret type = %q, want %q", sec.Type, corev1.SecretTypeTLS)
	}
	f.checkInjected(t)
	bundle := parseBundle(t, sec.Data[certs.SecretKeyCACert])
	if len(bundle) != 1 {
		t.Errorf("new bundle holds %d CAs, want 1", len(bundle))
	}
	if err := verifyServing(cert.Leaf, f.ns, poolOf(bundle...), clk.Now()); err != nil {
		t.Errorf("served certificate does not verify against the injected bundle: %v", err)
	}
	if !m.Ready() {
		t.Errorf("not ready after Ensure")
	}

	// Nothing to do the second time.
	_, vwcRV := f.webhookBundles(t)
	ensure(t, m)
	if rv := f.secret(t).ResourceVersion; rv != sec.ResourceVersion {
		t.Errorf("second Ensure wrote the Secret")
	}
	if _, rv := f.webhookBundles(t); rv != vwcRV {
		t.Errorf("second Ensure wrote the webhook configuration")
	}
}

func TestRestartedManagerReusesSecret(t *testing.T) {
	f := newFixture(t)
	clk := newClock()
	first := ensure(t, certs.NewManager(newClient(t), f.options(clk)))
	rv := f.secret(t).ResourceVersion
	_, vwcRV := f.webhookBundles(t)

	clk.Step(30 * day)
	restarted := ensure(t, certs.NewManager(newClient(t), f.options(clk)))
	if restarted.Leaf.SerialNumber.Cmp(first.Leaf.SerialNumber) != 0 {
		t.Errorf("restarted manager serves serial %s, want %s", restarted.Leaf.SerialNumber, first.Leaf.SerialNumber)
	}
	if got := f.secret(t).ResourceVersion; got != rv {
		t.Errorf("restarted manager wrote the Secret")
	}
	if _, got := f.webhookBundles(t); got != vwcRV {
		t.Errorf("restarted manager wrote the webhook configuration")
	}
}

func TestConcurrentEnsure(t *testing.T) {
	f := newFixture(t)
	clk := newClock()
	const replicas = 4
	var managers []*certs.Manager
	for range replicas {
		managers = append(managers, certs.NewManager(newClient(t), f.options(clk)))
	}
	race := func() string {
		t.Helper()
		start := make(chan struct{})
		got := make([]string, replicas)
		errs := make([]error, replicas)
		var wg sync.WaitGroup
		for i, m := range managers {
			wg.Go(func() {
				<-start
				c, err := m.Ensure(t.Context())
				if err != nil {
					errs[i] = err
					return
				}
				got[i] = c.Leaf.SerialNumber.String()
			})
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("Ensure: %v", err)
		}
		srv, err := certs.ParseKeyPair(f.secret(t).Data[certs.SecretKeyCert], f.secret(t).Data[certs.SecretKeyKey])
		if err != nil {
			t.Fatalf("Secret: %v", err)
		}
		want := srv.Cert.SerialNumber.String()
		if diff := cmp.Diff([]string{want, want, want, want}, got); diff != "" {
			t.Errorf("serials served by the replicas (-Secret's +got):\n%s", diff)
		}
		f.checkInjected(t)
		return want
	}

	created := race()
	list := &corev1.SecretList{}
	if err := env.Client.List(t.Context(), list, client.InNamespace(f.ns)); err != nil {
		t.Fatalf("list secrets: %v", err)
	}
	if len(list.Items) != 1 {
		t.Errorf("%d Secrets in the namespace, want 1", len(list.Items))
	}
	caBefore := string(f.secret(t).Data[certs.SecretKeyCACert])

	clk.Step(9 * 30 * day)
	renewed := race()
	if renewed == created {
		t.Errorf("serving certificate not renewed in its last third")
	}
	if string(f.secret(t).Data[certs.SecretKeyCACert]) != caBefore {
		t.Errorf("CA bundle changed on a serving renewal")
	}

	// Settled: nobody writes again.
	rv := f.secret(t).ResourceVersion
	race()
	if got := f.secret(t).ResourceVersion; got != rv {
		t.Errorf("replicas rewrote a settled Secret")
	}
}

func TestRotationKeepsPreviousCA(t *testing.T) {
	f := newFixture(t)
	clk := newClock()
	start := clk.Now()
	m := certs.NewManager(newClient(t), f.options(clk))
	first := ensure(t, m)
	ca1 := parseBundle(t, f.secret(t).Data[certs.SecretKeyCACert])

	// Serving certificate in its last third: renewed by the same CA.
	clk.Step(9 * 30 * day)
	second := ensure(t, m)
	if second.Leaf.SerialNumber.Cmp(first.Leaf.SerialNumber) == 0 {
		t.Errorf("serving certificate not renewed")
	}
	if diff := cmp.Diff(serials(ca1), serials(parseBundle(t, f.secret(t).Data[certs.SecretKeyCACert]))); diff != "" {
		t.Errorf("bundle after a serving renewal (-want +got):\n%s", diff)
	}

	// CA in its last third: a new CA goes first, the old one stays, and the
	// serving certificate still verifies for API servers with the old bundle.
	clk.SetTime(start.Add(7 * year))
	third := ensure(t, m)
	bundle := parseBundle(t, f.secret(t).Data[certs.SecretKeyCACert])
	if len(bundle) != 2 || !bundle[1].Equal(ca1[0]) || bundle[0].Equal(ca1[0]) {
		t.Fatalf("bundle after CA rotation = %v, want [new, %v]", serials(bundle), serials(ca1))
	}
	f.checkInjected(t)
	if err := verifyServing(third.Leaf, f.ns, poolOf(ca1...), clk.Now()); err != nil {
		t.Errorf("after CA rotation the old bundle does not trust the served certificate: %v", err)
	}
	ca2 := bundle[0]

	// The next serving certificate comes from the new CA.
	clk.Step(9 * 30 * day)
	fourth := ensure(t, m)
	if err := verifyServing(fourth.Leaf, f.ns, poolOf(ca2), clk.Now()); err != nil {
		t.Errorf("serving certificate after CA rotation is not from the new CA: %v", err)
	}

	// Once the old CA expires it leaves the bundle.
	clk.SetTime(start.Add(10*year + day))
	ensure(t, m)
	if diff := cmp.Diff(serials([]*x509.Certificate{ca2}), serials(parseBundle(t, f.secret(t).Data[certs.SecretKeyCACert]))); diff != "" {
		t.Errorf("bundle after the old CA expired (-want +got):\n%s", diff)
	}
	f.checkInjected(t)
}

func TestStartFollowsAnotherReplica(t *testing.T) {
	f := newFixture(t)
	clk := newClock()
	opts := f.options(clk)
	opts.PollInterval = 100 * time.Millisecond
	follower := certs.NewManager(newClient(t), opts)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- follower.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start returned %v", err)
		}
	}()
	waitFor(t, "the follower to be ready", follower.Ready)

	clk.Step(9 * 30 * day)
	rotated := ensure(t, certs.NewManager(newClient(t), f.options(clk)))
	rv := f.secret(t).ResourceVersion
	waitFor(t, "the follower to serve the other replica's certificate", func() bool {
		c, err := follower.GetCertificate(nil)
		return err == nil && c.Leaf.SerialNumber.Cmp(rotated.Leaf.SerialNumber) == 0
	})
	if got := f.secret(t).ResourceVersion; got != rv {
		t.Errorf("the follower wrote the Secret the other replica had just rotated")
	}
}

// waitFor waits until cond holds, checking every 20ms for up to 30s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Poll{Timeout: 30 * time.Second, Interval: 20 * time.Millisecond}.Eventually(t, what, func() (bool, string) { return cond(), "" })
}

// TestTLSRoundTripDuringRotation serves HTTPS with the manager's certificate
// while a client sends requests in a loop, and rotates serving certificates
// and the CA for ten simulated years under that traffic. The client trusts
// the injected caBundle, first as it was one rotation earlier (an API server
// that has not caught up yet), then the current one. No request may fail.
func TestTLSRoundTripDuringRotation(t *testing.T) {
	f := newFixture(t)
	clk := newClock()
	m := certs.NewManager(newClient(t), f.options(clk))
	ensure(t, m)
	injected := func() *x509.CertPool {
		bundles, _ := f.webhookBundles(t)
		return poolOf(parseBundle(t, []byte(bundles[0]))...)
	}
	firstBundle := injected()
	tr := startTraffic(t, serveTLS(t, m), "tollgate-webhook."+f.ns+".svc", clk, firstBundle)

	tr.settle(t)
	for range 14 { // 14 x 270 days: past the first CA's expiry
		previous := tr.trusted.Load()
		clk.Step(270 * day)
		tr.settle(t)
		ensure(t, m)
		tr.trusted.Store(previous) // the API server has not seen the new caBundle yet
		tr.settle(t)
		tr.trusted.Store(injected())
		tr.settle(t)
	}
	done, failed, failures, seen := tr.stop()
	if failed != 0 {
		t.Errorf("%d of %d requests failed during rotation, first ones:\n%s", failed, done, strings.Join(failures, "\n"))
	}
	if seen < 10 {
		t.Errorf("the client saw %d serving certificates, want at least 10 rotations under traffic", seen)
	}
	// The first CA has expired by now: a client that only ever trusted it
	// fails, which shows the trust above came from the rotated bundles.
	if _, err := tr.request(firstBundle); err == nil {
		t.Errorf("a client trusting only the first CA still connects after it expired")
	}
}

// serveTLS serves "ok" over HTTPS on 127.0.0.1 with m's certificate and
// returns the URL.
func serveTLS(t *testing.T, m *certs.Manager) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "ok")
		}),
		TLSConfig:         &tls.Config{GetCertificate: m.GetCertificate, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return "https://" + ln.Addr().String() + "/"
}

// traffic sends requests one after the other, each on a new connection,
// trusting the pool in trusted, until stopped or maxRequests.
type traffic struct {
	url, serverName string
	clk             *testingclock.FakeClock
	trusted         atomic.Pointer[x509.CertPool]

	done, failed atomic.Int64
	halt         atomic.Bool
	finished     chan struct{}

	mu       sync.Mutex
	failures []string
	seen     map[string]bool
}

const maxRequests = 5000

func startTraffic(t *testing.T, url, serverName string, clk *testingclock.FakeClock, trusted *x509.CertPool) *traffic {
	t.Helper()
	tr := &traffic{url: url, serverName: serverName, clk: clk, finished: make(chan struct{}), seen: map[string]bool{}}
	tr.trusted.Store(trusted)
	go func() {
		defer close(tr.finished)
		for i := 0; i < maxRequests && !tr.halt.Load(); i++ {
			serial, err := tr.request(tr.trusted.Load())
			tr.mu.Lock()
			if err != nil {
				tr.failed.Add(1)
				if len(tr.failures) < 5 {
					tr.failures = append(tr.failures, fmt.Sprintf("%s: %v", clk.Now().Format(time.DateOnly), err))
				}
			} else {
				tr.seen[serial] = true
			}
			tr.mu.Unlock()
			tr.done.Add(1)
		}
	}()
	t.Cleanup(func() { tr.stop() })
	return tr
}

// request makes one request trusting roots and returns the serial of the
// server's certificate.
func (tr *traffic) request(roots *x509.CertPool) (string, error) {
	transport := &http.Transport{
		TLSClientConfig: &tls.Config{
			RootCAs:    roots,
			ServerName: tr.serverName,
			Time:       tr.clk.Now,
			MinVersion: tls.VersionTLS12,
		},
		DisableKeepAlives: true,
	}
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport, Timeout: 10 * time.Second}).Get(tr.url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16))
	if err != nil || string(body) != "ok" {
		return "", fmt.Errorf("response %d %q: %v", resp.StatusCode, body, err)
	}
	return resp.TLS.PeerCertificates[0].SerialNumber.String(), nil
}

// settle waits until a few more requests went through.
func (tr *traffic) settle(t *testing.T) {
	t.Helper()
	n := tr.done.Load()
	waitFor(t, "requests to flow", func() bool { return tr.done.Load() >= n+5 })
}

// stop ends the loop and returns the counts of requests, failed requests,
// the first failures and the number of distinct certificates seen.
func (tr *traffic) stop() (done, failed int64, failures []string, seen int) {
	tr.halt.Store(true)
	<-tr.finished
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.done.Load(), tr.failed.Load(), tr.failures, len(tr.seen)
}
