// Package gitrepo serves Git repositories over Git's smart HTTP protocol for
// `tollgate dev`, and commits to them.
//
// Server runs the real git http-backend (through net/http/cgi) over the bare
// repositories under a root directory, so every Git client — the engine's
// go-git source, a developer's `git clone` and `git push` — talks to a real
// Git server. Import turns a directory into such a repository; the Repo it
// returns builds commits with go-git in memory and pushes them to the Server
// over HTTP, exactly as a developer would push. Because anyone may push to
// the same branch, every Commit and Revert first fetches main and builds on
// what it finds there.
//
// This is development tooling for a loopback listener, never for
// production: there is no authentication (whoever reaches the listener can
// read and push), nothing read from the network or the disk is bounded, and
// it runs the git binary, which must be installed.
package gitrepo

import (
	"fmt"
	"log"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-logr/logr"
)

// Server serves the bare repositories under its root directory over Git's
// smart HTTP protocol with git http-backend. Repository <root>/<name>.git is
// served at /<name>.git: mount the Server at the root of its listener. Every
// repository is exported, and the repositories whose config sets
// http.receivepack (Import sets it) accept pushes; there is no
// authentication.
type Server struct {
	root    string // absolute directory holding the bare repositories
	backend string // path of git-http-backend
}

// NewServer returns a Server for the repositories under root. It checks that
// git http-backend exists (in `git --exec-path`), returning an error that
// says to install git when it does not.
func NewServer(root string) (*Server, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("resolve git server root %s: %w", root, err)
	}
	backend, err := findHTTPBackend()
	if err != nil {
		return nil, err
	}
	return &Server{root: abs, backend: backend}, nil
}

// findHTTPBackend returns the path of git-http-backend in git's exec path.
func findHTTPBackend() (string, error) {
	const install = "install git: tollgate dev serves its repository with git http-backend"
	git, err := exec.LookPath("git")
	if err != nil {
		return "", fmt.Errorf("find git: %w; %s", err, install)
	}
	out, err := exec.Command(git, "--exec-path").Output()
	if err != nil {
		return "", fmt.Errorf("run git --exec-path: %w; %s", err, install)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	fi, err := os.Stat(backend)
	if err != nil {
		return "", fmt.Errorf("find git http-backend: %w; %s", err, install)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("find git http-backend: %s is not an executable file; %s", backend, install)
	}
	return backend, nil
}

// ServeHTTP runs git http-backend for the request, with GIT_PROJECT_ROOT set
// to the root directory and every repository exported. What git
// http-backend writes to its standard error is logged with the logr logger
// of the request's context.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if slices.Contains(r.TransferEncoding, "chunked") {
		// git sends a chunked body when a request exceeds http.postBuffer
		// (1 MiB by default), as pushes of large files do, and
		// net/http/cgi answers those with 400. git http-backend reads the
		// body to its end when CONTENT_LENGTH is unset, so pass the
		// (already de-chunked) body on as one of unknown length.
		r = r.Clone(r.Context())
		r.TransferEncoding = nil
		r.ContentLength = -1
	}
	stderr := stderrLog{logr.FromContextOrDiscard(r.Context())}
	h := &cgi.Handler{
		Path: s.backend,
		// Root is empty: PATH_INFO is the whole request path, /<name>.git/...
		Env: []string{
			"GIT_PROJECT_ROOT=" + s.root,
			"GIT_HTTP_EXPORT_ALL=1",
		},
		Stderr: stderr,
		Logger: log.New(stderr, "", 0),
	}
	h.ServeHTTP(w, r)
}

// stderrLog logs each line written to it.
type stderrLog struct{ log logr.Logger }

func (l stderrLog) Write(p []byte) (int, error) {
	for line := range strings.SplitSeq(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			l.log.Info("git http-backend wrote to stderr", "line", line)
		}
	}
	return len(p), nil
}
