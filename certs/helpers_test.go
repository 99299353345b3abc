package certs

import (
	"bytes"
	"testing"
	"time"
)

// t0 is the injected "now" of most tests.
var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	day  = 24 * time.Hour
	year = 365 * day
)

var testNames = ServiceDNSNames("tollgate-webhook", "tollgate-system")

func mustCA(t *testing.T, now time.Time, validity time.Duration) *KeyPair {
	t.Helper()
	ca, err := CreateCA(now, validity, nil)
	if err != nil {
		t.Fatalf("CreateCA: %v", err)
	}
	return ca
}

func mustServing(t *testing.T, ca *KeyPair, names []string, now time.Time, validity time.Duration) *KeyPair {
	t.Helper()
	kp, err := CreateServing(ca, names, now, validity, nil)
	if err != nil {
		t.Fatalf("CreateServing: %v", err)
	}
	return kp
}

// secretData builds the data of a certificate Secret.
func secretData(cas []*KeyPair, srv *KeyPair) map[string][]byte {
	var bundle bytes.Buffer
	for _, c := range cas {
		bundle.Write(c.CertPEM)
	}
	return map[string][]byte{
		SecretKeyCACert: bundle.Bytes(),
		SecretKeyCAKey:  cas[0].KeyPEM,
		SecretKeyCert:   srv.CertPEM,
		SecretKeyKey:    srv.KeyPEM,
	}
}
