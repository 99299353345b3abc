package certs

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// volume writes files the way the kubelet updates a Secret volume: the data
// goes into a new timestamped directory, a "..data_tmp" symlink to it is
// renamed over "..data", and each visible file is a symlink into "..data".
type volume struct {
	dir string
	n   int
}

func (v *volume) write(t *testing.T, files map[string][]byte) {
	t.Helper()
	v.n++
	ts := fmt.Sprintf("..2030_01_01_00_00_00.%d", v.n)
	if err := os.Mkdir(filepath.Join(v.dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(v.dir, ts, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, _ := os.Readlink(filepath.Join(v.dir, "..data"))
	tmp := filepath.Join(v.dir, "..data_tmp")
	if err := os.Symlink(ts, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(v.dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		link := filepath.Join(v.dir, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
			t.Fatal(err)
		}
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(v.dir, old)); err != nil {
			t.Fatal(err)
		}
	}
}

func pairFiles(kp *KeyPair) map[string][]byte {
	return map[string][]byte{"tls.crt": kp.CertPEM, "tls.key": kp.KeyPEM}
}

func servedSerial(t *testing.T, w *FileWatcher) *big.Int {
	t.Helper()
	c, err := w.GetCertificate(nil)
	if err != nil {
		t.Fatalf("GetCertificate: %v", err)
	}
	return c.Leaf.SerialNumber
}

func startWatcher(t *testing.T, w *FileWatcher) *logSink {
	t.Helper()
	logs := &logSink{}
	ctx, cancel := context.WithCancel(logr.NewContext(t.Context(), logs.logger()))
	done := make(chan error, 1)
	go func() { done <- w.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start returned %v", err)
		}
	})
	return logs
}

func (s *logSink) count(sub string) int {
	n := 0
	for _, l := range s.all() {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

func TestFileWatcherFollowsKubeletSwaps(t *testing.T) {
	ca := mustCA(t, t0, year)
	pair1 := mustServing(t, ca, testNames, t0, day)
	pair2 := mustServing(t, ca, testNames, t0, day)
	pair3 := mustServing(t, ca, testNames, t0, day)
	v := &volume{dir: t.TempDir()}
	v.write(t, pairFiles(pair1))

	w, err := NewFileWatcher(filepath.Join(v.dir, "tls.crt"), filepath.Join(v.dir, "tls.key"))
	if err != nil {
		t.Fatalf("NewFileWatcher: %v", err)
	}
	if !w.Ready() || w.ReadyChecker()(nil) != nil {
		t.Fatalf("not ready after NewFileWatcher")
	}
	if got := servedSerial(t, w); got.Cmp(pair1.Cert.SerialNumber) != 0 {
		t.Fatalf("serving serial %s, want %s", got, pair1.Cert.SerialNumber)
	}
	// The poll interval stays at 10s: the reloads below come from events.
	w.started = make(chan struct{})
	logs := startWatcher(t, w)
	<-w.started

	v.write(t, pairFiles(pair2))
	waitFor(t, "the second pair", func() bool { return servedSerial(t, w).Cmp(pair2.Cert.SerialNumber) == 0 })

	// A corrupt certificate, then a certificate with another pair's key: both
	// are reported and the second pair stays.
	v.write(t, map[string][]byte{"tls.crt": []byte("-----BEGIN CERTIFICATE-----\ngarbage\n"), "tls.key": pair2.KeyPEM})
	waitFor(t, "the corrupt pair to be reported", func() bool { return logs.count("Reload certificate, still serving the previous one") == 1 })
	v.write(t, map[string][]byte{"tls.crt": pair3.CertPEM, "tls.key": pair2.KeyPEM})
	waitFor(t, "the mismatched pair to be reported", func() bool { return logs.count("private key does not match public key") == 1 })
	if got := servedSerial(t, w); got.Cmp(pair2.Cert.SerialNumber) != 0 {
		t.Fatalf("after bad writes serving serial %s, want the second pair's %s", got, pair2.Cert.SerialNumber)
	}

	v.write(t, pairFiles(pair3))
	waitFor(t, "the third pair", func() bool { return servedSerial(t, w).Cmp(pair3.Cert.SerialNumber) == 0 })
	if n := logs.count("Reloaded certificate"); n != 2 {
		t.Errorf("%d reloads logged, want 2", n)
	}
	for _, l := range logs.all() {
		if strings.Contains(l, "PRIVATE KEY") {
			t.Errorf("log line holds key material: %s", l)
		}
	}
}

func TestFileWatcherPollsWithoutEvents(t *testing.T) {
	ca := mustCA(t, t0, year)
	pair1 := mustServing(t, ca, testNames, t0, day)
	pair2 := mustServing(t, ca, testNames, t0, day)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeFiles(t, map[string][]byte{certFile: pair1.CertPEM, keyFile: pair1.KeyPEM})
	w, err := NewFileWatcher(certFile, keyFile)
	if err != nil {
		t.Fatalf("NewFileWatcher: %v", err)
	}
	w.noWatch = true
	w.pollInterval = 20 * time.Millisecond
	logs := startWatcher(t, w)

	// Written in place, key first: the poll may see the new key with the
	// old certificate, which must not replace the served pair.
	writeFiles(t, map[string][]byte{keyFile: pair2.KeyPEM})
	waitFor(t, "a poll to read the half-written pair", func() bool { return logs.count("Reload certificate, still serving the previous one") == 1 })
	if got := servedSerial(t, w); got.Cmp(pair1.Cert.SerialNumber) != 0 {
		t.Fatalf("half-written pair replaced the served one")
	}
	writeFiles(t, map[string][]byte{certFile: pair2.CertPEM})
	waitFor(t, "the polled pair", func() bool { return servedSerial(t, w).Cmp(pair2.Cert.SerialNumber) == 0 })
	// The half-written state was reported once, not at every poll.
	if n := logs.count("Reload certificate, still serving the previous one"); n != 1 {
		t.Errorf("reload failure logged %d times, want 1", n)
	}
}

// writeFiles replaces each file atomically (write aside, rename).
func writeFiles(t *testing.T, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		if err := os.WriteFile(name+".tmp", data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(name+".tmp", name); err != nil {
			t.Fatal(err)
		}
	}
}

func TestNewFileWatcherErrors(t *testing.T) {
	ca := mustCA(t, t0, year)
	pair := mustServing(t, ca, testNames, t0, day)
	dir := t.TempDir()
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		writeFiles(t, map[string][]byte{p: data})
		return p
	}
	cert, key := file("tls.crt", pair.CertPEM), file("tls.key", pair.KeyPEM)
	tests := []struct {
		name          string
		cert, key     string
		wantSubstring string
	}{
		{"missing certificate", filepath.Join(dir, "missing.crt"), key, "open " + filepath.Join(dir, "missing.crt") + ": no such file"},
		{"missing key", cert, filepath.Join(dir, "missing.key"), "open " + filepath.Join(dir, "missing.key") + ": no such file"},
		{"mismatched key", cert, file("ca.key", ca.KeyPEM), "load key pair " + cert + ", " + filepath.Join(dir, "ca.key") + ": tls: private key does not match public key"},
		{"garbage certificate", file("garbage.crt", []byte("garbage")), key, "failed to find any PEM data in certificate input"},
		{"oversized certificate", file("big.crt", make([]byte, maxPEMFileSize+1)), key, "big.crt: larger than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := NewFileWatcher(tt.cert, tt.key)
			if err == nil || !strings.Contains(err.Error(), tt.wantSubstring) {
				t.Fatalf("NewFileWatcher error = %v, want one containing %q", err, tt.wantSubstring)
			}
			if w != nil {
				t.Errorf("got a watcher with the error")
			}
		})
	}
}
