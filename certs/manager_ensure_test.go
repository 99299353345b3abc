package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const testNamespace = "tollgate-system"

func testOptions(clk *testingclock.FakeClock) Options {
	return Options{
		Namespace:         testNamespace,
		ServiceName:       "tollgate-webhook",
		WebhookConfigName: "tollgate",
		Now:               clk.Now,
	}
}

func testWebhookConfig() *admissionregistrationv1.ValidatingWebhookConfiguration {
	none := admissionregistrationv1.SideEffectClassNone
	hook := func(name string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name:                    name,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				Service:  &admissionregistrationv1.ServiceReference{Namespace: testNamespace, Name: "tollgate-webhook"},
				CABundle: []byte("stale"),
			},
		}
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "tollgate"},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{hook("objects.tollgate.dev"), hook("applications.tollgate.dev")},
	}
}

func newFakeClient(funcs *interceptor.Funcs, objs ...client.Object) client.WithWatch {
	b := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(objs...)
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	return b.Build()
}

func getSecret(t *testing.T, c client.Client) *corev1.Secret {
	t.Helper()
	sec := &corev1.Secret{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: testNamespace, Name: DefaultSecretName}, sec); err != nil {
		t.Fatalf("get secret: %v", err)
	}
	return sec
}

func getWebhookConfig(t *testing.T, c client.Client) *admissionregistrationv1.ValidatingWebhookConfiguration {
	t.Helper()
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: "tollgate"}, vwc); err != nil {
		t.Fatalf("get webhook configuration: %v", err)
	}
	return vwc
}

func mustEnsure(t *testing.T, m *Manager) *tls.Certificate {
	t.Helper()
	cert, err := m.Ensure(t.Context())
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return cert
}

func caSerials(t *testing.T, bundle []byte) []string {
	t.Helper()
	cas, err := parseCertificates(bundle)
	if err != nil {
		t.Fatalf("parse bundle: %v", err)
	}
	var out []string
	for _, c := range cas {
		out = append(out, c.SerialNumber.String())
	}
	return out
}

// checkInjected fails unless every webhook's caBundle is the Secret's ca.crt.
func checkInjected(t *testing.T, c client.Client) {
	t.Helper()
	want := string(getSecret(t, c).Data[SecretKeyCACert])
	for _, w := range getWebhookConfig(t, c).Webhooks {
		if string(w.ClientConfig.CABundle) != want {
			t.Errorf("webhook %s: caBundle is not the Secret's ca.crt", w.Name)
		}
	}
}

func TestEnsureCreatesSecretAndInjectsBundle(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	c := newFakeClient(nil, testWebhookConfig())
	m := NewManager(c, testOptions(clk))
	if m.Ready() {
		t.Fatalf("Ready before Ensure")
	}
	if _, err := m.GetCertificate(nil); err == nil {
		t.Fatalf("GetCertificate before Ensure: no error")
	}
	if err := m.ReadyChecker()(nil); err == nil {
		t.Fatalf("ReadyChecker before Ensure: no error")
	}
	cert := mustEnsure(t, m)

	sec := getSecret(t, c)
	var keys []string
	for k := range sec.Data {
		keys = append(keys, k)
	}
	if diff := cmp.Diff([]string{"ca.crt", "ca.key", "tls.crt", "tls.key"}, keys, cmpSorted); diff != "" {
		t.Errorf("Secret keys (-want +got):\n%s", diff)
	}
	if sec.Type != corev1.SecretTypeTLS {
		t.Errorf("Secret type = %q, want %q", sec.Type, corev1.SecretTypeTLS)
	}
	checkInjected(t, c)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(sec.Data[SecretKeyCACert])
	if _, err := cert.Leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "tollgate-webhook.tollgate-system.svc", CurrentTime: t0}); err != nil {
		t.Errorf("served certificate does not verify against ca.crt: %v", err)
	}
	if got, _ := m.GetCertificate(nil); got != cert || !m.Ready() || m.ReadyChecker()(nil) != nil {
		t.Errorf("after Ensure: GetCertificate is not the returned certificate or not ready")
	}

	// Again: nothing is written and the same certificate is served.
	vwc := getWebhookConfig(t, c)
	if again := mustEnsure(t, m); again != cert {
		t.Errorf("second Ensure serves another certificate")
	}
	if rv := getSecret(t, c).ResourceVersion; rv != sec.ResourceVersion {
		t.Errorf("second Ensure wrote the Secret: resourceVersion %s -> %s", sec.ResourceVersion, rv)
	}
	if rv := getWebhookConfig(t, c).ResourceVersion; rv != vwc.ResourceVersion {
		t.Errorf("second Ensure wrote the webhook configuration: resourceVersion %s -> %s", vwc.ResourceVersion, rv)
	}

	// A restarted replica reuses the Secret.
	restarted := mustEnsure(t, NewManager(c, testOptions(clk)))
	if restarted.Leaf.SerialNumber.Cmp(cert.Leaf.SerialNumber) != 0 {
		t.Errorf("restarted manager serves serial %s, want %s", restarted.Leaf.SerialNumber, cert.Leaf.SerialNumber)
	}
}

var cmpSorted = cmpopts.SortSlices(func(a, b string) bool { return a < b })

func TestEnsureRotates(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	c := newFakeClient(nil, testWebhookConfig())
	m := NewManager(c, testOptions(clk))
	first := mustEnsure(t, m)
	ca1 := caSerials(t, getSecret(t, c).Data[SecretKeyCACert])

	clk.Step(9 * 30 * day)
	second := mustEnsure(t, m)
	if second.Leaf.SerialNumber.Cmp(first.Leaf.SerialNumber) == 0 {
		t.Fatalf("serving certificate not renewed in its last third")
	}
	if diff := cmp.Diff(ca1, caSerials(t, getSecret(t, c).Data[SecretKeyCACert])); diff != "" {
		t.Errorf("CA bundle changed on a serving renewal (-want +got):\n%s", diff)
	}

	clk.Step(7 * year)
	mustEnsure(t, m)
	bundle := caSerials(t, getSecret(t, c).Data[SecretKeyCACert])
	if len(bundle) != 2 || bundle[1] != ca1[0] || bundle[0] == ca1[0] {
		t.Errorf("bundle after CA rotation = %v, want [new, %s]", bundle, ca1[0])
	}
	checkInjected(t, c)
}

func TestEnsureKeepsOtherKeysAndType(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	existing := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: DefaultSecretName},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"extra": []byte("kept"), SecretKeyCert: []byte("garbage")},
	}
	c := newFakeClient(nil, existing, testWebhookConfig())
	mustEnsure(t, NewManager(c, testOptions(clk)))
	sec := getSecret(t, c)
	if string(sec.Data["extra"]) != "kept" || sec.Type != corev1.SecretTypeOpaque {
		t.Errorf("Secret lost its other key or type: type %q, extra %q", sec.Type, sec.Data["extra"])
	}
	if _, err := ParseKeyPair(sec.Data[SecretKeyCert], sec.Data[SecretKeyKey]); err != nil {
		t.Errorf("garbage serving certificate not replaced: %v", err)
	}
}

func TestEnsureAdoptsWinnerOfCreate(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	base := newFakeClient(nil, testWebhookConfig())
	winner := NewManager(base, testOptions(clk))
	var creates atomic.Int32
	loserClient := newFakeClientOver(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Secret); ok && creates.Add(1) == 1 {
				// The other replica creates it between our Get and Create.
				if _, err := winner.Ensure(ctx); err != nil {
					return err
				}
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	loser := NewManager(loserClient, testOptions(clk))
	got := mustEnsure(t, loser)
	want, _ := winner.GetCertificate(nil)
	if got.Leaf.SerialNumber.Cmp(want.Leaf.SerialNumber) != 0 {
		t.Errorf("loser serves serial %s, want the winner's %s", got.Leaf.SerialNumber, want.Leaf.SerialNumber)
	}
	if n := creates.Load(); n != 1 {
		t.Errorf("loser tried to create the Secret %d times, want 1", n)
	}
	checkInjected(t, base)
}

func TestEnsureAdoptsWinnerOfUpdate(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	base := newFakeClient(nil, testWebhookConfig())
	winner := NewManager(base, testOptions(clk))
	mustEnsure(t, winner)
	clk.Step(9 * 30 * day) // the serving certificate is due

	var updates atomic.Int32
	loserClient := newFakeClientOver(base, interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*corev1.Secret); ok && updates.Add(1) == 1 {
				if _, err := winner.Ensure(ctx); err != nil {
					return err
				}
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	loser := NewManager(loserClient, testOptions(clk))
	got := mustEnsure(t, loser)
	want, _ := winner.GetCertificate(nil)
	if got.Leaf.SerialNumber.Cmp(want.Leaf.SerialNumber) != 0 {
		t.Errorf("loser serves serial %s, want the winner's %s", got.Leaf.SerialNumber, want.Leaf.SerialNumber)
	}
	if n := updates.Load(); n != 1 {
		t.Errorf("loser tried to update the Secret %d times, want 1 (no fighting)", n)
	}
	// The winner's Secret is good: another Ensure writes nothing.
	rv := getSecret(t, base).ResourceVersion
	mustEnsure(t, loser)
	if got := getSecret(t, base).ResourceVersion; got != rv {
		t.Errorf("Ensure after adopting wrote the Secret again")
	}
}

// newFakeClientOver intercepts calls to an existing fake client.
func newFakeClientOver(base client.WithWatch, funcs interceptor.Funcs) client.WithWatch {
	return interceptor.NewClient(base, funcs)
}

func TestEnsureErrors(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	boom := errors.New("boom")
	tests := []struct {
		name      string
		opts      func(Options) Options
		objs      []client.Object
		funcs     interceptor.Funcs
		wantErr   string
		wantReady bool
	}{
		{
			name:    "invalid options",
			opts:    func(o Options) Options { o.ServiceName = ""; return o },
			objs:    []client.Object{testWebhookConfig()},
			wantErr: "invalid certificate options: service name is required",
		},
		{
			name: "secret unreadable",
			objs: []client.Object{testWebhookConfig()},
			funcs: interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return boom
			}},
			wantErr: "get secret tollgate-system/tollgate-webhook-tls: boom",
		},
		{
			name: "secret not writable",
			objs: []client.Object{testWebhookConfig()},
			funcs: interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
				return boom
			}},
			wantErr: "create secret tollgate-system/tollgate-webhook-tls: boom",
		},
		{
			name:      "webhook configuration missing",
			wantErr:   `inject CA bundle into validatingwebhookconfiguration tollgate: validatingwebhookconfigurations.admissionregistration.k8s.io "tollgate" not found`,
			wantReady: true,
		},
		{
			name: "winner wrote garbage",
			objs: []client.Object{testWebhookConfig()},
			funcs: interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				bad := &corev1.Secret{
					ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: DefaultSecretName},
					Data:       map[string][]byte{SecretKeyCert: []byte("garbage")},
				}
				if err := c.Create(ctx, bad); err != nil {
					return err
				}
				return c.Create(ctx, obj, opts...)
			}},
			wantErr: "load serving certificate from secret tollgate-system/tollgate-webhook-tls: parse certificate: 7 bytes after PEM block 0 are not PEM",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(clk)
			if tt.opts != nil {
				opts = tt.opts(opts)
			}
			m := NewManager(newFakeClient(&tt.funcs, tt.objs...), opts)
			cert, err := m.Ensure(t.Context())
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("Ensure error:\n got %v\nwant %s", err, tt.wantErr)
			}
			if cert != nil {
				t.Errorf("Ensure returned a certificate with its error")
			}
			if m.Ready() != tt.wantReady {
				t.Errorf("Ready() = %v, want %v", m.Ready(), tt.wantReady)
			}
		})
	}
}

func TestEnsureWithoutWebhookConfig(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	opts := testOptions(clk)
	opts.WebhookConfigName = ""
	m := NewManager(newFakeClient(nil), opts)
	mustEnsure(t, m)
	if !m.Ready() {
		t.Errorf("not ready")
	}
}

// TestManagerClientSide: a Manager also serves the one client of the
// service: the CA bundle to verify it with (RootCAs) and a client
// certificate of the current CA (GetClientCertificate), issued once and
// again after half its lifetime.
func TestManagerClientSide(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	opts := testOptions(clk)
	opts.WebhookConfigName = ""
	m := NewManager(newFakeClient(nil), opts)
	if _, err := m.RootCAs(); err == nil {
		t.Error("RootCAs before Ensure: want an error")
	}
	if _, err := m.GetClientCertificate(nil); err == nil {
		t.Error("GetClientCertificate before Ensure: want an error")
	}
	serving := mustEnsure(t, m)
	roots, err := m.RootCAs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := serving.Leaf.Verify(x509.VerifyOptions{DNSName: testNames[2], Roots: roots, CurrentTime: clk.Now()}); err != nil {
		t.Errorf("serving certificate does not verify against RootCAs: %v", err)
	}
	first, err := m.GetClientCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf := first.Leaf
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: clk.Now(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate does not verify for client auth: %v", err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: clk.Now(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("client certificate verifies for server auth too")
	}
	if leaf.Subject.CommonName != ClientCommonName || len(leaf.DNSNames) != 0 {
		t.Errorf("client certificate: CN %q, DNS names %v", leaf.Subject.CommonName, leaf.DNSNames)
	}
	if again, _ := m.GetClientCertificate(nil); again != first {
		t.Error("a second call issued a new certificate before half its lifetime")
	}
	clk.Step(leaf.NotAfter.Sub(leaf.NotBefore)/2 + time.Minute)
	if renewed, err := m.GetClientCertificate(nil); err != nil || renewed == first {
		t.Errorf("after half its lifetime: err %v, same certificate %v", err, renewed == first)
	}
}

func TestCreateClient(t *testing.T) {
	ca := mustCA(t, t0, year)
	kp, err := CreateClient(ca, "caller", t0, day, nil)
	if err != nil {
		t.Fatal(err)
	}
	if kp.Cert.Subject.CommonName != "caller" || len(kp.Cert.DNSNames) != 0 ||
		!cmp.Equal(kp.Cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) || kp.Cert.IsCA {
		t.Errorf("client certificate: CN %q DNS %v usages %v CA %v", kp.Cert.Subject.CommonName, kp.Cert.DNSNames, kp.Cert.ExtKeyUsage, kp.Cert.IsCA)
	}
	if _, err := CreateClient(ca, "", t0, day, nil); err == nil || err.Error() != "create client certificate: no common name" {
		t.Errorf("empty common name: %v", err)
	}
	if _, err := CreateClient(nil, "x", t0, day, nil); err == nil || err.Error() != "create client certificate: no CA" {
		t.Errorf("no CA: %v", err)
	}
}
