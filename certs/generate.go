package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"time"
)

// ClockSkew is subtracted from NotBefore of every certificate this package
// creates, so that a peer whose clock lags a little still accepts it.
const ClockSkew = time.Hour

// KeyPair is a certificate with its private key, parsed and PEM-encoded.
type KeyPair struct {
	// Cert is the parsed certificate.
	Cert *x509.Certificate
	// Key is the private key of Cert.
	Key crypto.Signer
	// CertPEM is Cert as one PEM "CERTIFICATE" block.
	CertPEM []byte
	// KeyPEM is Key as one PEM "PRIVATE KEY" (PKCS #8) block.
	KeyPEM []byte
}

// ServiceDNSNames returns the names a webhook Service is reached by inside
// the cluster: <svc>, <svc>.<ns>, <svc>.<ns>.svc and
// <svc>.<ns>.svc.cluster.local. The API server calls a webhook at
// <svc>.<ns>.svc.
func ServiceDNSNames(service, namespace string) []string {
	return []string{
		service,
		service + "." + namespace,
		service + "." + namespace + ".svc",
		service + "." + namespace + ".svc.cluster.local",
	}
}

// CreateCA creates a self-signed ECDSA P-256 CA certificate valid from
// now-ClockSkew to now+validity. rand supplies the serial number (nil means
// crypto/rand); since Go 1.26 the standard library draws key material from
// its own secure source regardless (see testing/cryptotest for tests).
func CreateCA(now time.Time, validity time.Duration, rand io.Reader) (*KeyPair, error) {
	if validity <= 0 {
		return nil, fmt.Errorf("create CA: validity %s is not positive", validity)
	}
	key, serial, err := newKeyAndSerial(rand)
	if err != nil {
		return nil, fmt.Errorf("create CA: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{
			Organization: []string{"tollgate"},
			CommonName:   fmt.Sprintf("tollgate-webhook-ca@%d", now.Unix()),
		},
		NotBefore:             now.Add(-ClockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	kp, err := sign(tmpl, tmpl, key, key, rand)
	if err != nil {
		return nil, fmt.Errorf("create CA: %w", err)
	}
	return kp, nil
}

// CreateServing creates an ECDSA P-256 server certificate for dnsNames,
// signed by ca, valid from now-ClockSkew to now+validity but never past the
// CA's own NotAfter. The first name is also the subject's common name. rand
// is used as in CreateCA.
func CreateServing(ca *KeyPair, dnsNames []string, now time.Time, validity time.Duration, rand io.Reader) (*KeyPair, error) {
	if len(dnsNames) == 0 {
		return nil, errors.New("create serving certificate: no DNS names")
	}
	for i, n := range dnsNames {
		if n == "" {
			return nil, fmt.Errorf("create serving certificate: DNS name %d is empty", i)
		}
	}
	kp, err := createLeaf(ca, dnsNames[0], dnsNames, x509.ExtKeyUsageServerAuth, now, validity, rand)
	if err != nil {
		return nil, fmt.Errorf("create serving certificate: %w", err)
	}
	return kp, nil
}

// CreateClient creates a client certificate (TLS client authentication
// only) for commonName, signed by ca, valid as CreateServing's.
func CreateClient(ca *KeyPair, commonName string, now time.Time, validity time.Duration, rand io.Reader) (*KeyPair, error) {
	if commonName == "" {
		return nil, errors.New("create client certificate: no common name")
	}
	kp, err := createLeaf(ca, commonName, nil, x509.ExtKeyUsageClientAuth, now, validity, rand)
	if err != nil {
		return nil, fmt.Errorf("create client certificate: %w", err)
	}
	return kp, nil
}

// createLeaf creates a certificate for commonName and dnsNames with one
// extended key usage, signed by ca, valid from now-ClockSkew to
// now+validity but never past the CA's own NotAfter.
func createLeaf(ca *KeyPair, commonName string, dnsNames []string, usage x509.ExtKeyUsage, now time.Time, validity time.Duration, rand io.Reader) (*KeyPair, error) {
	switch {
	case ca == nil || ca.Cert == nil || ca.Key == nil:
		return nil, errors.New("no CA")
	case !ca.Cert.IsCA:
		return nil, fmt.Errorf("%q is not a CA certificate", ca.Cert.Subject.CommonName)
	case validity <= 0:
		return nil, fmt.Errorf("validity %s is not positive", validity)
	}
	notAfter := now.Add(validity)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	if !notAfter.After(now) {
		return nil, fmt.Errorf("CA %q expired at %s", ca.Cert.Subject.CommonName, ca.Cert.NotAfter.UTC().Format(time.RFC3339))
	}
	key, serial, err := newKeyAndSerial(rand)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"tollgate"}, CommonName: commonName},
		DNSNames:              append([]string(nil), dnsNames...),
		NotBefore:             now.Add(-ClockSkew),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{usage},
		BasicConstraintsValid: true,
	}
	return sign(tmpl, ca.Cert, key, ca.Key, rand)
}

// newKeyAndSerial generates a P-256 key and a random 128-bit serial number.
func newKeyAndSerial(r io.Reader) (*ecdsa.PrivateKey, *big.Int, error) {
	if r == nil {
		r = rand.Reader
	}
	serial, err := rand.Int(r, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, fmt.Errorf("generate serial number: %w", err)
	}
	if serial.Sign() == 0 {
		// RFC 5280 wants a positive serial.
		serial.SetInt64(1)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), r)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	return key, serial, nil
}

// sign creates the certificate tmpl, issued by parent with parentKey, for
// key, and returns it as a KeyPair.
func sign(tmpl, parent *x509.Certificate, key *ecdsa.PrivateKey, parentKey crypto.Signer, r io.Reader) (*KeyPair, error) {
	if r == nil {
		r = rand.Reader
	}
	der, err := x509.CreateCertificate(r, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, fmt.Errorf("sign certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse signed certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	return &KeyPair{
		Cert:    cert,
		Key:     key,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}
