package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tollgate-dev/tollgate/internal/bounded"
)

// DefaultFilePollInterval is how often a FileWatcher re-reads its files in
// case a change was not notified.
const DefaultFilePollInterval = 10 * time.Second

// maxPEMFileSize bounds what a FileWatcher reads from one file.
const maxPEMFileSize = 1 << 20

// reloadDelay lets a burst of file events settle before the files are read:
// a writer that replaces the certificate and then the key is read once.
const reloadDelay = 100 * time.Millisecond

// FileWatcher serves a certificate and key mounted from files (a Secret
// volume written by cert-manager) and reloads them when they change. A new
// pair that does not load is reported and the previous pair stays in use.
type FileWatcher struct {
	certFile, keyFile string
	pollInterval      time.Duration
	// noWatch disables file notifications, leaving the poll (tests).
	noWatch bool
	// started, when set, is closed once Start watches the files or polls
	// only (tests).
	started chan struct{}

	current atomic.Pointer[tls.Certificate]

	// mu guards the fields below; reloads run one at a time.
	mu sync.Mutex
	// certPEM and keyPEM are the contents of the pair being served.
	certPEM, keyPEM []byte
	// lastErr is the message of the last failed reload, to report a failure
	// once rather than at every poll.
	lastErr string
}

var (
	_ manager.Runnable               = (*FileWatcher)(nil)
	_ manager.LeaderElectionRunnable = (*FileWatcher)(nil)
)

// NewFileWatcher loads the pair in certFile and keyFile (PEM; the
// certificate file may hold the chain after the leaf). Call Start to follow
// changes.
func NewFileWatcher(certFile, keyFile string) (*FileWatcher, error) {
	w := &FileWatcher{certFile: certFile, keyFile: keyFile, pollInterval: DefaultFilePollInterval}
	if _, err := w.reload(); err != nil {
		return nil, err
	}
	return w, nil
}

// GetCertificate returns the current certificate; use it as
// tls.Config.GetCertificate.
func (w *FileWatcher) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := w.current.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("get certificate: none loaded")
}

// Ready reports whether a certificate is loaded, which is true once
// NewFileWatcher succeeded.
func (w *FileWatcher) Ready() bool { return w.current.Load() != nil }

// ReadyChecker returns a readiness check that passes once a certificate is
// loaded.
func (w *FileWatcher) ReadyChecker() healthz.Checker {
	return func(*http.Request) error {
		if !w.Ready() {
			return fmt.Errorf("certificate %s not loaded", w.certFile)
		}
		return nil
	}
}

// NeedLeaderElection returns false: every replica serves with the files.
func (w *FileWatcher) NeedLeaderElection() bool { return false }

// Start follows the files until ctx is done. It watches the directories that
// hold them, because the kubelet updates a Secret volume by swapping a
// "..data" symlink rather than writing the files, and re-reads the pair after
// any event there; it also re-reads every poll interval, comparing contents,
// in case an event is missed or watching is not possible. Reload failures are
// logged with the logger from ctx.
func (w *FileWatcher) Start(ctx context.Context) error {
	log := logr.FromContextOrDiscard(ctx).WithName("certs").WithValues("certFile", w.certFile, "keyFile", w.keyFile)
	var events <-chan fsnotify.Event
	var watchErrs <-chan error
	if w.noWatch {
		log.V(1).Info("Polling certificate files", "pollInterval", w.pollInterval)
	} else if fw, err := w.watch(); err != nil {
		log.Error(err, "Watch certificate files, polling only", "pollInterval", w.pollInterval)
	} else {
		defer fw.Close()
		events, watchErrs = fw.Events, fw.Errors
	}
	if w.started != nil {
		close(w.started)
	}
	poll := time.NewTicker(w.pollInterval)
	defer poll.Stop()
	settle := time.NewTimer(reloadDelay)
	settle.Stop()
	defer settle.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			settle.Reset(reloadDelay)
		case err, ok := <-watchErrs:
			if !ok {
				watchErrs = nil
				continue
			}
			log.Error(err, "Watch certificate files")
		case <-settle.C:
			w.check(log)
		case <-poll.C:
			w.check(log)
		}
	}
}

// watch starts watching the directories of both files.
func (w *FileWatcher) watch() (*fsnotify.Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("create file watcher: %w", err)
	}
	dirs := []string{filepath.Dir(w.certFile), filepath.Dir(w.keyFile)}
	for i, d := range dirs {
		if i > 0 && d == dirs[0] {
			continue
		}
		if err := fw.Add(d); err != nil {
			_ = fw.Close()
			return nil, fmt.Errorf("watch directory %s: %w", d, err)
		}
	}
	return fw, nil
}

// check reloads the pair and logs the outcome.
func (w *FileWatcher) check(log logr.Logger) {
	changed, err := w.reload()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if err.Error() != w.lastErr {
			log.Error(err, "Reload certificate, still serving the previous one")
		}
		w.lastErr = err.Error()
		return
	}
	w.lastErr = ""
	if changed {
		leaf := w.current.Load().Leaf
		log.Info("Reloaded certificate", "serial", leaf.SerialNumber.String(), "notAfter", stamp(leaf.NotAfter))
	}
}

// reload reads both files and swaps in the pair when their contents changed
// and load. It reports whether the served pair changed.
func (w *FileWatcher) reload() (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	certPEM, err := bounded.ReadFile(w.certFile, maxPEMFileSize)
	if err != nil {
		return false, err
	}
	keyPEM, err := bounded.ReadFile(w.keyFile, maxPEMFileSize)
	if err != nil {
		return false, err
	}
	if w.current.Load() != nil && bytes.Equal(certPEM, w.certPEM) && bytes.Equal(keyPEM, w.keyPEM) {
		return false, nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, fmt.Errorf("load key pair %s, %s: %w", w.certFile, w.keyFile, err)
	}
	// X509KeyPair fills Leaf since Go 1.23.
	if cert.Leaf == nil {
		return false, fmt.Errorf("load key pair %s, %s: no leaf certificate", w.certFile, w.keyFile)
	}
	w.certPEM, w.keyPEM = certPEM, keyPEM
	w.current.Store(&cert)
	return true, nil
}
