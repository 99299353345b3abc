package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-logr/logr"
)

// tmpTreePrefix names trees being written; they are never returned.
const tmpTreePrefix = ".tmp-"

// maxLinkTarget bounds the size of a symbolic link's target.
const maxLinkTarget = 4096

// existingTree returns the tree directory of sha if it was fully written.
func existingTree(e *repoEntry, sha string) (string, bool) {
	dir := filepath.Join(e.treesDir(), sha)
	fi, err := os.Stat(dir)
	return dir, err == nil && fi.IsDir()
}

// materialize writes the files of commit h into <repo>/trees/<sha> unless
// they are there already, and returns the directory. The caller holds the
// repository lock.
func (c *Cache) materialize(ctx context.Context, repo *git.Repository, e *repoEntry, h plumbing.Hash) (string, error) {
	if dir, ok := existingTree(e, h.String()); ok {
		return dir, nil
	}
	commit, err := repo.CommitObject(h)
	if err != nil {
		return "", fmt.Errorf("read commit %s: %w", h, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return "", fmt.Errorf("read tree of commit %s: %w", h, err)
	}
	tmp, err := os.MkdirTemp(e.treesDir(), tmpTreePrefix+h.String()[:12]+"-")
	if err != nil {
		return "", fmt.Errorf("create tree directory: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := writeTree(ctx, repo.Storer, tree, tmp, c.opts); err != nil {
		return "", fmt.Errorf("write tree of commit %s: %w", h, err)
	}
	final := filepath.Join(e.treesDir(), h.String())
	if err := os.Rename(tmp, final); err != nil {
		if dir, ok := existingTree(e, h.String()); ok {
			return dir, nil
		}
		return "", fmt.Errorf("move tree of commit %s into place: %w", h, err)
	}
	done = true
	return final, nil
}

// WriteCommit writes the files of commit h of repo into dir, an empty
// directory, as the repo-server writes a checkout: within opts'
// MaxTreeBytes and MaxFiles (zero values take the defaults), entry names
// checked, symbolic links that lead outside dir left out, submodules
// skipped, files read-only. tollgate diff reads a revision this way
// without touching the work tree.
func WriteCommit(ctx context.Context, repo *git.Repository, h plumbing.Hash, dir string, opts Options) error {
	commit, err := repo.CommitObject(h)
	if err != nil {
		return fmt.Errorf("read commit %s: %w", h, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return fmt.Errorf("read tree of commit %s: %w", h, err)
	}
	if err := writeTree(ctx, repo.Storer, tree, dir, opts.withDefaults()); err != nil {
		return fmt.Errorf("write tree of commit %s: %w", h, err)
	}
	return nil
}

// writeTree writes tree into dir within opts' limits.
func writeTree(ctx context.Context, st storer.EncodedObjectStorer, tree *object.Tree, dir string, opts Options) error {
	w := &treeWriter{
		root: dir, storer: st, log: logr.FromContextOrDiscard(ctx),
		bytesLeft: opts.MaxTreeBytes, filesLeft: opts.MaxFiles,
		maxBytes: opts.MaxTreeBytes, maxFiles: opts.MaxFiles,
	}
	if err := w.writeTree(ctx, tree, ""); err != nil {
		return err
	}
	if err := w.writeLinks(); err != nil {
		return err
	}
	return os.Chmod(dir, 0o755)
}

// treeWriter writes a Git tree to disk within limits. Symbolic links are
// collected and written last, so no file is ever written through one.
type treeWriter struct {
	root      string
	storer    storer.EncodedObjectStorer
	log       logr.Logger
	bytesLeft int64
	filesLeft int
	maxBytes  int64
	maxFiles  int
	links     []link
}

type link struct{ path, target string }

// writeTree writes tree at the slash-separated directory dir (relative to
// the root, "" for the root itself).
func (w *treeWriter) writeTree(ctx context.Context, tree *object.Tree, dir string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, entry := range tree.Entries {
		if err := checkName(entry.Name); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalidTree, path.Join(dir, entry.Name), err)
		}
		rel := path.Join(dir, entry.Name)
		if err := w.count(rel); err != nil {
			return err
		}
		switch entry.Mode {
		case filemode.Dir:
			sub, err := object.GetTree(w.storer, entry.Hash)
			if err != nil {
				return fmt.Errorf("read tree %s: %w", rel, err)
			}
			if err := os.Mkdir(w.abs(rel), 0o755); err != nil {
				return fmt.Errorf("%w: create directory %s: %w", ErrInvalidTree, rel, err)
			}
			if err := w.writeTree(ctx, sub, rel); err != nil {
				return err
			}
		case filemode.Regular, filemode.Deprecated, filemode.Executable:
			if err := w.writeFile(rel, entry); err != nil {
				return err
			}
		case filemode.Symlink:
			target, err := w.readLink(rel, entry.Hash)
			if err != nil {
				return err
			}
			if !linkInside(rel, target) {
				w.log.V(1).Info("skipped symbolic link pointing outside the tree", "path", rel)
				continue
			}
			w.links = append(w.links, link{path: rel, target: target})
		case filemode.Submodule:
			w.log.V(1).Info("skipped submodule", "path", rel)
		default:
			return fmt.Errorf("%w: %s has unknown mode %o", ErrInvalidTree, rel, uint32(entry.Mode))
		}
	}
	return nil
}

func (w *treeWriter) abs(rel string) string {
	return filepath.Join(w.root, filepath.FromSlash(rel))
}

func (w *treeWriter) count(rel string) error {
	if w.filesLeft <= 0 {
		return fmt.Errorf("%w: more than %d files (at %s)", ErrTreeTooLarge, w.maxFiles, rel)
	}
	w.filesLeft--
	return nil
}

func (w *treeWriter) writeFile(rel string, entry object.TreeEntry) error {
	blob, err := object.GetBlob(w.storer, entry.Hash)
	if err != nil {
		return fmt.Errorf("read file %s: %w", rel, err)
	}
	if blob.Size > w.bytesLeft {
		return fmt.Errorf("%w: more than %d bytes (at %s)", ErrTreeTooLarge, w.maxBytes, rel)
	}
	perm := os.FileMode(0o444)
	if entry.Mode == filemode.Executable {
		perm = 0o555
	}
	// O_EXCL: a tree that names a file twice is refused, not overwritten.
	f, err := os.OpenFile(w.abs(rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("%w: create file %s: %w", ErrInvalidTree, rel, err)
	}
	r, err := blob.Reader()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("read file %s: %w", rel, err)
	}
	n, err := io.Copy(f, io.LimitReader(r, w.bytesLeft+1))
	_ = r.Close()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write file %s: %w", rel, err)
	}
	if n > w.bytesLeft {
		return fmt.Errorf("%w: more than %d bytes (at %s)", ErrTreeTooLarge, w.maxBytes, rel)
	}
	w.bytesLeft -= n
	return nil
}

func (w *treeWriter) readLink(rel string, h plumbing.Hash) (string, error) {
	blob, err := object.GetBlob(w.storer, h)
	if err != nil {
		return "", fmt.Errorf("read link %s: %w", rel, err)
	}
	if blob.Size > maxLinkTarget {
		return "", fmt.Errorf("%w: link %s has a %d-byte target", ErrInvalidTree, rel, blob.Size)
	}
	r, err := blob.Reader()
	if err != nil {
		return "", fmt.Errorf("read link %s: %w", rel, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxLinkTarget))
	if err != nil {
		return "", fmt.Errorf("read link %s: %w", rel, err)
	}
	return string(b), nil
}

// writeLinks creates the collected links, then removes any that resolve
// outside the root on disk: a chain of links that are each inside the tree
// by their text can still lead out of it.
func (w *treeWriter) writeLinks() error {
	for _, l := range w.links {
		if err := os.Symlink(filepath.FromSlash(l.target), w.abs(l.path)); err != nil {
			return fmt.Errorf("%w: create link %s: %w", ErrInvalidTree, l.path, err)
		}
	}
	root, err := filepath.EvalSymlinks(w.root)
	if err != nil {
		return fmt.Errorf("resolve tree directory: %w", err)
	}
	for _, l := range w.links {
		p := w.abs(l.path)
		resolved, err := filepath.EvalSymlinks(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // dangling inside the tree: harmless
		case err == nil && within(root, resolved):
			continue
		}
		w.log.V(1).Info("removed symbolic link resolving outside the tree", "path", l.path)
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("remove link %s: %w", l.path, err)
		}
	}
	return nil
}

// checkName refuses tree entry names that are not a single safe path
// element.
func checkName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("name %q is not a file name", name)
	case strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("name %q contains a path separator or NUL", name)
	case strings.EqualFold(name, ".git"):
		return errors.New("a .git entry is not allowed in a tree")
	}
	return nil
}

// linkInside reports whether a link at rel with target stays inside the
// tree by its text: relative, and not climbing above the root.
func linkInside(rel, target string) bool {
	if target == "" || strings.ContainsRune(target, 0) || path.IsAbs(target) ||
		strings.HasPrefix(target, "\\") || (len(target) > 1 && target[1] == ':') {
		return false
	}
	joined := path.Join(path.Dir(rel), target)
	return joined != ".." && !strings.HasPrefix(joined, "../")
}

// within reports whether p is root or below it; both are clean absolute
// paths.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
