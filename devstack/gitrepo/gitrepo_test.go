package gitrepo

import (
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
)

// file is a file as a client sees it in a commit.
type file struct {
	Content string
	Mode    filemode.FileMode
}

func regular(content string) file    { return file{Content: content, Mode: filemode.Regular} }
func executable(content string) file { return file{Content: content, Mode: filemode.Executable} }

const upstreamURL = "https://github.com/tollgate-dev/tollgate.git"

// sourceFiles is the directory the tests import; the rewrite replaces
// upstreamURL with the served repository's URL.
var sourceFiles = map[string]file{
	"README.md":             regular("# config\n"),
	"apps/guestbook.yaml":   regular("repoURL: " + upstreamURL + "\npath: apps/guestbook\n"),
	"apps/guestbook/a.yaml": regular("kind: ConfigMap\n"),
	"scripts/check.sh":      executable("#!/bin/sh\nexit 0\n"),
}

// startServer serves a fresh root over HTTP and returns the root and the
// base URL.
func startServer(t *testing.T) (root, baseURL string) {
	t.Helper()
	root = t.TempDir()
	srv, err := NewServer(root)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return root, ts.URL
}

// writeDir writes files into a new directory and returns it.
func writeDir(t *testing.T, files map[string]file) string {
	t.Helper()
	dir := t.TempDir()
	for p, f := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		perm := os.FileMode(0o644)
		if f.Mode == filemode.Executable {
			perm = 0o755
		}
		if err := os.WriteFile(full, []byte(f.Content), perm); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// importSource imports sourceFiles as repository "config" with the URL
// rewrite.
func importSource(t *testing.T) *Repo {
	t.Helper()
	root, baseURL := startServer(t)
	dir := writeDir(t, sourceFiles)
	url := baseURL + "/config.git"
	rewrite := func(path string, data []byte) []byte {
		return []byte(strings.ReplaceAll(string(data), upstreamURL, url))
	}
	r, err := Import(t.Context(), root, baseURL, "config", dir, rewrite, "import examples/config-repo")
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	return r
}

// rewrittenSource is sourceFiles as importSource commits them.
func rewrittenSource(r *Repo) map[string]file {
	want := map[string]file{}
	for p, f := range sourceFiles {
		f.Content = strings.ReplaceAll(f.Content, upstreamURL, r.URL())
		want[p] = f
	}
	return want
}

// clone clones url afresh with go-git over HTTP, as the engine does.
func clone(t *testing.T, url string) *gogit.Repository {
	t.Helper()
	repo, err := gogit.CloneContext(t.Context(), memory.NewStorage(), nil, &gogit.CloneOptions{URL: url})
	if err != nil {
		t.Fatalf("clone %s: %v", url, err)
	}
	return repo
}

// head returns the commit HEAD points to in repo, checking that HEAD is
// main.
func head(t *testing.T, repo *gogit.Repository) *object.Commit {
	t.Helper()
	ref, err := repo.Head()
	if err != nil {
		t.Fatalf("HEAD: %v", err)
	}
	if ref.Name() != plumbing.NewBranchReferenceName("main") {
		t.Fatalf("HEAD is %s, want refs/heads/main", ref.Name())
	}
	c, err := repo.CommitObject(ref.Hash())
	if err != nil {
		t.Fatalf("read HEAD commit: %v", err)
	}
	return c
}

// filesOf returns the files of commit c.
func filesOf(t *testing.T, c *object.Commit) map[string]file {
	t.Helper()
	tree, err := c.Tree()
	if err != nil {
		t.Fatalf("tree of %s: %v", c.Hash, err)
	}
	out := map[string]file{}
	err = tree.Files().ForEach(func(f *object.File) error {
		content, err := f.Contents()
		out[f.Name] = file{Content: content, Mode: f.Mode}
		return err
	})
	if err != nil {
		t.Fatalf("files of %s: %v", c.Hash, err)
	}
	return out
}

func TestImportServesRewrittenFiles(t *testing.T) {
	r := importSource(t)

	resp, err := http.Get(r.URL() + "/info/refs?service=git-upload-pack")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resp.Header.Get("Content-Type"), "application/x-git-upload-pack-advertisement"; resp.StatusCode != http.StatusOK || got != want {
		t.Fatalf("GET info/refs: %s, Content-Type %q, want 200 and %q; body:\n%s", resp.Status, got, want, body)
	}
	if !strings.Contains(string(body), "# service=git-upload-pack") || !strings.Contains(string(body), r.Head()+" refs/heads/main") {
		t.Errorf("info/refs does not advertise main at %s:\n%s", r.Head(), body)
	}

	c := head(t, clone(t, r.URL()))
	if c.Hash.String() != r.Head() {
		t.Errorf("cloned HEAD %s, Head() %s", c.Hash, r.Head())
	}
	if diff := cmp.Diff(rewrittenSource(r), filesOf(t, c)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if c.Message != "import examples/config-repo\n" || c.NumParents() != 0 {
		t.Errorf("commit message %q with %d parents, want %q and none", c.Message, c.NumParents(), "import examples/config-repo\n")
	}
	if c.Author.Name != "tollgate dev" || c.Author.Email != "dev@tollgate.invalid" {
		t.Errorf("author %s <%s>, want tollgate dev <dev@tollgate.invalid>", c.Author.Name, c.Author.Email)
	}
}

func TestCommitAddsAndDeletesFiles(t *testing.T) {
	r := importSource(t)
	clock := time.Date(2040, 1, 1, 12, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return clock }

	sha, err := r.Commit(t.Context(), map[string][]byte{
		"apps/new.yaml":    []byte("kind: Secret\n"),
		"scripts/check.sh": []byte("#!/bin/sh\nexit 1\n"),
	}, []string{"README.md"}, "add a Secret\n\n  \nwith a body  \n\n")
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if sha != r.Head() {
		t.Errorf("Commit returned %s, Head() %s", sha, r.Head())
	}
	c := head(t, clone(t, r.URL()))
	if c.Hash.String() != sha {
		t.Fatalf("fetched HEAD %s, want %s", c.Hash, sha)
	}
	want := rewrittenSource(r)
	delete(want, "README.md")
	want["apps/new.yaml"] = regular("kind: Secret\n")
	want["scripts/check.sh"] = executable("#!/bin/sh\nexit 1\n") // stays executable
	if diff := cmp.Diff(want, filesOf(t, c)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if want := "add a Secret\n\nwith a body\n"; c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}

	// With the clock standing still, dates still increase.
	sha2, err := r.Commit(t.Context(), map[string][]byte{"apps/new.yaml": []byte("kind: ConfigMap\n")}, nil, "second")
	if err != nil {
		t.Fatalf("second Commit: %v", err)
	}
	c2 := head(t, clone(t, r.URL()))
	if c2.Hash.String() != sha2 || c2.ParentHashes[0].String() != sha {
		t.Fatalf("second commit %s with parent %s, want %s with parent %s", c2.Hash, c2.ParentHashes[0], sha2, sha)
	}
	if got := []time.Time{c.Author.When.UTC(), c2.Author.When.UTC(), c2.Committer.When.UTC()}; !cmp.Equal(got, []time.Time{clock, clock.Add(time.Second), clock.Add(time.Second)}) {
		t.Errorf("dates %v, want %v then %v", got, clock, clock.Add(time.Second))
	}

	_, err = r.Commit(t.Context(), map[string][]byte{"apps/new.yaml": []byte("kind: ConfigMap\n")}, nil, "again")
	if !errors.Is(err, ErrNothingToCommit) {
		t.Errorf("Commit of unchanged content: %v, want ErrNothingToCommit", err)
	}
}

func TestRevertRestoresParentTree(t *testing.T) {
	r := importSource(t)
	base := head(t, clone(t, r.URL()))

	bad, err := r.Commit(t.Context(), map[string][]byte{
		"apps/guestbook.yaml":    []byte("repoURL: https://evil.invalid/x.git\n"),
		"apps/evil/deploy.yaml":  []byte("kind: Deployment\n"),
		"scripts/check.sh":       []byte("#!/bin/sh\nexit 2\n"),
		"apps/guestbook/b.yaml":  []byte("kind: Service\n"),
		"apps/guestbook/a.yaml":  []byte("kind: ConfigMap\ndata: {}\n"),
		"docs/notes/readme.txt":  []byte("notes\n"),
		"apps/guestbook/c/d.yml": []byte("x: 1\n"),
	}, []string{"README.md"}, "bad change\n\nwith details")
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	rev, err := r.Revert(t.Context(), bad)
	if err != nil {
		t.Fatalf("Revert: %v", err)
	}
	c := head(t, clone(t, r.URL()))
	if c.Hash.String() != rev || rev != r.Head() {
		t.Fatalf("fetched HEAD %s, Revert returned %s, Head() %s", c.Hash, rev, r.Head())
	}
	if diff := cmp.Diff(filesOf(t, base), filesOf(t, c)); diff != "" {
		t.Errorf("files after revert (-want +got):\n%s", diff)
	}
	if c.TreeHash != base.TreeHash {
		t.Errorf("tree after revert %s, want the imported tree %s", c.TreeHash, base.TreeHash)
	}
	if want := "Revert \"bad change\"\n\nThis reverts commit " + bad + ".\n"; c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}
	if len(c.ParentHashes) != 1 || c.ParentHashes[0].String() != bad {
		t.Errorf("parents %v, want [%s]", c.ParentHashes, bad)
	}
}

func TestRevertErrors(t *testing.T) {
	r := importSource(t)
	first, err := r.Commit(t.Context(), map[string][]byte{"README.md": []byte("one\n")}, nil, "one")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(t.Context(), map[string][]byte{"README.md": []byte("two\n")}, nil, "two"); err != nil {
		t.Fatal(err)
	}
	before := r.Head()

	_, err = r.Revert(t.Context(), first)
	if want := "revert " + first + " in config: conflict: changed on main since: README.md"; err == nil || err.Error() != want {
		t.Errorf("Revert of a commit changed since: %v, want %s", err, want)
	}
	_, err = r.Revert(t.Context(), "abc123")
	if want := "revert abc123 in config: not a full commit SHA"; err == nil || err.Error() != want {
		t.Errorf("Revert of a short SHA: %v, want %s", err, want)
	}
	if _, err := r.Commit(t.Context(), map[string][]byte{"README.md": []byte("# config\n")}, nil, "back"); err != nil {
		t.Fatal(err)
	}
	// README.md already has first's parent content: nothing left to undo.
	if _, err := r.Revert(t.Context(), first); !errors.Is(err, ErrNothingToCommit) {
		t.Errorf("Revert of an undone change: %v, want ErrNothingToCommit", err)
	}
	if r.Head() == before {
		t.Errorf("Head() did not move after the commit")
	}
}

// TestUserPush pushes from a separate go-git clone, as a user's `git push`,
// and checks that Head sees it and that Commit builds on it.
func TestUserPush(t *testing.T) {
	r := importSource(t)
	user, err := gogit.CloneContext(t.Context(), memory.NewStorage(), memfs.New(), &gogit.CloneOptions{URL: r.URL()})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := user.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	f, err := wt.Filesystem.Create("user.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("from a user\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add("user.txt"); err != nil {
		t.Fatal(err)
	}
	userSHA, err := wt.Commit("user change", &gogit.CommitOptions{
		Author: &object.Signature{Name: "User", Email: "user@example.invalid", When: time.Now()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := user.PushContext(t.Context(), &gogit.PushOptions{}); err != nil {
		t.Fatalf("user push: %v", err)
	}
	if got := r.Head(); got != userSHA.String() {
		t.Fatalf("Head() after a user push %s, want %s", got, userSHA)
	}

	sha, err := r.Commit(t.Context(), map[string][]byte{"tour.txt": []byte("tour\n")}, nil, "tour step")
	if err != nil {
		t.Fatalf("Commit after a user push: %v", err)
	}
	c := head(t, clone(t, r.URL()))
	if c.Hash.String() != sha || c.ParentHashes[0] != userSHA {
		t.Fatalf("HEAD %s with parent %s, want %s with parent %s", c.Hash, c.ParentHashes[0], sha, userSHA)
	}
	want := rewrittenSource(r)
	want["user.txt"] = regular("from a user\n")
	want["tour.txt"] = regular("tour\n")
	if diff := cmp.Diff(want, filesOf(t, c)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestCommitRejectsPaths(t *testing.T) {
	r := importSource(t)
	before := r.Head()
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		del   []string
		want  string
	}{
		{"parent", map[string][]byte{"../x": nil}, nil, `commit to config: path "../x" leaves the repository`},
		{"absolute", map[string][]byte{"/x": nil}, nil, `commit to config: path "/x" is absolute: want a slash-separated path relative to the repository root`},
		{"parent inside", map[string][]byte{"apps/../../x": nil}, nil, `commit to config: path "apps/../../x" leaves the repository`},
		{"unclean", map[string][]byte{"apps//x": nil}, nil, `commit to config: path "apps//x" is not clean: want a slash-separated path relative to the repository root`},
		{"dot", map[string][]byte{"./x": nil}, nil, `commit to config: path "./x" is not clean: want a slash-separated path relative to the repository root`},
		{"git dir", map[string][]byte{".git/config": nil}, nil, `commit to config: path ".git/config" has a .git element, which Git cannot commit`},
		{"delete parent", nil, []string{"../README.md"}, `commit to config: path "../README.md" leaves the repository`},
		{"delete missing", nil, []string{"missing.txt"}, `commit to config: delete missing.txt: no such file on main`},
		{"write and delete", map[string][]byte{"README.md": nil}, []string{"README.md"}, `commit to config: path "README.md" is both written and deleted`},
		{"file under file", map[string][]byte{"README.md/x": nil}, nil, `commit to config: paths README.md and README.md/x: a path cannot be both a file and a directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Commit(t.Context(), tc.files, tc.del, "bad")
			if err == nil || err.Error() != tc.want {
				t.Errorf("Commit: %v, want %s", err, tc.want)
			}
		})
	}
	if got := r.Head(); got != before {
		t.Errorf("Head() moved from %s to %s", before, got)
	}
}

func TestImportRejects(t *testing.T) {
	root, baseURL := startServer(t)

	withLink := writeDir(t, map[string]file{"apps/a.yaml": regular("a\n")})
	if err := os.Symlink("a.yaml", filepath.Join(withLink, "apps", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	withGit := writeDir(t, map[string]file{"apps/a.yaml": regular("a\n"), "sub/.git/HEAD": regular("ref: refs/heads/main\n")})
	good := writeDir(t, map[string]file{"a.yaml": regular("a\n")})
	empty := t.TempDir()
	if _, err := Import(t.Context(), root, baseURL, "existing", good, nil, "import"); err != nil {
		t.Fatalf("Import: %v", err)
	}

	for _, tc := range []struct {
		name, repo, dir string
		want            string
	}{
		{"symlink", "linked", withLink, "import " + withLink + ": " + filepath.Join(withLink, "apps", "link.yaml") + " is a symbolic link: replace it with a copy of its target"},
		{"git dir", "withgit", withGit, "import " + withGit + ": " + filepath.Join(withGit, "sub", ".git") + ": Git cannot commit a .git entry"},
		{"empty", "empty", empty, "import " + empty + ": " + empty + " holds no files"},
		{"bad name", "a/b", good, "import " + good + `: invalid repository name "a/b": want one path element not starting with a dot`},
		{"exists", "existing", good, "import " + good + ": create repository: mkdir " + filepath.Join(root, "existing.git") + ": file exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Import(t.Context(), root, baseURL, tc.repo, tc.dir, nil, "import")
			if err == nil || err.Error() != tc.want {
				t.Errorf("Import: %v, want %s", err, tc.want)
			}
			if tc.repo != "existing" {
				if _, err := os.Stat(filepath.Join(root, tc.repo+".git")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("repository %s left behind: %v", tc.repo, err)
				}
			}
		})
	}
}

func TestConcurrentCommits(t *testing.T) {
	r := importSource(t)
	names := []string{"a", "b", "c", "d"}
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, n := range names {
		wg.Go(func() {
			_, errs[i] = r.Commit(t.Context(), map[string][]byte{"concurrent/" + n: []byte(n)}, nil, "add "+n)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Commit %s: %v", names[i], err)
		}
	}
	want := rewrittenSource(r)
	for _, n := range names {
		want["concurrent/"+n] = regular(n)
	}
	if diff := cmp.Diff(want, filesOf(t, head(t, clone(t, r.URL())))); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

// TestRealGitClient clones, reverts and pushes with the git binary, which
// this package requires anyway.
func TestRealGitClient(t *testing.T) {
	r := importSource(t)
	bad, err := r.Commit(t.Context(), map[string][]byte{
		"apps/guestbook.yaml": []byte("broken\n"),
		"apps/extra.yaml":     []byte("extra\n"),
	}, []string{"scripts/check.sh"}, "break things")
	if err != nil {
		t.Fatal(err)
	}

	home := t.TempDir()
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), "git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(),
			"HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=Dev User", "GIT_AUTHOR_EMAIL=user@example.invalid",
			"GIT_COMMITTER_NAME=Dev User", "GIT_COMMITTER_EMAIL=user@example.invalid")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	work := filepath.Join(t.TempDir(), "config")
	git(home, "clone", r.URL(), work)
	if got := strings.TrimSpace(git(work, "rev-parse", "HEAD")); got != bad {
		t.Fatalf("git clone checked out %s, want %s", got, bad)
	}
	if got := strings.TrimSpace(git(work, "symbolic-ref", "HEAD")); got != "refs/heads/main" {
		t.Errorf("git clone HEAD is %s, want refs/heads/main", got)
	}
	fi, err := os.Stat(filepath.Join(work, "apps", "extra.yaml"))
	if err != nil || fi.Mode().Perm()&0o111 != 0 {
		t.Errorf("apps/extra.yaml in the checkout: %v, mode %v, want a regular file", err, fi)
	}

	// git revert and Revert make the same tree and message.
	git(work, "revert", "--no-edit", bad)
	wantTree := strings.TrimSpace(git(work, "rev-parse", "HEAD^{tree}"))
	raw := git(work, "cat-file", "commit", "HEAD")
	_, wantMsg, _ := strings.Cut(raw, "\n\n")
	rev, err := r.Revert(t.Context(), bad)
	if err != nil {
		t.Fatalf("Revert: %v", err)
	}
	c := head(t, clone(t, r.URL()))
	if c.Hash.String() != rev {
		t.Fatalf("HEAD %s, want %s", c.Hash, rev)
	}
	if c.TreeHash.String() != wantTree || c.Message != wantMsg {
		t.Errorf("Revert made tree %s with message %q; git revert made %s with %q", c.TreeHash, c.Message, wantTree, wantMsg)
	}
	git(work, "reset", "--hard", "HEAD~1")
	git(work, "pull", "--ff-only")
	fi, err = os.Stat(filepath.Join(work, "scripts", "check.sh"))
	if err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("scripts/check.sh after revert: %v, mode %v, want executable", err, fi)
	}

	// A user's git push is accepted and Head sees it.
	if err := os.WriteFile(filepath.Join(work, "user.txt"), []byte("user\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(work, "add", "user.txt")
	git(work, "commit", "-m", "user change")
	git(work, "push", "origin", "main")
	if got, want := r.Head(), strings.TrimSpace(git(work, "rev-parse", "HEAD")); got != want {
		t.Errorf("Head() after git push %s, want %s", got, want)
	}

	// A push larger than http.postBuffer has a chunked request body.
	big := make([]byte, 256<<10)
	_, _ = rand.NewChaCha8([32]byte{}).Read(big) // incompressible
	if err := os.WriteFile(filepath.Join(work, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	git(work, "add", "big.bin")
	git(work, "commit", "-m", "big file")
	git(work, "-c", "http.postBuffer=65536", "push", "origin", "main")
	if got, want := r.Head(), strings.TrimSpace(git(work, "rev-parse", "HEAD")); got != want {
		t.Errorf("Head() after a chunked git push %s, want %s", got, want)
	}
	if got := filesOf(t, head(t, clone(t, r.URL())))["big.bin"].Content; got != string(big) {
		t.Errorf("big.bin fetched after a chunked push has %d bytes, want the %d pushed", len(got), len(big))
	}
}

// TestServeHTTPLogsStderr checks that what git http-backend writes to its
// standard error goes to the request's logger.
func TestServeHTTPLogsStderr(t *testing.T) {
	root := t.TempDir()
	srv, err := NewServer(root)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	req := httptest.NewRequestWithContext(logr.NewContext(t.Context(), log), http.MethodGet, "/missing.git/info/refs?service=git-upload-pack", nil)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotFound {
		t.Errorf("status %d, want %d", rec.Code, http.StatusNotFound)
	}
	want := []string{`"level"=0 "msg"="git http-backend wrote to stderr" "line"="Not a git repository: '` + filepath.Join(root, "missing.git") + `'"`}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
}

func TestCleanMessage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"subject", "subject\n"},
		{"\n\n subject  \n\n\n\nbody\t\n\n", " subject\n\nbody\n"},
		{" \n\n", ""},
	} {
		if got := cleanMessage(tc.in); got != tc.want {
			t.Errorf("cleanMessage(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
