package certs

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
)

func TestParseKeyPair(t *testing.T) {
	ca := mustCA(t, t0, year)
	other := mustCA(t, t0, year)
	srv := mustServing(t, ca, testNames, t0, day)
	sec1DER, err := x509.MarshalECPrivateKey(srv.Key.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	sec1 := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1DER})
	rsaCert, rsaKey := rsaPair(t)
	bundle := append(append([]byte{}, ca.CertPEM...), other.CertPEM...)

	tests := []struct {
		name       string
		cert, key  []byte
		wantSerial *big.Int
		wantErr    string
	}{
		{name: "PKCS8", cert: srv.CertPEM, key: srv.KeyPEM, wantSerial: srv.Cert.SerialNumber},
		{name: "SEC1", cert: srv.CertPEM, key: sec1, wantSerial: srv.Cert.SerialNumber},
		{name: "PKCS1 RSA", cert: rsaCert, key: rsaKey, wantSerial: big.NewInt(7)},
		{name: "bundle: first certificate is the pair's", cert: bundle, key: ca.KeyPEM, wantSerial: ca.Cert.SerialNumber},
		{name: "bundle: key of the second", cert: bundle, key: other.KeyPEM, wantErr: "private key does not match certificate"},
		{name: "mismatched key", cert: srv.CertPEM, key: ca.KeyPEM, wantErr: "private key does not match certificate"},
		{name: "empty certificate", cert: nil, key: srv.KeyPEM, wantErr: "parse certificate: no PEM certificate found"},
		{name: "garbage certificate", cert: []byte("not a certificate"), key: srv.KeyPEM, wantErr: "parse certificate: 17 bytes after PEM block 0 are not PEM"},
		{name: "trailing garbage", cert: append(append([]byte{}, srv.CertPEM...), "junk"...), key: srv.KeyPEM, wantErr: "bytes after PEM block 1 are not PEM"},
		{name: "key as certificate", cert: srv.KeyPEM, key: srv.KeyPEM, wantErr: `PEM block 1 is "PRIVATE KEY", want CERTIFICATE`},
		{name: "corrupt certificate DER", cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2, 3}}), key: srv.KeyPEM, wantErr: "parse certificate: PEM block 1:"},
		{name: "empty key", cert: srv.CertPEM, key: nil, wantErr: "parse private key: no PEM block found"},
		{name: "certificate as key", cert: srv.CertPEM, key: srv.CertPEM, wantErr: `parse private key: PEM block is "CERTIFICATE", want a private key`},
		{name: "two keys", cert: srv.CertPEM, key: append(append([]byte{}, srv.KeyPEM...), srv.KeyPEM...), wantErr: "unexpected data after the PEM private key"},
		{name: "corrupt key DER", cert: srv.CertPEM, key: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2, 3}}), wantErr: "parse private key: decode PRIVATE KEY:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kp, err := ParseKeyPair(tt.cert, tt.key)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "BEGIN") {
					t.Errorf("error quotes PEM data: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseKeyPair: %v", err)
			}
			if kp.Cert.SerialNumber.Cmp(tt.wantSerial) != 0 {
				t.Errorf("serial = %s, want %s", kp.Cert.SerialNumber, tt.wantSerial)
			}
			again, err := ParseKeyPair(kp.CertPEM, kp.KeyPEM)
			if err != nil || !again.Cert.Equal(kp.Cert) {
				t.Errorf("ParseKeyPair of the re-encoded pair: %v", err)
			}
		})
	}
}

// rsaPair returns a self-signed RSA certificate with serial 7 and its
// PKCS #1 key.
func rsaPair(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "rsa"}, NotBefore: t0, NotAfter: t0.Add(day)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}
