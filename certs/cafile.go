package certs

import (
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tollgate-dev/tollgate/internal/bounded"
)

// CAFile is a PEM bundle of CA certificates in a file (the ca.crt of a
// mounted Secret), read again when the file changes, so a Secret volume's
// update is picked up at the next TLS handshake without a restart.
type CAFile struct {
	path string

	mu      sync.Mutex
	modTime time.Time
	size    int64
	pool    *x509.CertPool
}

// NewCAFile reads the bundle at path; it fails when the file cannot be read
// or holds no certificate.
func NewCAFile(path string) (*CAFile, error) {
	f := &CAFile{path: path}
	if _, err := f.Pool(); err != nil {
		return nil, err
	}
	return f, nil
}

// Pool returns the certificates of the file as a pool, reading the file
// again when its modification time or size changed. When a changed file
// does not load, the error is returned and the previous pool is kept for the
// next call.
func (f *CAFile) Pool() (*x509.CertPool, error) {
	fi, err := os.Stat(f.path)
	if err != nil {
		return nil, fmt.Errorf("read CA bundle %s: %w", f.path, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pool != nil && fi.ModTime().Equal(f.modTime) && fi.Size() == f.size {
		return f.pool, nil
	}
	data, err := bounded.ReadFile(f.path, maxPEMFileSize)
	if err != nil {
		return nil, fmt.Errorf("read CA bundle %s: %w", f.path, err)
	}
	certs, err := parseCertificates(data)
	if err != nil {
		return nil, fmt.Errorf("read CA bundle %s: %w", f.path, err)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	f.pool, f.modTime, f.size = pool, fi.ModTime(), fi.Size()
	return pool, nil
}
