package source

import (
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// newCache returns a Cache in a temporary directory. It allows the http
// and file repositories of the test Git server (TestFetchSchemes checks
// the policy).
func newCache(t *testing.T, opts Options) *Cache {
	t.Helper()
	opts.AllowInsecure, opts.AllowFile = true, true
	c, err := NewCache(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readTree returns the regular files under dir by slash path, and links as
// "-> target".
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "-> " + filepath.ToSlash(target)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read tree %s: %v", dir, err)
	}
	return out
}

func mustFetch(t *testing.T, c *Cache, url, rev string, creds reposerver.Credentials) Checkout {
	t.Helper()
	co, err := c.Fetch(t.Context(), url, rev, creds)
	if err != nil {
		t.Fatalf("Fetch(%s, %q): %v", url, rev, err)
	}
	return co
}

// fixture is a repository with two commits on main, a branch, a
// lightweight tag and an annotated tag.
type fixture struct {
	srv              *gitserver.Server
	url              string
	first, second    string
	feature          string
	firstFiles       map[string]string
	secondFiles      map[string]string
	featureFiles     map[string]string
	firstTag, annTag string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	srv := gitserver.New(t)
	f := fixture{srv: srv, firstTag: "v1.0.0", annTag: "v2"}
	f.firstFiles = map[string]string{"app/deploy.yaml": "replicas: 1\n", "README.md": "hello\n"}
	f.url = srv.CreateRepo(t, "app", f.firstFiles)
	f.first = srv.Head(t, "app", gitserver.DefaultBranch)
	f.second = srv.Commit(t, "app", map[string]string{"app/deploy.yaml": "replicas: 2\n"}, "scale")
	f.secondFiles = map[string]string{"app/deploy.yaml": "replicas: 2\n", "README.md": "hello\n"}
	f.feature = srv.CommitOn(t, "app", "feature", map[string]string{"app/extra.yaml": "x: 1\n"}, nil, "feature")
	f.featureFiles = map[string]string{"app/deploy.yaml": "replicas: 2\n", "README.md": "hello\n", "app/extra.yaml": "x: 1\n"}
	srv.Tag(t, "app", f.firstTag, f.first)
	srv.AnnotatedTag(t, "app", f.annTag, f.second, "release 2")
	srv.SetRef(t, "app", "refs/pull/7/head", f.feature)
	return f
}

func TestFetchResolvesRevisions(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name      string
		revision  string
		wantSHA   string
		wantFiles map[string]string
	}{
		{"empty is HEAD", "", f.second, f.secondFiles},
		{"HEAD", "HEAD", f.second, f.secondFiles},
		{"branch", "main", f.second, f.secondFiles},
		{"full branch ref", "refs/heads/main", f.second, f.secondFiles},
		{"other branch", "feature", f.feature, f.featureFiles},
		{"other reference", "refs/pull/7/head", f.feature, f.featureFiles},
		{"short reference name", "pull/7/head", f.feature, f.featureFiles},
		{"lightweight tag", f.firstTag, f.first, f.firstFiles},
		{"full tag ref", "refs/tags/" + f.firstTag, f.first, f.firstFiles},
		{"annotated tag", f.annTag, f.second, f.secondFiles},
		{"full SHA not at a tip", f.first, f.first, f.firstFiles},
		{"full SHA upper case", strings.ToUpper(f.second), f.second, f.secondFiles},
		{"short SHA of a tip", f.feature[:7], f.feature, f.featureFiles},
		{"short SHA not at a tip", f.first[:8], f.first, f.firstFiles},
		{"spaces trimmed", " main ", f.second, f.secondFiles},
	}
	shared := newCache(t, Options{})
	noShallow := newCache(t, Options{DisableShallow: true})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			caches := map[string]*Cache{"fresh": newCache(t, Options{}), "shared": shared, "full history": noShallow}
			for cname, c := range caches {
				co := mustFetch(t, c, f.url, tt.revision, reposerver.Credentials{})
				if co.Revision != tt.wantSHA {
					t.Errorf("%s cache: Revision = %s, want %s", cname, co.Revision, tt.wantSHA)
				}
				if diff := cmp.Diff(tt.wantFiles, readTree(t, co.Dir)); diff != "" {
					t.Errorf("%s cache: files mismatch (-want +got):\n%s", cname, diff)
				}
				wantDir := filepath.Join(c.Dir(), cacheKey(reposerver.NormalizeURL(f.url)), "trees", tt.wantSHA)
				if co.Dir != wantDir {
					t.Errorf("%s cache: Dir = %s, want %s", cname, co.Dir, wantDir)
				}
			}
		})
	}
}

func TestFetchSeesNewCommits(t *testing.T) {
	f := newFixture(t)
	c := newCache(t, Options{})
	before := mustFetch(t, c, f.url, "main", reposerver.Credentials{})
	third := f.srv.Delete(t, "app", []string{"README.md"}, "drop readme")
	after := mustFetch(t, c, f.url, "main", reposerver.Credentials{})
	if after.Revision != third {
		t.Fatalf("Revision after push = %s, want %s", after.Revision, third)
	}
	if diff := cmp.Diff(map[string]string{"app/deploy.yaml": "replicas: 2\n"}, readTree(t, after.Dir)); diff != "" {
		t.Errorf("new tree mismatch (-want +got):\n%s", diff)
	}
	// The earlier checkout is immutable and still whole.
	if diff := cmp.Diff(f.secondFiles, readTree(t, before.Dir)); diff != "" {
		t.Errorf("old tree changed (-want +got):\n%s", diff)
	}
	// A force push back to an older commit is followed.
	f.srv.Branch(t, "app", "main", f.first)
	rewound := mustFetch(t, c, f.url, "main", reposerver.Credentials{})
	if rewound.Revision != f.first {
		t.Fatalf("Revision after force push = %s, want %s", rewound.Revision, f.first)
	}
	f.srv.Branch(t, "app", "main", third)
	after = mustFetch(t, c, f.url, "main", reposerver.Credentials{})
	// Same URL spelled differently shares the cache.
	again := mustFetch(t, c, "HTTP"+strings.TrimPrefix(f.url, "http"), "main", reposerver.Credentials{})
	if again.Dir != after.Dir {
		t.Errorf("equivalent URL used another cache entry: %s vs %s", again.Dir, after.Dir)
	}
}

func TestFetchShallow(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name        string
		opts        Options
		revision    string
		wantShallow bool
	}{
		{"branch is fetched with depth 1", Options{}, "main", true},
		{"tag is fetched with depth 1", Options{}, f.annTag, true},
		{"DisableShallow fetches history", Options{DisableShallow: true}, "main", false},
		{"old commit needs full history", Options{}, f.first, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCache(t, tt.opts)
			mustFetch(t, c, f.url, tt.revision, reposerver.Credentials{})
			e := c.entry(cacheKey(reposerver.NormalizeURL(f.url)))
			shallow, err := e.repo.Storer.Shallow()
			if err != nil {
				t.Fatal(err)
			}
			if got := len(shallow) > 0; got != tt.wantShallow {
				t.Errorf("shallow = %v (%v), want %v", got, shallow, tt.wantShallow)
			}
		})
	}
}

func TestFetchRevisionNotFound(t *testing.T) {
	f := newFixture(t)
	c := newCache(t, Options{})
	for _, rev := range []string{
		"nope", "refs/heads/nope", "refs/tags/main",
		"0123456789abcdef0123456789abcdef01234567", "abcdef12", "release-1.0",
	} {
		t.Run(rev, func(t *testing.T) {
			_, err := c.Fetch(t.Context(), f.url, rev, reposerver.Credentials{})
			if !errors.Is(err, ErrRevisionNotFound) {
				t.Fatalf("Fetch(%q) error = %v, want ErrRevisionNotFound", rev, err)
			}
			if errors.Is(err, ErrRepoUnreachable) {
				t.Errorf("error also says unreachable: %v", err)
			}
		})
	}
}

func TestFetchRepoNotFound(t *testing.T) {
	srv := gitserver.New(t)
	c := newCache(t, Options{})
	_, err := c.Fetch(t.Context(), srv.RepoURL("missing"), "main", reposerver.Credentials{})
	if !errors.Is(err, ErrRepoNotFound) {
		t.Fatalf("error = %v, want ErrRepoNotFound", err)
	}
}

// TestFetchTrailingSlash: git, which Argo CD runs, fetches an http(s)
// URL with one trailing slash as the URL without it.
func TestFetchTrailingSlash(t *testing.T) {
	f := newFixture(t)
	c := newCache(t, Options{})
	co := mustFetch(t, c, f.url+"/", "main", reposerver.Credentials{})
	if co.Revision != f.second {
		t.Errorf("revision = %s, want %s", co.Revision, f.second)
	}
}

func TestFetchServerDown(t *testing.T) {
	f := newFixture(t)
	c := newCache(t, Options{})
	before := mustFetch(t, c, f.url, "main", reposerver.Credentials{})

	f.srv.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err := c.Fetch(ctx, f.url, "main", reposerver.Credentials{})
	if !errors.Is(err, ErrRepoUnreachable) {
		t.Fatalf("Fetch while down: error = %v, want ErrRepoUnreachable", err)
	}
	if strings.Contains(err.Error(), "%!") {
		t.Errorf("malformed error message: %v", err)
	}
	if diff := cmp.Diff(f.secondFiles, readTree(t, before.Dir)); diff != "" {
		t.Errorf("previous checkout damaged (-want +got):\n%s", diff)
	}
	// A pinned commit already in the cache needs no server.
	pinned, err := c.Fetch(ctx, f.url, before.Revision, reposerver.Credentials{})
	if err != nil || pinned.Dir != before.Dir {
		t.Errorf("Fetch of cached SHA while down = %+v, %v; want %s", pinned, err, before.Dir)
	}

	f.srv.Start(t)
	after := mustFetch(t, c, f.url, "main", reposerver.Credentials{})
	if after.Revision != before.Revision {
		t.Errorf("Revision after restart = %s, want %s", after.Revision, before.Revision)
	}
}

func TestFetchContextCanceled(t *testing.T) {
	f := newFixture(t)
	c := newCache(t, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := c.Fetch(ctx, f.url, "main", reposerver.Credentials{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestFetchBasicAuth(t *testing.T) {
	srv := gitserver.New(t, gitserver.WithBasicAuth("alice", "s3cret"))
	url := srv.CreateRepo(t, "private", map[string]string{"a.yaml": "a: 1\n"})
	tests := []struct {
		name    string
		creds   reposerver.Credentials
		wantErr error
	}{
		{"right password", reposerver.Credentials{Username: "alice", Password: "s3cret"}, nil},
		{"wrong password", reposerver.Credentials{Username: "alice", Password: "nope"}, ErrAuthFailed},
		{"no credentials", reposerver.Credentials{}, ErrAuthFailed},
		{"bearer token refused", reposerver.Credentials{BearerToken: "t0ken"}, ErrAuthFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCache(t, Options{})
			co, err := c.Fetch(t.Context(), url, "main", tt.creds)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "nope") {
					t.Errorf("error leaks the password: %v", err)
				}
				return
			}
			if diff := cmp.Diff(map[string]string{"a.yaml": "a: 1\n"}, readTree(t, co.Dir)); diff != "" {
				t.Errorf("files mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFetchConcurrent(t *testing.T) {
	f := newFixture(t)
	c := newCache(t, Options{})
	revs := []string{"main", f.first, "feature", f.annTag}
	want := map[string]string{"main": f.second, f.first: f.first, "feature": f.feature, f.annTag: f.second}
	const workers = 8
	var wg sync.WaitGroup
	results := make([]Checkout, workers)
	errs := make([]error, workers)
	for i := range workers {
		wg.Go(func() {
			results[i], errs[i] = c.Fetch(t.Context(), f.url, revs[i%len(revs)], reposerver.Credentials{})
		})
	}
	wg.Wait()
	for i := range workers {
		rev := revs[i%len(revs)]
		if errs[i] != nil {
			t.Errorf("worker %d (%s): %v", i, rev, errs[i])
			continue
		}
		if results[i].Revision != want[rev] {
			t.Errorf("worker %d (%s): Revision = %s, want %s", i, rev, results[i].Revision, want[rev])
		}
		if len(readTree(t, results[i].Dir)) == 0 {
			t.Errorf("worker %d (%s): empty tree", i, rev)
		}
	}
	// No temporary trees are left behind.
	leftovers, _ := filepath.Glob(filepath.Join(c.Dir(), "*", "trees", tmpTreePrefix+"*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary trees left: %v", leftovers)
	}
}

func TestFetchSymlinks(t *testing.T) {
	srv := gitserver.New(t)
	url := srv.CreateRepo(t, "links", map[string]string{"dir/b.yaml": "b: 1\n"})
	srv.Symlink(t, "links", "ok", "dir/b.yaml")
	srv.Symlink(t, "links", "dir/up", "..")
	srv.Symlink(t, "links", "escape", "../../../../etc/passwd")
	srv.Symlink(t, "links", "abs", "/etc/passwd")
	// Inside by its text (dir/up/.. is dir), outside on disk (up is the
	// root, so up/.. is the root's parent).
	srv.Symlink(t, "links", "dir/sneaky", "up/..")
	srv.Symlink(t, "links", "dangling", "dir/missing")
	c := newCache(t, Options{})
	co := mustFetch(t, c, url, "main", reposerver.Credentials{})
	want := map[string]string{
		"dir/b.yaml": "b: 1\n",
		"ok":         "-> dir/b.yaml",
		"dir/up":     "-> ..",
		"dangling":   "-> dir/missing",
	}
	if diff := cmp.Diff(want, readTree(t, co.Dir)); diff != "" {
		t.Errorf("files mismatch (-want +got):\n%s", diff)
	}
}

func TestFetchFileURL(t *testing.T) {
	srv := gitserver.New(t)
	srv.CreateRepo(t, "local", map[string]string{"k.yaml": "k: v\n"})
	head := srv.Commit(t, "local", map[string]string{"k.yaml": "k: w\n"}, "change")
	c := newCache(t, Options{})
	url := "file://" + filepath.ToSlash(srv.RepoDir("local"))
	for _, rev := range []string{"", "main", head, head[:10]} {
		co := mustFetch(t, c, url, rev, reposerver.Credentials{})
		if co.Revision != head {
			t.Errorf("Fetch(%q) Revision = %s, want %s", rev, co.Revision, head)
		}
		if diff := cmp.Diff(map[string]string{"k.yaml": "k: w\n"}, readTree(t, co.Dir)); diff != "" {
			t.Errorf("Fetch(%q) files mismatch (-want +got):\n%s", rev, diff)
		}
	}
	_, err := c.Fetch(t.Context(), "file://"+filepath.ToSlash(t.TempDir()), "main", reposerver.Credentials{})
	if !errors.Is(err, ErrRepoNotFound) {
		t.Errorf("Fetch of a directory that is no repository: error = %v, want ErrRepoNotFound", err)
	}
}

func TestFetchLimits(t *testing.T) {
	srv := gitserver.New(t)
	url := srv.CreateRepo(t, "big", map[string]string{"a": "0123456789", "b": "0123456789", "c/d": "x"})
	tests := []struct {
		name string
		opts Options
		want error
	}{
		{"within limits", Options{MaxFiles: 4, MaxTreeBytes: 21}, nil},
		{"too many files", Options{MaxFiles: 3}, ErrTreeTooLarge},
		{"too many bytes", Options{MaxTreeBytes: 20}, ErrTreeTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCache(t, tt.opts)
			_, err := c.Fetch(t.Context(), url, "main", reposerver.Credentials{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
			trees, _ := filepath.Glob(filepath.Join(c.Dir(), "*", "trees", "*"))
			if tt.want != nil && len(trees) > 0 {
				t.Errorf("trees left after a refused checkout: %v", trees)
			}
		})
	}
}

func TestFetchInvalidURL(t *testing.T) {
	c := newCache(t, Options{})
	for _, u := range []string{"", "not a url", "/tmp/plain/path"} {
		if _, err := c.Fetch(t.Context(), u, "main", reposerver.Credentials{}); err == nil {
			t.Errorf("Fetch(%q) succeeded, want an error", u)
		}
	}
}

// TestFetchListingMaxAge checks that a young listing answers without asking
// the remote, so a new commit shows once the listing is older than the
// maximum age, and at once for a Fetch that allows no age.
func TestFetchListingMaxAge(t *testing.T) {
	f := newFixture(t)
	clk := testingclock.NewFakePassiveClock(time.Now())
	c := newCache(t, Options{Clock: clk})
	first, err := c.Fetch(t.Context(), f.url, "main", reposerver.Credentials{}, ListingMaxAge(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	third := f.srv.Delete(t, "app", []string{"README.md"}, "drop readme")
	cached, err := c.Fetch(t.Context(), f.url, "main", reposerver.Credentials{}, ListingMaxAge(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if cached.Revision != first.Revision {
		t.Errorf("Revision with a young listing = %s, want the listed %s", cached.Revision, first.Revision)
	}
	// The server being down does not matter while the listing is young.
	f.srv.Stop()
	if _, err := c.Fetch(t.Context(), f.url, "main", reposerver.Credentials{}, ListingMaxAge(time.Hour)); err != nil {
		t.Errorf("Fetch with a young listing and the server down: %v", err)
	}
	f.srv.Start(t)
	if fresh := mustFetch(t, c, f.url, "main", reposerver.Credentials{}); fresh.Revision != third {
		t.Errorf("Revision without ListingMaxAge = %s, want the new %s", fresh.Revision, third)
	}
	// That listing is young for an hour, by the cache's clock.
	fourth := f.srv.Commit(t, "app", map[string]string{"README.md": "hello again\n"}, "readme back")
	clk.SetTime(clk.Now().Add(time.Hour - time.Second))
	young, err := c.Fetch(t.Context(), f.url, "main", reposerver.Credentials{}, ListingMaxAge(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if young.Revision != third {
		t.Errorf("Revision with a listing a second short of the maximum age = %s, want the listed %s", young.Revision, third)
	}
	clk.SetTime(clk.Now().Add(time.Second))
	aged, err := c.Fetch(t.Context(), f.url, "main", reposerver.Credentials{}, ListingMaxAge(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if aged.Revision != fourth {
		t.Errorf("Revision with a listing of the maximum age = %s, want the new %s", aged.Revision, fourth)
	}
}

// TestFetchSizeLimit: a repository larger than MaxFetchBytes is refused
// with a LimitError naming the size limit, leaves no more than the limit on
// disk, and the cache keeps serving other repositories.
func TestFetchSizeLimit(t *testing.T) {
	srv := gitserver.New(t)
	big := make([]byte, 3<<20)
	if _, err := rand.Read(big); err != nil { // incompressible
		t.Fatal(err)
	}
	bigURL := srv.CreateRepo(t, "big", map[string]string{"blob": string(big)})
	smallURL := srv.CreateRepo(t, "small", map[string]string{"a": "x"})
	c := newCache(t, Options{MaxFetchBytes: 1 << 20})
	_, err := c.Fetch(t.Context(), bigURL, "main", reposerver.Credentials{})
	var le *LimitError
	if !errors.As(err, &le) || *le != (LimitError{Limit: "size", Value: "1 MiB"}) {
		t.Fatalf("error = %v, want the size LimitError", err)
	}
	if got := dirSize(t, c.Dir()); got > 2<<20 {
		t.Errorf("%d bytes on disk after a refused fetch, want at most about the 1 MiB limit", got)
	}
	mustFetch(t, c, smallURL, "main", reposerver.Credentials{})
}

// TestFetchTimeLimit: a Git server that trickles bytes costs one fetch,
// stopped at FetchTimeout with a LimitError naming the time limit.
func TestFetchTimeLimit(t *testing.T) {
	trickle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		// A pkt-line that announces 64 KiB and delivers a byte at a time.
		if _, err := w.Write([]byte("fff0")); err != nil {
			return
		}
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := w.Write([]byte("a")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	defer trickle.Close()
	c := newCache(t, Options{AllowInsecure: true, FetchTimeout: time.Second})
	start := time.Now()
	_, err := c.Fetch(t.Context(), trickle.URL+"/slow.git", "main", reposerver.Credentials{})
	var le *LimitError
	if !errors.As(err, &le) || *le != (LimitError{Limit: "time", Value: "1s"}) {
		t.Fatalf("error = %v, want the time LimitError", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the fetch took %s, want it stopped at the 1s limit", took)
	}
}

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRemoveUnused: trees no Fetch returned within maxIdle are removed,
// the others kept, and a removed revision is checked out again on demand.
func TestRemoveUnused(t *testing.T) {
	f := newFixture(t)
	c := newCache(t, Options{})
	old := mustFetch(t, c, f.url, f.first, reposerver.Credentials{})
	recent := mustFetch(t, c, f.url, f.second, reposerver.Credentials{})
	long := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(old.Dir, long, long); err != nil {
		t.Fatal(err)
	}
	n, err := c.RemoveUnused(t.Context(), time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("RemoveUnused = %d, %v; want 1 tree removed", n, err)
	}
	if _, err := os.Stat(old.Dir); !os.IsNotExist(err) {
		t.Errorf("the idle tree %s is still there (stat: %v)", old.Dir, err)
	}
	if _, err := os.Stat(recent.Dir); err != nil {
		t.Errorf("the recent tree is gone: %v", err)
	}
	again := mustFetch(t, c, f.url, f.first, reposerver.Credentials{})
	if diff := cmp.Diff(f.firstFiles, readTree(t, again.Dir)); diff != "" {
		t.Errorf("tree fetched again after its removal (-want +got):\n%s", diff)
	}
}
