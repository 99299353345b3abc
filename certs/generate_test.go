package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestServiceDNSNames(t *testing.T) {
	want := []string{"svc", "svc.ns", "svc.ns.svc", "svc.ns.svc.cluster.local"}
	if diff := cmp.Diff(want, ServiceDNSNames("svc", "ns")); diff != "" {
		t.Errorf("ServiceDNSNames (-want +got):\n%s", diff)
	}
}

func TestCreateCA(t *testing.T) {
	ca := mustCA(t, t0, 10*year)
	c := ca.Cert
	type summary struct {
		NotBefore, NotAfter time.Time
		IsCA, BasicValid    bool
		CertSign            bool
		MaxPathLenZero      bool
		Curve               string
	}
	key, ok := ca.Key.(*ecdsa.PrivateKey)
	if !ok {
		t.Fatalf("key is %T, want *ecdsa.PrivateKey", ca.Key)
	}
	got := summary{
		NotBefore: c.NotBefore, NotAfter: c.NotAfter,
		IsCA: c.IsCA, BasicValid: c.BasicConstraintsValid,
		CertSign:       c.KeyUsage&x509.KeyUsageCertSign != 0,
		MaxPathLenZero: c.MaxPathLen == 0 && c.MaxPathLenZero,
		Curve:          key.Curve.Params().Name,
	}
	want := summary{
		NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(10 * year),
		IsCA: true, BasicValid: true, CertSign: true, MaxPathLenZero: true,
		Curve: elliptic.P256().Params().Name,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CA (-want +got):\n%s", diff)
	}
	if err := c.CheckSignatureFrom(c); err != nil {
		t.Errorf("CA is not self-signed: %v", err)
	}
	back, err := ParseKeyPair(ca.CertPEM, ca.KeyPEM)
	if err != nil {
		t.Fatalf("ParseKeyPair of a new CA: %v", err)
	}
	if !back.Cert.Equal(c) || !bytes.Equal(back.KeyPEM, ca.KeyPEM) {
		t.Errorf("ParseKeyPair(CertPEM, KeyPEM) does not give back the CA")
	}
}

func TestCreateServing(t *testing.T) {
	ca := mustCA(t, t0, 10*year)
	srv := mustServing(t, ca, testNames, t0, year)
	c := srv.Cert
	if diff := cmp.Diff(testNames, c.DNSNames); diff != "" {
		t.Errorf("DNS names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, c.ExtKeyUsage); diff != "" {
		t.Errorf("extended key usage (-want +got):\n%s", diff)
	}
	if c.IsCA {
		t.Errorf("serving certificate is a CA")
	}
	if c.Subject.CommonName != testNames[0] {
		t.Errorf("common name = %q, want %q", c.Subject.CommonName, testNames[0])
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	tests := []struct {
		name    string
		at      time.Time
		dnsName string
		wantErr bool
	}{
		{name: "at issue", at: t0, dnsName: "tollgate-webhook.tollgate-system.svc"},
		{name: "within clock skew before issue", at: t0.Add(-59 * time.Minute), dnsName: "tollgate-webhook.tollgate-system.svc"},
		{name: "short service name", at: t0, dnsName: "tollgate-webhook"},
		{name: "fully qualified", at: t0.Add(200 * day), dnsName: "tollgate-webhook.tollgate-system.svc.cluster.local"},
		{name: "last second", at: t0.Add(year), dnsName: "tollgate-webhook.tollgate-system"},
		{name: "expired", at: t0.Add(year + time.Second), dnsName: "tollgate-webhook.tollgate-system.svc", wantErr: true},
		{name: "before clock skew", at: t0.Add(-61 * time.Minute), dnsName: "tollgate-webhook.tollgate-system.svc", wantErr: true},
		{name: "other name", at: t0, dnsName: "evil.example.com", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Verify(x509.VerifyOptions{
				Roots: roots, CurrentTime: tt.at, DNSName: tt.dnsName,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			})
			if (err != nil) != tt.wantErr {
				t.Errorf("Verify error = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestCreateServingNeverOutlivesCA(t *testing.T) {
	ca := mustCA(t, t0, 100*day)
	srv := mustServing(t, ca, testNames, t0.Add(50*day), year)
	if !srv.Cert.NotAfter.Equal(ca.Cert.NotAfter) {
		t.Errorf("NotAfter = %s, want the CA's %s", srv.Cert.NotAfter, ca.Cert.NotAfter)
	}
}

func TestCreateErrors(t *testing.T) {
	ca := mustCA(t, t0, year)
	notCA := mustServing(t, ca, testNames, t0, day)
	tests := []struct {
		name    string
		create  func() (*KeyPair, error)
		wantErr string
	}{
		{"CA without validity", func() (*KeyPair, error) { return CreateCA(t0, 0, nil) }, "create CA: validity 0s is not positive"},
		{"no CA", func() (*KeyPair, error) { return CreateServing(nil, testNames, t0, day, nil) }, "create serving certificate: no CA"},
		{"issuer is not a CA", func() (*KeyPair, error) { return CreateServing(notCA, testNames, t0, day, nil) }, "is not a CA certificate"},
		{"no names", func() (*KeyPair, error) { return CreateServing(ca, nil, t0, day, nil) }, "no DNS names"},
		{"empty name", func() (*KeyPair, error) { return CreateServing(ca, []string{"a", ""}, t0, day, nil) }, "DNS name 1 is empty"},
		{"negative validity", func() (*KeyPair, error) { return CreateServing(ca, testNames, t0, -day, nil) }, "validity -24h0m0s is not positive"},
		{"expired CA", func() (*KeyPair, error) { return CreateServing(ca, testNames, t0.Add(2*year), day, nil) }, "expired at 2031-01-01T00:00:00Z"},
		{"broken randomness", func() (*KeyPair, error) { return CreateCA(t0, day, failingReader{}) }, "create CA: generate serial number: entropy exhausted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kp, err := tt.create()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
			if kp != nil {
				t.Errorf("got a key pair with the error")
			}
		})
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("entropy exhausted") }

// patternReader returns b, b+1, b+2, ... forever.
type patternReader struct{ b byte }

func (r *patternReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.b
		r.b++
	}
	return len(p), nil
}

func TestCreateUsesInjectedRandomness(t *testing.T) {
	ca, err := CreateCA(t0, year, &patternReader{b: 1})
	if err != nil {
		t.Fatalf("CreateCA: %v", err)
	}
	want := new(big.Int).SetBytes([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	if ca.Cert.SerialNumber.Cmp(want) != 0 {
		t.Errorf("CA serial = %s, want %s from the injected reader", ca.Cert.SerialNumber, want)
	}
	srv, err := CreateServing(ca, testNames, t0, day, &patternReader{b: 0x80})
	if err != nil {
		t.Fatalf("CreateServing: %v", err)
	}
	if got := srv.Cert.SerialNumber.Bytes()[0]; got != 0x80 {
		t.Errorf("serving serial starts with %#x, want 0x80 from the injected reader", got)
	}
}
