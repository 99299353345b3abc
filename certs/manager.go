package certs

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Keys of the Secret a Manager keeps.
const (
	// SecretKeyCACert holds the CA bundle: the current CA first, then
	// previous CAs that are still valid.
	SecretKeyCACert = "ca.crt"
	// SecretKeyCAKey holds the private key of the first CA of SecretKeyCACert.
	SecretKeyCAKey = "ca.key"
	// SecretKeyCert holds the serving certificate.
	SecretKeyCert = "tls.crt"
	// SecretKeyKey holds the private key of the serving certificate.
	SecretKeyKey = "tls.key"
)

// DefaultSecretName is the Secret a Manager keeps unless told otherwise.
const DefaultSecretName = "tollgate-webhook-tls"

// Options configures a Manager. Zero fields take the values of
// DefaultOptions; Namespace and ServiceName are required.
type Options struct {
	// Namespace of the Secret and of the webhook Service: the namespace
	// tollgate runs in.
	Namespace string
	// SecretName is the Secret holding CA and serving certificate.
	SecretName string
	// ServiceName is the webhook Service; the serving certificate is issued
	// for ServiceDNSNames(ServiceName, Namespace).
	ServiceName string
	// WebhookConfigName is the ValidatingWebhookConfiguration whose webhooks
	// get the CA bundle as caBundle. Empty: no injection.
	WebhookConfigName string
	// CAValidity is the lifetime of a new CA.
	CAValidity time.Duration
	// CertValidity is the lifetime of a new serving certificate (never past
	// its CA's expiry).
	CertValidity time.Duration
	// RotateBefore renews a certificate when it expires within this
	// duration. Zero (the default) renews once less than a third of the
	// certificate's lifetime remains: after 8 months for a 1-year serving
	// certificate, after 6.7 years for a 10-year CA.
	RotateBefore time.Duration
	// CheckInterval is how often Start runs Ensure.
	CheckInterval time.Duration
	// PollInterval is how often Start reads the Secret to pick up a
	// rotation made by another replica (and retries a failed Ensure).
	PollInterval time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Rand supplies serial numbers. Default crypto/rand.Reader.
	Rand io.Reader
}

// DefaultOptions returns the defaults: Secret tollgate-webhook-tls, a
// 10-year CA, 1-year serving certificates renewed when a third of their
// lifetime remains, Ensure every hour and a look at the Secret every 30s.
func DefaultOptions() Options {
	return Options{
		SecretName:    DefaultSecretName,
		CAValidity:    10 * 365 * 24 * time.Hour,
		CertValidity:  365 * 24 * time.Hour,
		CheckInterval: time.Hour,
		PollInterval:  30 * time.Second,
		Now:           time.Now,
		Rand:          rand.Reader,
	}
}

// withDefaults fills the zero fields of o from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.SecretName == "" {
		o.SecretName = d.SecretName
	}
	if o.CAValidity == 0 {
		o.CAValidity = d.CAValidity
	}
	if o.CertValidity == 0 {
		o.CertValidity = d.CertValidity
	}
	if o.CheckInterval == 0 {
		o.CheckInterval = d.CheckInterval
	}
	if o.PollInterval == 0 {
		o.PollInterval = d.PollInterval
	}
	if o.Now == nil {
		o.Now = d.Now
	}
	if o.Rand == nil {
		o.Rand = d.Rand
	}
	return o
}

// validate reports options that cannot work. RotateBefore at or past a
// validity would renew every freshly issued certificate at once.
func (o Options) validate() error {
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("namespace is required"))
	}
	if o.ServiceName == "" {
		errs = append(errs, errors.New("service name is required"))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"CA validity", o.CAValidity},
		{"certificate validity", o.CertValidity},
		{"check interval", o.CheckInterval},
		{"poll interval", o.PollInterval},
	} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s %s is not positive", d.name, d.v))
		}
	}
	if o.RotateBefore < 0 {
		errs = append(errs, fmt.Errorf("rotate-before %s is negative", o.RotateBefore))
	}
	if o.RotateBefore > 0 && (o.RotateBefore >= o.CertValidity || o.RotateBefore >= o.CAValidity) {
		errs = append(errs, fmt.Errorf("rotate-before %s must be shorter than the CA validity %s and the certificate validity %s",
			o.RotateBefore, o.CAValidity, o.CertValidity))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid certificate options: %w", err)
	}
	return nil
}

// Manager keeps the webhook's CA and serving certificate in a Secret, rotates
// them before they expire, injects the CA bundle into the webhook
// configuration and serves the current certificate. It is a controller-runtime
// manager.Runnable that runs in every replica (not only the leader).
type Manager struct {
	c    client.Client
	opts Options
	// names is ServiceDNSNames(opts.ServiceName, opts.Namespace).
	names []string

	// mu serializes Ensure and guards lastRV and lastErr.
	mu      sync.Mutex
	lastRV  string
	lastErr error

	current atomic.Pointer[tls.Certificate]
	// roots are the CA certificates of the Secret's bundle, for clients
	// of the service (RootCAs).
	roots atomic.Pointer[x509.CertPool]
	// ca is the current CA with its key, which issues client certificates.
	ca atomic.Pointer[KeyPair]
	// client is the last client certificate issued (GetClientCertificate).
	client atomic.Pointer[tls.Certificate]
}

var (
	_ manager.Runnable               = (*Manager)(nil)
	_ manager.LeaderElectionRunnable = (*Manager)(nil)
)

// NewManager returns a Manager that keeps certificates through c. c must read
// from the API server directly (client.New, not a manager's cached client):
// Ensure runs before caches start, and a cache of Secrets would need to list
// and watch Secrets in every namespace. It needs get, create and update on
// the Secret and get and update on the ValidatingWebhookConfiguration.
// Invalid options are reported by Ensure and Start.
func NewManager(c client.Client, opts Options) *Manager {
	opts = opts.withDefaults()
	return &Manager{c: c, opts: opts, names: ServiceDNSNames(opts.ServiceName, opts.Namespace)}
}

// GetCertificate returns the current serving certificate; use it as
// tls.Config.GetCertificate. It fails until a certificate is loaded.
func (m *Manager) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := m.current.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("get webhook certificate: no certificate loaded yet")
}

// RootCAs returns the CA bundle of the Secret (every CA a serving
// certificate may chain to, during a CA rotation the old one too), for a
// client of the service the Manager issues certificates for. It fails until
// the Secret is loaded.
func (m *Manager) RootCAs() (*x509.CertPool, error) {
	if p := m.roots.Load(); p != nil {
		return p, nil
	}
	return nil, errors.New("get CA bundle: no certificate loaded yet")
}

// ClientCommonName is the common name of the client certificates a Manager
// issues.
const ClientCommonName = "tollgate-client"

// GetClientCertificate returns a client certificate signed by the current
// CA, for the one client of the service that holds this Manager (the
// controller calling its repo-servers, which only accept certificates of
// this CA). It is issued on first use and again once the CA changed or half
// its lifetime passed; use it as tls.Config.GetClientCertificate. It fails
// until the Secret is loaded.
func (m *Manager) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	ca := m.ca.Load()
	if ca == nil {
		return nil, errors.New("get client certificate: no CA loaded yet")
	}
	now := m.opts.Now()
	if c := m.client.Load(); c != nil && c.Leaf.CheckSignatureFrom(ca.Cert) == nil &&
		now.Before(c.Leaf.NotBefore.Add(c.Leaf.NotAfter.Sub(c.Leaf.NotBefore)/2)) {
		return c, nil
	}
	kp, err := CreateClient(ca, ClientCommonName, now, m.opts.CertValidity, m.opts.Rand)
	if err != nil {
		return nil, fmt.Errorf("get client certificate: %w", err)
	}
	c := &tls.Certificate{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}
	m.client.Store(c)
	return c, nil
}

// Ready reports whether a serving certificate is loaded.
func (m *Manager) Ready() bool { return m.current.Load() != nil }

// ReadyChecker returns a readiness check that passes once a serving
// certificate is loaded.
func (m *Manager) ReadyChecker() healthz.Checker {
	return func(*http.Request) error {
		if !m.Ready() {
			return errors.New("webhook certificate not loaded yet")
		}
		return nil
	}
}

// NeedLeaderElection returns false: every replica serves the webhook and
// needs a certificate.
func (m *Manager) NeedLeaderElection() bool { return false }
