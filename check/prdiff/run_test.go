package prdiff

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/check"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// repoURL is the origin remote of the fixture repository, which its
// Applications name.
const repoURL = "https://git.example.com/platform/config.git"

// fixture makes a Git repository whose main branch holds testdata/repo/base
// in one commit (at a fixed time, so its hash is stable) and returns its
// directory and that commit. With head set, the work tree then holds
// testdata/repo/head, uncommitted.
func fixture(t *testing.T, head bool) (string, plumbing.Hash) {
	t.Helper()
	dir := t.TempDir()
	repo := testutil.InitRepo(t, dir)
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{repoURL}}); err != nil {
		t.Fatal(err)
	}
	copyTree(t, "testdata/repo/base", dir)
	h := testutil.CommitAll(t, repo, "base")
	if head {
		replaceTree(t, "testdata/repo/head", dir)
	}
	return dir, h
}

// replaceTree makes the work tree of dir hold src: every file but .git
// removed, src copied in.
func replaceTree(t *testing.T, src, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != ".git" {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	copyTree(t, src, dir)
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// golden compares got with testdata/golden/name, or rewrites it with
// -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

// TestRunWorkTree diffs the fixture's uncommitted work tree against the
// default base, the merge base with main, and holds every format to its
// golden file.
func TestRunWorkTree(t *testing.T) {
	dir, base := fixture(t, true)
	r, err := Run(t.Context(), Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r.Base.Commit != base.String() || r.Head.Name != WorkTree || r.Head.Commit != base.String() {
		t.Errorf("revisions: base %+v, head %+v; want base and HEAD %s, head the work tree", r.Base, r.Head, base)
	}
	for _, format := range Formats() {
		var b bytes.Buffer
		if err := Write(&b, format, r, WriteOptions{}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		golden(t, "report."+format, b.Bytes())
	}
}

// TestRunRevisions diffs two commits; the report is the work tree's but
// for the head's name and commit.
func TestRunRevisions(t *testing.T) {
	dir, _ := fixture(t, true)
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	head := testutil.CommitAll(t, repo, "head")
	// The work tree must not be read: make it differ from both commits.
	if err := os.WriteFile(filepath.Join(dir, "plain", "deployment.yaml"), []byte("kind: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), Options{Path: dir, Base: "HEAD~1", Head: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Head.Commit != head.String() || r.Base.Name != "HEAD~1" {
		t.Errorf("revisions: base %+v, head %+v", r.Base, r.Head)
	}
	wt, _ := fixture(t, true)
	want, err := Run(t.Context(), Options{Path: wt})
	if err != nil {
		t.Fatal(err)
	}
	r.Base, r.Head, want.Base, want.Head = Revision{}, Revision{}, Revision{}, Revision{}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("report of two commits (-work tree +commits):\n%s", diff)
	}
}

// TestRunSubdirectory diffs one directory of the repository; what is
// outside it is not compared, and a directory new at the head compares
// with nothing.
func TestRunSubdirectory(t *testing.T) {
	dir, _ := fixture(t, true)
	r, err := Run(t.Context(), Options{Path: filepath.Join(dir, "apps", "worker")})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Groups) != 1 || r.Groups[0].Name != "apps/worker" || r.Groups[0].Status != Added {
		t.Errorf("groups = %+v, want apps/worker added", r.Groups)
	}
}

// TestRunErrors: what cannot be diffed is an error naming why.
func TestRunErrors(t *testing.T) {
	dir, _ := fixture(t, false)
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"unknown base", Options{Path: dir, Base: "nope"}, `resolve revision "nope"`},
		{"unknown head", Options{Path: dir, Head: "v9"}, `resolve revision "v9"`},
		{"not a repository", Options{Path: t.TempDir()}, "open the Git repository"},
		{"bad policy", Options{Path: dir, Options: check.Options{PolicyDirs: []string{"testdata/no-such-dir"}}}, "no-such-dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(t.Context(), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
