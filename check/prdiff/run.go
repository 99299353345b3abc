package prdiff

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tollgate-dev/tollgate/check"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/source"
)

// Options are the settings of a diff: the check's (its Paths, RepoRoot and
// Revision are set for each side) and the revisions.
type Options struct {
	check.Options
	// Path is the file or directory compared, in the work tree; "" is
	// ".". It must be inside a Git repository.
	Path string
	// Base is the base revision; "" is the merge base of HEAD with
	// origin/HEAD, else with main.
	Base string
	// Head is the head revision; "" is the work tree, uncommitted changes
	// included.
	Head string
}

// WorkTree names the head when it is the work tree.
const WorkTree = "work tree"

// Run checks o.Path at the base and the head and compares them. Each
// revision is read from Git objects into a temporary directory (removed
// when Run returns); the work tree is read where it is. A path that does
// not exist at a revision holds nothing there. Errors are the check's (an
// *check.InputError) or about the repository and revisions.
func Run(ctx context.Context, o Options) (Report, error) {
	abs, err := filepath.Abs(cmp.Or(o.Path, "."))
	if err != nil {
		return Report{}, err
	}
	repo, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return Report{}, fmt.Errorf("open the Git repository of %s: %w", cmp.Or(o.Path, "."), err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return Report{}, fmt.Errorf("open the work tree: %w", err)
	}
	root := wt.Filesystem.Root()
	rel, err := relativePath(root, abs)
	if err != nil {
		return Report{}, err
	}
	if o.RepoURL == "" {
		o.RepoURL = originURL(repo)
	}
	base, baseHash, err := resolveBase(repo, o.Base)
	if err != nil {
		return Report{}, err
	}
	tmp, err := os.MkdirTemp("", "tollgate-diff-")
	if err != nil {
		return Report{}, err
	}
	defer os.RemoveAll(tmp)
	baseDir, err := writeRevision(ctx, repo, baseHash, filepath.Join(tmp, "base"))
	if err != nil {
		return Report{}, err
	}
	head, headDir := Revision{Name: WorkTree}, root
	if h, err := repo.Head(); err == nil {
		head.Commit = h.Hash().String()
	}
	if o.Head != "" {
		h, err := resolve(repo, o.Head)
		if err != nil {
			return Report{}, err
		}
		head = Revision{Name: o.Head, Commit: h.String()}
		if headDir, err = writeRevision(ctx, repo, h, filepath.Join(tmp, "head")); err != nil {
			return Report{}, err
		}
	}
	// What the change does not touch renders once: the head reuses the
	// base's renders of those Applications.
	headHash := plumbing.ZeroHash
	if o.Head != "" {
		headHash = plumbing.NewHash(head.Commit)
	}
	changed, err := changedFiles(repo, baseHash, headHash, root)
	if err != nil {
		return Report{}, fmt.Errorf("compare %s with %s: %w", base.Name, head.Name, err)
	}
	memo := &check.RenderMemo{}
	o.Renders = memo
	before, err := take(ctx, o.Options, baseDir, rel, base.Commit)
	if err != nil {
		return Report{}, fmt.Errorf("base %s: %w", base.Name, err)
	}
	memo.Reuse = reuser{root: headDir, repoURL: reposerver.NormalizeURL(o.RepoURL), changed: changed}.reuse
	revision := head.Commit
	if o.Head == "" {
		revision = "" // the work tree's HEAD, as tollgate test reads it
	}
	after, err := take(ctx, o.Options, headDir, rel, revision)
	if err != nil {
		return Report{}, err
	}
	r := Compare(before, after)
	r.Base, r.Head = base, head
	r.ReusedRenders = memo.Reused()
	return r, nil
}

// take checks rel inside the checkout dir; nothing when rel does not exist
// there.
func take(ctx context.Context, o check.Options, dir, rel, revision string) (check.Snapshot, error) {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return check.Snapshot{}, nil
	}
	o.RepoRoot, o.Paths, o.Revision = dir, []string{p}, revision
	return check.Take(ctx, o)
}

// relativePath returns abs relative to the work tree root, slash-separated.
func relativePath(root, abs string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	realAbs, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", abs, err)
	}
	rel, err := filepath.Rel(realRoot, realAbs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside the work tree %s", abs, root)
	}
	return filepath.ToSlash(rel), nil
}

// originURL is the first URL of the origin remote, "" without one.
func originURL(repo *git.Repository) string {
	r, err := repo.Remote("origin")
	if err != nil || len(r.Config().URLs) == 0 {
		return ""
	}
	return r.Config().URLs[0]
}

// resolveBase resolves the base revision: given, or the merge base of
// HEAD with origin/HEAD, else with main.
func resolveBase(repo *git.Repository, given string) (Revision, plumbing.Hash, error) {
	if given != "" {
		h, err := resolve(repo, given)
		return Revision{Name: given, Commit: h.String()}, h, err
	}
	head, err := repo.Head()
	if err != nil {
		return Revision{}, plumbing.ZeroHash, fmt.Errorf("read HEAD (set --base): %w", err)
	}
	headCommit, err := repo.CommitObject(head.Hash())
	if err != nil {
		return Revision{}, plumbing.ZeroHash, fmt.Errorf("read HEAD (set --base): %w", err)
	}
	for _, name := range []string{"origin/HEAD", "main"} {
		h, err := repo.ResolveRevision(plumbing.Revision(name))
		if err != nil {
			continue
		}
		other, err := repo.CommitObject(*h)
		if err != nil {
			continue
		}
		bases, err := headCommit.MergeBase(other)
		if err != nil || len(bases) == 0 {
			return Revision{}, plumbing.ZeroHash, fmt.Errorf("HEAD and %s have no merge base; set --base", name)
		}
		return Revision{Name: "merge base with " + name, Commit: bases[0].Hash.String()}, bases[0].Hash, nil
	}
	return Revision{}, plumbing.ZeroHash, errors.New("no --base given, and neither origin/HEAD nor main exists to take the merge base with; set --base")
}

// resolve resolves a revision (branch, tag, commit, HEAD~1, ...) to a
// commit.
func resolve(repo *git.Repository, rev string) (plumbing.Hash, error) {
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("resolve revision %q: %w", rev, err)
	}
	return *h, nil
}

// writeRevision writes commit h into dir, which it creates.
func writeRevision(ctx context.Context, repo *git.Repository, h plumbing.Hash, dir string) (string, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	if err := source.WriteCommit(ctx, repo, h, dir, source.DefaultOptions()); err != nil {
		return "", err
	}
	return dir, nil
}
