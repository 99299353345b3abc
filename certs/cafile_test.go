package certs

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCAFileFollowsChanges: a rewritten bundle is read at the next Pool; a
// broken one is an error, and the previous pool comes back once it is
// fixed.
func TestCAFileFollowsChanges(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ca.crt")
	first, second := mustCA(t, t0, year), mustCA(t, t0, year)
	write := func(data []byte, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	has := func(f *CAFile, ca *KeyPair) bool {
		t.Helper()
		pool, err := f.Pool()
		if err != nil {
			t.Fatal(err)
		}
		_, err = ca.Cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: t0.Add(day)})
		return err == nil
	}
	write(first.CertPEM, t0)
	f, err := NewCAFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !has(f, first) || has(f, second) {
		t.Fatal("first bundle: want the first CA only")
	}
	write(append(append([]byte{}, second.CertPEM...), first.CertPEM...), t0.Add(time.Minute))
	if !has(f, first) || !has(f, second) {
		t.Error("after the rotation: want both CAs")
	}
	write([]byte("garbage"), t0.Add(2*time.Minute))
	if _, err := f.Pool(); err == nil || !strings.Contains(err.Error(), "read CA bundle "+path) {
		t.Errorf("broken bundle: %v", err)
	}
	if _, err := NewCAFile(filepath.Join(dir, "missing.crt")); err == nil {
		t.Error("NewCAFile of a missing file: want an error")
	}
}
