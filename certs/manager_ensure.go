package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Ensure makes the Secret hold a valid CA and serving certificate, loads the
// serving certificate for GetCertificate and injects the CA bundle into the
// webhook configuration. It returns the certificate now served.
//
// A missing Secret is created; when another replica creates it first, theirs
// is used. Certificates that are unreadable, issued for other names, expired
// or due for renewal are regenerated and written with the resourceVersion
// that was read; when another replica wrote in between, its Secret is used
// as it is (the next Ensure looks at it again), so replicas never fight in a
// loop.
func (m *Manager) Ensure(ctx context.Context) (*tls.Certificate, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cert, err := m.ensure(ctx)
	m.lastErr = err
	return cert, err
}

func (m *Manager) ensure(ctx context.Context) (*tls.Certificate, error) {
	if err := m.opts.validate(); err != nil {
		return nil, err
	}
	now := m.opts.Now()
	sec, err := m.syncSecret(ctx, now)
	if err != nil {
		return nil, err
	}
	cert, err := m.load(ctx, sec, now)
	if err != nil {
		return nil, err
	}
	m.lastRV = sec.ResourceVersion
	if err := m.injectCABundle(ctx); err != nil {
		return nil, err
	}
	return cert, nil
}

// secretKey is the Secret's object key.
func (m *Manager) secretKey() client.ObjectKey {
	return client.ObjectKey{Namespace: m.opts.Namespace, Name: m.opts.SecretName}
}

// syncSecret reads the Secret and creates or renews it as needed. It
// returns the Secret to use: ours, or the one another replica wrote.
func (m *Manager) syncSecret(ctx context.Context, now time.Time) (*corev1.Secret, error) {
	log := logr.FromContextOrDiscard(ctx).WithValues("secret", m.secretKey().String())
	sec := &corev1.Secret{}
	err := m.c.Get(ctx, m.secretKey(), sec)
	if apierrors.IsNotFound(err) {
		return m.createSecret(ctx, log, now)
	}
	if err != nil {
		return nil, fmt.Errorf("get secret %s: %w", m.secretKey(), err)
	}
	plan := planRenewal(sec.Data, m.names, now, m.opts)
	if !plan.needed() {
		return sec, nil
	}
	data, err := m.renew(plan, sec.Data, now)
	if err != nil {
		return nil, err
	}
	updated := sec.DeepCopy()
	updated.Data = data
	err = m.c.Update(ctx, updated)
	if apierrors.IsConflict(err) {
		log.Info("Secret changed by another replica, using its certificates")
		return m.reread(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("update secret %s: %w", m.secretKey(), err)
	}
	log.Info("Renewed webhook certificates", "newCA", plan.newCA, "newServingCertificate", plan.newServing,
		"reasons", plan.reasons, "resourceVersion", updated.ResourceVersion)
	return updated, nil
}

// createSecret creates the Secret with new certificates, or reads the one
// another replica created first.
func (m *Manager) createSecret(ctx context.Context, log logr.Logger, now time.Time) (*corev1.Secret, error) {
	data, err := m.renew(planRenewal(nil, m.names, now, m.opts), nil, now)
	if err != nil {
		return nil, err
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: m.opts.Namespace,
			Name:      m.opts.SecretName,
			Labels:    map[string]string{"app.kubernetes.io/managed-by": "tollgate"},
		},
		Type: corev1.SecretTypeTLS,
		Data: data,
	}
	err = m.c.Create(ctx, sec)
	if apierrors.IsAlreadyExists(err) {
		log.Info("Secret created by another replica, using its certificates")
		return m.reread(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("create secret %s: %w", m.secretKey(), err)
	}
	log.Info("Created webhook certificates", "resourceVersion", sec.ResourceVersion)
	return sec, nil
}

// reread reads the Secret after losing a write to another replica.
func (m *Manager) reread(ctx context.Context) (*corev1.Secret, error) {
	sec := &corev1.Secret{}
	if err := m.c.Get(ctx, m.secretKey(), sec); err != nil {
		return nil, fmt.Errorf("get secret %s written by another replica: %w", m.secretKey(), err)
	}
	return sec, nil
}

// renew returns a copy of data with the certificates plan asks for
// regenerated. Keys other than the four certificate keys are kept.
func (m *Manager) renew(plan renewal, data map[string][]byte, now time.Time) (map[string][]byte, error) {
	out := maps.Clone(data)
	if out == nil {
		out = map[string][]byte{}
	}
	ca := plan.ca
	if plan.newCA {
		var err error
		if ca, err = CreateCA(now, m.opts.CAValidity, m.opts.Rand); err != nil {
			return nil, err
		}
		out[SecretKeyCAKey] = ca.KeyPEM
	}
	if ca == nil {
		return nil, errors.New("renew certificates: no CA to sign with")
	}
	out[SecretKeyCACert] = encodeCertificates(append([]*x509.Certificate{ca.Cert}, plan.keep...)...)
	if plan.newServing {
		signer := ca
		if plan.outgoing != nil {
			signer = plan.outgoing
		}
		srv, err := CreateServing(signer, m.names, now, m.opts.CertValidity, m.opts.Rand)
		if err != nil {
			return nil, err
		}
		out[SecretKeyCert] = srv.CertPEM
		out[SecretKeyKey] = srv.KeyPEM
	}
	return out, nil
}

// load parses the serving certificate of sec and makes it the one
// GetCertificate returns.
func (m *Manager) load(ctx context.Context, sec *corev1.Secret, now time.Time) (*tls.Certificate, error) {
	srv, err := ParseKeyPair(sec.Data[SecretKeyCert], sec.Data[SecretKeyKey])
	if err != nil {
		return nil, fmt.Errorf("load serving certificate from secret %s: %w", m.secretKey(), err)
	}
	if !validAt(srv.Cert, now) {
		return nil, fmt.Errorf("load serving certificate from secret %s: valid %s to %s, not now",
			m.secretKey(), stamp(srv.Cert.NotBefore), stamp(srv.Cert.NotAfter))
	}
	cas, err := parseCertificates(sec.Data[SecretKeyCACert])
	if err != nil {
		return nil, fmt.Errorf("load CA bundle from secret %s: %w", m.secretKey(), err)
	}
	pool := x509.NewCertPool()
	for _, c := range cas {
		pool.AddCert(c)
	}
	m.roots.Store(pool)
	if ca, err := ParseKeyPair(sec.Data[SecretKeyCACert], sec.Data[SecretKeyCAKey]); err == nil {
		m.ca.Store(ca)
	}
	if cur := m.current.Load(); cur != nil && bytes.Equal(cur.Leaf.Raw, srv.Cert.Raw) {
		return cur, nil
	}
	cert := &tls.Certificate{
		Certificate: [][]byte{srv.Cert.Raw},
		PrivateKey:  srv.Key,
		Leaf:        srv.Cert,
	}
	m.current.Store(cert)
	logr.FromContextOrDiscard(ctx).Info("Serving webhook certificate", "serial", srv.Cert.SerialNumber.String(),
		"notAfter", stamp(srv.Cert.NotAfter), "dnsNames", srv.Cert.DNSNames)
	return cert, nil
}
