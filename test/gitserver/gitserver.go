// Package gitserver runs a real Git server inside a test process, for tests
// of the engine's source step and of the engine itself.
//
// It wraps github.com/fluxcd/pkg/gittestserver (the Git smart HTTP protocol
// over loopback, served by git-http-backend semantics through gitkit, and
// optionally SSH) behind a front listener whose address never changes, so a
// test can Stop the server to simulate an outage and Start it again on the
// same URL. Repositories are built with go-git in an in-memory working
// repository and pushed to the server over HTTP, exactly as a developer would
// push.
//
// The wrapped server shells out to the git binary (git upload-pack,
// git receive-pack), so the machine running the tests needs git installed.
// Only tests use this package; the product never runs git.
package gitserver

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/gittestserver"
	"github.com/go-git/go-billy/v5/memfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
)

// quietOnce silences the standard logger, which gitkit uses to log every
// request; set TOLLGATE_GITSERVER_LOG=1 to keep those lines.
var quietOnce sync.Once

// DefaultBranch is the branch CreateRepo commits to and the remote HEAD of
// every repository.
const DefaultBranch = "main"

// Server is a Git server for one test. Create it with New; it is stopped
// when the test ends.
type Server struct {
	git                *gittestserver.GitServer
	backend            *url.URL
	username, password string

	mu       sync.Mutex
	addr     string // the front listener's fixed host:port
	front    *http.Server
	running  bool
	repos    map[string]*gogit.Repository // working repositories by name
	sshURL   string
	sshKnown []byte

	// clock makes commit times strictly increasing, so commit SHAs differ
	// even for identical content.
	clock time.Time
	// fetches counts git-upload-pack requests by repository path.
	fetches map[string]int
}

// Option configures a Server.
type Option func(*Server)

// WithBasicAuth makes the server require HTTP basic authentication with
// these credentials for every request, reads included.
func WithBasicAuth(username, password string) Option {
	return func(s *Server) { s.username, s.password = username, password }
}

// New starts a Git server serving HTTP on a loopback address. It is stopped
// and its repositories removed when t ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	quietOnce.Do(func() {
		if os.Getenv("TOLLGATE_GITSERVER_LOG") == "" {
			log.SetOutput(io.Discard)
		}
	})
	s := &Server{
		repos:   map[string]*gogit.Repository{},
		fetches: map[string]int{},
		clock:   time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC),
	}
	for _, o := range opts {
		o(s)
	}
	s.git = gittestserver.NewGitServer(t.TempDir())
	if s.username != "" || s.password != "" {
		s.git.Auth(s.username, s.password)
	}
	if err := s.git.StartHTTP(); err != nil {
		t.Fatalf("start git server: %v", err)
	}
	backend, err := url.Parse(s.git.HTTPAddress())
	if err != nil {
		t.Fatalf("parse git server address: %v", err)
	}
	s.backend = backend
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	s.addr = ln.Addr().String()
	s.serve(ln)
	t.Cleanup(func() {
		s.Stop()
		s.git.StopHTTP()
		_ = s.git.StopSSH()
	})
	return s
}

// serve starts the front HTTP server on ln. The caller holds no lock.
func (s *Server) serve(ln net.Listener) {
	proxy := httputil.NewSingleHostReverseProxy(s.backend)
	proxy.FlushInterval = -1 // stream packfiles as they are produced
	count := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("service") == "git-upload-pack" || strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			repo, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), ".git/")
			s.mu.Lock()
			s.fetches[repo]++
			s.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: count, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.front, s.running = srv, true
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// URL returns the base URL of the server, e.g. http://127.0.0.1:41234. A
// repository named "app" is served at URL()+"/app.git".
func (s *Server) URL() string { return "http://" + s.addr }

// RepoURL returns the HTTP URL of the repository name.
func (s *Server) RepoURL(name string) string { return s.URL() + "/" + name + ".git" }

// Fetches returns how many requests clients made to read repository name
// (git-upload-pack: listing its references, cloning, fetching) since the
// server started; pushes do not count. A test asserts with it that nothing
// was fetched from a repository.
func (s *Server) Fetches(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches[name]
}

// RepoDir returns the directory of the bare repository name on disk, for
// file:// URLs.
func (s *Server) RepoDir(name string) string {
	return filepath.Join(s.git.Root(), name+".git")
}

// Stop closes the front listener and every open connection: clients see
// "connection refused" until Start. Stop is idempotent.
func (s *Server) Stop() {
	s.mu.Lock()
	srv, running := s.front, s.running
	s.running = false
	s.mu.Unlock()
	if running {
		_ = srv.Close()
	}
}

// Start serves again on the same address after Stop.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	running := s.running
	s.mu.Unlock()
	if running {
		return
	}
	var ln net.Listener
	var err error
	// The port was ours a moment ago; the kernel may take a moment to
	// release it.
	for range 50 {
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("listen again on %s: %v", s.addr, err)
	}
	s.serve(ln)
}

// CreateRepo creates the bare repository name on the server with one
// commit of files on DefaultBranch, and returns its HTTP URL.
func (s *Server) CreateRepo(t testing.TB, name string, files map[string]string) string {
	t.Helper()
	if _, err := gogit.PlainInitWithOptions(s.RepoDir(name), &gogit.PlainInitOptions{
		InitOptions: gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(DefaultBranch)},
		Bare:        true,
	}); err != nil {
		t.Fatalf("create repository %s: %v", name, err)
	}
	work, err := gogit.InitWithOptions(memory.NewStorage(), memfs.New(), gogit.InitOptions{
		DefaultBranch: plumbing.NewBranchReferenceName(DefaultBranch),
	})
	if err != nil {
		t.Fatalf("init working repository %s: %v", name, err)
	}
	if _, err := work.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{s.RepoURL(name)}}); err != nil {
		t.Fatalf("add remote to %s: %v", name, err)
	}
	s.mu.Lock()
	s.repos[name] = work
	s.mu.Unlock()
	s.Commit(t, name, files, "initial commit")
	return s.RepoURL(name)
}

// Commit writes files (slash-separated path to content; an empty string is
// an empty file, Delete removes files) to DefaultBranch of name, commits
// them with msg, pushes, and returns the commit SHA.
func (s *Server) Commit(t testing.TB, name string, files map[string]string, msg string) string {
	t.Helper()
	return s.CommitOn(t, name, DefaultBranch, files, nil, msg)
}

// Delete removes paths from DefaultBranch of name in a new commit, pushes,
// and returns its SHA.
func (s *Server) Delete(t testing.TB, name string, paths []string, msg string) string {
	t.Helper()
	return s.CommitOn(t, name, DefaultBranch, nil, paths, msg)
}

// CommitOn is Commit on branch (created from the current DefaultBranch
// commit if it does not exist), also removing the paths in del.
func (s *Server) CommitOn(t testing.TB, name, branch string, files map[string]string, del []string, msg string) string {
	t.Helper()
	return s.commitOn(t, name, branch, files, del, msg, nil)
}

// commitOn is CommitOn, the commit signed with key when it is not nil.
func (s *Server) commitOn(t testing.TB, name, branch string, files map[string]string, del []string, msg string, key *SigningKey) string {
	t.Helper()
	work, wt := s.checkout(t, name, branch)
	for _, p := range sortedKeys(files) {
		writeFile(t, wt, p, files[p])
	}
	for _, p := range del {
		if _, err := wt.Remove(p); err != nil {
			t.Fatalf("remove %s in %s: %v", p, name, err)
		}
	}
	if err := wt.AddWithOptions(&gogit.AddOptions{All: true}); err != nil {
		t.Fatalf("stage changes in %s: %v", name, err)
	}
	sha := s.commit(t, work, wt, msg, key)
	s.push(t, work, "refs/heads/"+branch)
	return sha
}

// Symlink commits a symbolic link at path pointing to target on
// DefaultBranch of name, pushes, and returns the commit SHA. The target is
// stored verbatim, so tests can build links that escape the tree.
func (s *Server) Symlink(t testing.TB, name, linkPath, target string) string {
	t.Helper()
	work, wt := s.checkout(t, name, DefaultBranch)
	if err := wt.Filesystem.MkdirAll(path.Dir(linkPath), 0o755); err != nil {
		t.Fatalf("mkdir for %s: %v", linkPath, err)
	}
	if err := wt.Filesystem.Symlink(target, linkPath); err != nil {
		t.Fatalf("symlink %s -> %s: %v", linkPath, target, err)
	}
	if _, err := wt.Add(linkPath); err != nil {
		t.Fatalf("stage %s: %v", linkPath, err)
	}
	sha := s.commit(t, work, wt, "link "+linkPath, nil)
	s.push(t, work, "refs/heads/"+DefaultBranch)
	return sha
}

// Tag creates a lightweight tag on sha in name and pushes it.
func (s *Server) Tag(t testing.TB, name, tag, sha string) {
	t.Helper()
	work := s.repo(t, name)
	ref := plumbing.NewHashReference(plumbing.NewTagReferenceName(tag), plumbing.NewHash(sha))
	if err := work.Storer.SetReference(ref); err != nil {
		t.Fatalf("tag %s in %s: %v", tag, name, err)
	}
	s.push(t, work, ref.Name().String())
}

// AnnotatedTag creates an annotated tag object on sha in name and pushes it.
func (s *Server) AnnotatedTag(t testing.TB, name, tag, sha, msg string) {
	t.Helper()
	work := s.repo(t, name)
	if _, err := work.CreateTag(tag, plumbing.NewHash(sha), &gogit.CreateTagOptions{
		Tagger:  s.signature(),
		Message: msg,
	}); err != nil {
		t.Fatalf("annotated tag %s in %s: %v", tag, name, err)
	}
	s.push(t, work, plumbing.NewTagReferenceName(tag).String())
}

// Branch points branch at sha in name (creating or moving it, a force
// push) and pushes it.
func (s *Server) Branch(t testing.TB, name, branch, sha string) {
	t.Helper()
	s.SetRef(t, name, plumbing.NewBranchReferenceName(branch).String(), sha)
}

// SetRef points the full reference name ref (such as refs/pull/7/head) at
// sha in name and pushes it.
func (s *Server) SetRef(t testing.TB, name, ref, sha string) {
	t.Helper()
	work := s.repo(t, name)
	r := plumbing.NewHashReference(plumbing.ReferenceName(ref), plumbing.NewHash(sha))
	if err := work.Storer.SetReference(r); err != nil {
		t.Fatalf("set %s in %s: %v", ref, name, err)
	}
	s.push(t, work, ref)
}

// Head returns the SHA branch of name points to.
func (s *Server) Head(t testing.TB, name, branch string) string {
	t.Helper()
	ref, err := s.repo(t, name).Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		t.Fatalf("branch %s of %s: %v", branch, name, err)
	}
	return ref.Hash().String()
}

// StartSSH starts the SSH transport of the server (same repositories, no
// client authentication) and returns the ssh:// base URL, e.g.
// ssh://git@127.0.0.1:41235, and a known_hosts line for its host key.
func (s *Server) StartSSH(t testing.TB) (baseURL string, knownHosts []byte) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sshURL != "" {
		return s.sshURL, s.sshKnown
	}
	keyDir := t.TempDir()
	s.git.KeyDir(keyDir)
	if err := s.git.ListenSSH(); err != nil {
		t.Fatalf("listen ssh: %v", err)
	}
	go func() { _ = s.git.StartSSH() }()
	// The host key is written by ListenSSH.
	pub, err := os.ReadFile(filepath.Join(keyDir, "gitkit.rsa.pub"))
	if err != nil {
		t.Fatalf("read ssh host key: %v", err)
	}
	u, err := url.Parse(s.git.SSHAddress())
	if err != nil {
		t.Fatalf("parse ssh address: %v", err)
	}
	s.sshURL = s.git.SSHAddress()
	s.sshKnown = fmt.Appendf(nil, "[%s]:%s %s", u.Hostname(), u.Port(), strings.TrimSpace(string(pub)))
	s.sshKnown = append(s.sshKnown, '\n')
	return s.sshURL, s.sshKnown
}

func (s *Server) repo(t testing.TB, name string) *gogit.Repository {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	work, ok := s.repos[name]
	if !ok {
		t.Fatalf("repository %s was not created with CreateRepo", name)
	}
	return work
}

// checkout returns the working repository of name with branch checked out,
// creating the branch from DefaultBranch when it does not exist.
func (s *Server) checkout(t testing.TB, name, branch string) (*gogit.Repository, *gogit.Worktree) {
	t.Helper()
	work := s.repo(t, name)
	wt, err := work.Worktree()
	if err != nil {
		t.Fatalf("worktree of %s: %v", name, err)
	}
	ref := plumbing.NewBranchReferenceName(branch)
	head, err := work.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return work, wt // empty repository: the first commit creates HEAD's branch
	}
	if err != nil {
		t.Fatalf("head of %s: %v", name, err)
	}
	if head.Name() == ref {
		return work, wt
	}
	opts := &gogit.CheckoutOptions{Branch: ref, Force: true}
	if _, err := work.Reference(ref, false); errors.Is(err, plumbing.ErrReferenceNotFound) {
		main, err := work.Reference(plumbing.NewBranchReferenceName(DefaultBranch), false)
		if err != nil {
			t.Fatalf("branch %s of %s: %v", DefaultBranch, name, err)
		}
		opts.Create, opts.Hash = true, main.Hash()
	}
	if err := wt.Checkout(opts); err != nil {
		t.Fatalf("checkout %s in %s: %v", branch, name, err)
	}
	return work, wt
}

func (s *Server) commit(t testing.TB, work *gogit.Repository, wt *gogit.Worktree, msg string, key *SigningKey) string {
	t.Helper()
	opts := &gogit.CommitOptions{Author: s.signature(), AllowEmptyCommits: true}
	if key != nil {
		opts.SignKey = key.Entity
	}
	h, err := wt.Commit(msg, opts)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	if _, err := work.CommitObject(h); err != nil {
		t.Fatalf("read commit back: %v", err)
	}
	return h.String()
}

func (s *Server) push(t testing.TB, work *gogit.Repository, ref string) {
	t.Helper()
	opts := &gogit.PushOptions{
		RemoteName: "origin",
		RefSpecs:   []config.RefSpec{config.RefSpec("+" + ref + ":" + ref)},
	}
	if s.username != "" || s.password != "" {
		opts.Auth = &githttp.BasicAuth{Username: s.username, Password: s.password}
	}
	if err := work.Push(opts); err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		t.Fatalf("push %s: %v", ref, err)
	}
}

func (s *Server) signature() *object.Signature {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = s.clock.Add(time.Minute)
	return &object.Signature{Name: "Test Bot", Email: "bot@example.com", When: s.clock}
}

func writeFile(t testing.TB, wt *gogit.Worktree, p, content string) {
	t.Helper()
	fs := wt.Filesystem
	if err := fs.MkdirAll(path.Dir(p), 0o755); err != nil {
		t.Fatalf("mkdir for %s: %v", p, err)
	}
	f, err := fs.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
	if _, err := f.Write([]byte(content)); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close %s: %v", p, err)
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
