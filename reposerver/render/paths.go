package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideRoot is returned (wrapped) when a path, after symlink
// resolution, leaves the repository root.
var ErrOutsideRoot = errors.New("outside the repository root")

// repo confines file access to one repository checkout. Every path handed
// to it is resolved (symlinks included) and refused when it leaves root.
type repo struct {
	// given is the root as the caller spelled it, made absolute and clean.
	given string
	// root is given with every symlink resolved.
	root string
}

// openRepo checks that root is an existing directory and returns a repo
// confined to it.
func openRepo(root string) (repo, error) {
	if root == "" {
		return repo{}, errors.New("open repository: root is empty")
	}
	given, err := filepath.Abs(root)
	if err != nil {
		return repo{}, fmt.Errorf("open repository %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(given)
	if err != nil {
		return repo{}, fmt.Errorf("open repository %s: %w", root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return repo{}, fmt.Errorf("open repository %s: %w", root, err)
	}
	if !fi.IsDir() {
		return repo{}, fmt.Errorf("open repository %s: not a directory", root)
	}
	return repo{given: given, root: real}, nil
}

// within reports whether the absolute, symlink-free path abs is root or
// inside it.
func (r repo) within(abs string) bool {
	return abs == r.root || strings.HasPrefix(abs, r.root+string(filepath.Separator))
}

// rel returns abs relative to the root, slash-separated ("." for the root
// itself). abs must be inside the root.
func (r repo) rel(abs string) string {
	rel, err := filepath.Rel(r.root, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// clean returns p as a clean slash-separated path relative to the root,
// without touching the file system. p is relative to the root, or absolute
// and inside the root (as given or as resolved). A path that climbs out of
// the root is refused with ErrOutsideRoot. Errors do not name the path.
func (r repo) clean(p string) (string, error) {
	if filepath.IsAbs(p) {
		p = filepath.Clean(p)
		rel := ""
		for _, base := range []string{r.root, r.given} {
			if p == base || strings.HasPrefix(p, base+string(filepath.Separator)) {
				rel, _ = filepath.Rel(base, p)
				break
			}
		}
		if rel == "" {
			return "", ErrOutsideRoot
		}
		p = rel
	}
	c := filepath.Clean(filepath.FromSlash(p))
	if c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator)) {
		return "", ErrOutsideRoot
	}
	return filepath.ToSlash(c), nil
}

// resolve returns the real (symlink-free) absolute path of p and its clean
// repo-relative spelling. The rel path keeps the name the caller used, which
// is what a reviewer sees in the repository. A missing file is an error that
// wraps fs.ErrNotExist. Errors do not name the path: callers do.
func (r repo) resolve(p string) (real, rel string, err error) {
	rel, err = r.clean(p)
	if err != nil {
		return "", "", err
	}
	real, err = r.resolveRel(rel)
	return real, rel, err
}

// resolveRel is resolve for a path already cleaned by clean.
func (r repo) resolveRel(rel string) (string, error) {
	real, err := filepath.EvalSymlinks(filepath.Join(r.root, filepath.FromSlash(rel)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fs.ErrNotExist
		}
		return "", err
	}
	if !r.within(real) {
		return "", fmt.Errorf("symlink target is %w", ErrOutsideRoot)
	}
	return real, nil
}

// ReadFile reads the regular file at the slash-separated path rel of the
// repository checkout at root ("/x" is "x"). Paths and symlinks that leave
// root are refused with ErrOutsideRoot, files larger than max bytes too; a
// missing file is an error that wraps fs.ErrNotExist. Errors do not name
// the file: callers do.
func ReadFile(root, rel string, max int64) ([]byte, error) {
	r, err := openRepo(root)
	if err != nil {
		return nil, err
	}
	real, _, err := r.resolve(strings.TrimPrefix(rel, "/"))
	if err != nil {
		return nil, err
	}
	return readFile(real, max)
}

// readFile reads the regular file at the real path abs, refusing files
// larger than max bytes. Errors do not name the file: callers do.
func readFile(abs string, max int64) ([]byte, error) {
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%w: %d bytes, limit is %d", ErrFileTooLarge, fi.Size(), max)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Sized by the stat, so a file is read in one call (plus the one
	// that sees its end), unless it grew since.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: more than %d bytes, limit is %d", ErrFileTooLarge, max, max)
	}
	return data, nil
}

// joinRel joins slash-separated repo-relative path elements and cleans the
// result ("." for the root).
func joinRel(elem ...string) string {
	return filepath.ToSlash(filepath.Clean(filepath.Join(elem...)))
}
