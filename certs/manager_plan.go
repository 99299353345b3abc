package certs

import (
	"crypto/x509"
	"fmt"
	"slices"
	"time"
)

// renewal is what must change in the Secret's data, decided by planRenewal.
type renewal struct {
	// ca is the current CA when it stays; nil when newCA.
	ca *KeyPair
	// outgoing is the CA being replaced when it may still sign the new
	// serving certificate; see planRenewal.
	outgoing *KeyPair
	// keep are the CAs that stay in the bundle after the first one.
	keep []*x509.Certificate
	// newCA: generate a CA and put it first in the bundle.
	newCA bool
	// newServing: issue a serving certificate from the first CA.
	newServing bool
	// rewriteBundle: the bundle changes (expired CAs dropped) even though
	// neither certificate is renewed.
	rewriteBundle bool
	// reasons say why, for logs and tests. They never hold key material.
	reasons []string
}

// needed reports whether the Secret must be written.
func (r renewal) needed() bool { return r.newCA || r.newServing || r.rewriteBundle }

// planRenewal decides, at now, what must be regenerated in data (the
// Secret's data) for a serving certificate for dnsNames, under the
// RotateBefore and CertValidity of o. It never fails: anything unreadable is
// regenerated.
//
// When the CA is due but still valid, it is replaced as the first CA of the
// bundle and stays after it. A serving certificate renewed at the same time
// is signed by the outgoing CA if that CA outlives a full CertValidity, so
// that API servers still holding the previous caBundle keep trusting it; the
// next serving certificate is signed by the new CA.
func planRenewal(data map[string][]byte, dnsNames []string, now time.Time, o Options) renewal {
	var r renewal
	roots := r.planCA(data, now, o)
	r.planServing(data, dnsNames, roots, now, o.RotateBefore)
	return r
}

// planCA decides about the CA bundle and returns the CAs a serving
// certificate may chain to: those of the bundle still valid at now.
func (r *renewal) planCA(data map[string][]byte, now time.Time, o Options) []*x509.Certificate {
	bundle, _ := parseCertificates(data[SecretKeyCACert])
	var valid []*x509.Certificate
	for _, c := range bundle {
		if c.IsCA && validAt(c, now) {
			valid = append(valid, c)
			continue
		}
		r.rewriteBundle = true
		r.reasons = append(r.reasons, fmt.Sprintf("drop CA serial %s from the bundle: not a CA valid now", c.SerialNumber))
	}

	ca, err := ParseKeyPair(data[SecretKeyCACert], data[SecretKeyCAKey])
	switch {
	case err != nil:
		r.newCA = true
		r.reasons = append(r.reasons, fmt.Sprintf("CA unusable: %v", err))
	case !ca.Cert.IsCA:
		r.newCA = true
		r.reasons = append(r.reasons, "CA certificate is not a CA")
	case !validAt(ca.Cert, now):
		r.newCA = true
		r.reasons = append(r.reasons, fmt.Sprintf("CA is not valid now (valid %s to %s)", stamp(ca.Cert.NotBefore), stamp(ca.Cert.NotAfter)))
	case due(ca.Cert, now, o.RotateBefore):
		r.newCA = true
		r.reasons = append(r.reasons, fmt.Sprintf("CA expires at %s", stamp(ca.Cert.NotAfter)))
		if !ca.Cert.NotAfter.Before(now.Add(o.CertValidity)) {
			r.outgoing = ca
		}
	default:
		r.ca = ca
	}
	for _, c := range valid {
		if r.ca == nil || !c.Equal(r.ca.Cert) {
			r.keep = append(r.keep, c)
		}
	}
	return valid
}

// planServing decides about the serving certificate, which must chain to
// one of roots.
func (r *renewal) planServing(data map[string][]byte, dnsNames []string, roots []*x509.Certificate, now time.Time, rotateBefore time.Duration) {
	srv, err := ParseKeyPair(data[SecretKeyCert], data[SecretKeyKey])
	var verifyErr error
	if err == nil {
		verifyErr = verify(srv.Cert, roots, now)
	}
	switch {
	case err != nil:
		r.newServing = true
		r.reasons = append(r.reasons, fmt.Sprintf("serving certificate unusable: %v", err))
	case !sameNames(srv.Cert.DNSNames, dnsNames):
		r.newServing = true
		r.reasons = append(r.reasons, fmt.Sprintf("serving certificate is for %v, want %v", srv.Cert.DNSNames, dnsNames))
	case verifyErr != nil:
		r.newServing = true
		r.reasons = append(r.reasons, fmt.Sprintf("serving certificate does not verify against the CA bundle: %v", verifyErr))
	case due(srv.Cert, now, rotateBefore):
		r.newServing = true
		r.reasons = append(r.reasons, fmt.Sprintf("serving certificate expires at %s", stamp(srv.Cert.NotAfter)))
	}
}

// validAt reports whether now is within c's validity period.
func validAt(c *x509.Certificate, now time.Time) bool {
	return !now.Before(c.NotBefore) && !now.After(c.NotAfter)
}

// due reports whether c must be renewed at now: within rotateBefore of its
// expiry, or, when rotateBefore is zero, in the last third of its lifetime.
func due(c *x509.Certificate, now time.Time, rotateBefore time.Duration) bool {
	window := rotateBefore
	if window <= 0 {
		window = c.NotAfter.Sub(c.NotBefore) / 3
	}
	return !now.Before(c.NotAfter.Add(-window))
}

// verify checks that leaf is a server certificate chaining to one of roots at
// now.
func verify(leaf *x509.Certificate, roots []*x509.Certificate, now time.Time) error {
	pool := x509.NewCertPool()
	for _, c := range roots {
		pool.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{
		Roots:       pool,
		CurrentTime: now,
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	return err
}

// sameNames reports whether got and want hold the same names in any order.
func sameNames(got, want []string) bool {
	a, b := slices.Clone(got), slices.Clone(want)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
