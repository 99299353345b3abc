package render

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// errReadOnly is returned by every write to the confined file system.
var errReadOnly = errors.New("the repository is read-only while rendering")

// confinedFS is the file system krusty sees: the disk, read-only, limited to
// the repository root after symlink resolution, with files of the overlay
// served from memory instead of the disk (the edited kustomization). Every
// kustomization file krusty reads is checked for remote references before
// krusty can act on them; the first one found is kept in blocked, because
// krusty reports a failed read of a kustomization file only as "missing".
// Refused paths outside the root are kept in outside, to report them with
// their type when the build fails.
type confinedFS struct {
	repo    repo
	inner   filesys.FileSystem
	overlay map[string][]byte
	max     int64

	mu      sync.Mutex
	blocked error
	outside error
}

var _ filesys.FileSystem = (*confinedFS)(nil)

func newConfinedFS(r repo, overlay map[string][]byte, max int64) *confinedFS {
	return &confinedFS{repo: r, inner: filesys.MakeFsOnDisk(), overlay: overlay, max: max}
}

// block records the first refused remote reference.
func (c *confinedFS) block(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.blocked == nil {
		c.blocked = err
	}
}

// errors returns the first refused remote reference and the first refused
// path outside the root.
func (c *confinedFS) errors() (blocked, outside error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.blocked, c.outside
}

// name is how a path appears in error messages: relative to the root (even
// when outside it), so that messages do not depend on where the repository
// is checked out.
func (c *confinedFS) name(abs string) string {
	base := c.repo.root
	if !c.repo.within(abs) && strings.HasPrefix(abs, c.repo.given+string(filepath.Separator)) {
		base = c.repo.given
	}
	if rel, err := filepath.Rel(base, abs); err == nil {
		return filepath.ToSlash(rel)
	}
	return abs
}

// refuse resolves p for an operation that reports errors, remembering a
// path outside the root.
func (c *confinedFS) refuse(p string) (string, error) {
	real, err := c.resolve(p)
	if errors.Is(err, ErrOutsideRoot) {
		c.mu.Lock()
		if c.outside == nil {
			c.outside = err
		}
		c.mu.Unlock()
	}
	return real, err
}

// resolve returns the real path of p, which must be inside the root. A
// missing path is resolved as far as it exists, so that a missing file in
// the repository is reported as missing while a path through a symlink out
// of the repository is refused.
func (c *confinedFS) resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		// Resolve the longest existing parent, then append the rest.
		dir, rest := filepath.Dir(abs), filepath.Base(abs)
		for {
			r, derr := filepath.EvalSymlinks(dir)
			if derr == nil {
				real, err = filepath.Join(r, rest), nil
				break
			}
			if !errors.Is(derr, fs.ErrNotExist) || filepath.Dir(dir) == dir {
				return "", derr
			}
			dir, rest = filepath.Dir(dir), filepath.Join(filepath.Base(dir), rest)
		}
	}
	if err != nil {
		return "", err
	}
	if _, ok := c.overlay[real]; ok {
		return real, nil
	}
	if !c.repo.within(real) {
		return "", fmt.Errorf("%s: %w", c.name(abs), ErrOutsideRoot)
	}
	return real, nil
}

// Create refuses: rendering never writes.
func (c *confinedFS) Create(string) (filesys.File, error) { return nil, errReadOnly }

// Mkdir refuses: rendering never writes.
func (c *confinedFS) Mkdir(string) error { return errReadOnly }

// MkdirAll refuses: rendering never writes.
func (c *confinedFS) MkdirAll(string) error { return errReadOnly }

// RemoveAll refuses: rendering never writes.
func (c *confinedFS) RemoveAll(string) error { return errReadOnly }

// WriteFile refuses: rendering never writes.
func (c *confinedFS) WriteFile(string, []byte) error { return errReadOnly }

// Open opens a file for reading.
func (c *confinedFS) Open(path string) (filesys.File, error) {
	real, err := c.refuse(path)
	if err != nil {
		return nil, err
	}
	if data, ok := c.overlay[real]; ok {
		return &memFile{Reader: bytes.NewReader(data), name: filepath.Base(real), size: int64(len(data))}, nil
	}
	return c.inner.Open(real)
}

// IsDir reports whether path is a directory inside the root.
func (c *confinedFS) IsDir(path string) bool {
	real, err := c.resolve(path)
	return err == nil && c.inner.IsDir(real)
}

// ReadDir lists a directory inside the root.
func (c *confinedFS) ReadDir(path string) ([]string, error) {
	real, err := c.refuse(path)
	if err != nil {
		return nil, err
	}
	return c.inner.ReadDir(real)
}

// CleanedAbs splits path into a confirmed directory and a file name, like
// the disk implementation, but refuses paths outside the root and returns
// errors where the disk implementation would exit the process.
func (c *confinedFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	real, err := c.refuse(path)
	if err != nil {
		return "", "", err
	}
	if _, ok := c.overlay[real]; ok {
		return filesys.ConfirmedDir(filepath.Dir(real)), filepath.Base(real), nil
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", c.name(real), err)
	}
	if fi.IsDir() {
		return filesys.ConfirmedDir(real), "", nil
	}
	return filesys.ConfirmedDir(filepath.Dir(real)), filepath.Base(real), nil
}

// Exists reports whether path exists inside the root.
func (c *confinedFS) Exists(path string) bool {
	real, err := c.resolve(path)
	if err != nil {
		return false
	}
	if _, ok := c.overlay[real]; ok {
		return true
	}
	return c.inner.Exists(real)
}

// Glob returns the matches of pattern that are inside the root.
func (c *confinedFS) Glob(pattern string) ([]string, error) {
	matches, err := c.inner.Glob(pattern)
	if err != nil {
		return nil, err
	}
	out := matches[:0]
	for _, m := range matches {
		if _, err := c.resolve(m); err == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// ReadFile reads a file inside the root, bounded by the file size limit.
// Kustomization files are checked for remote references first.
func (c *confinedFS) ReadFile(path string) ([]byte, error) {
	real, err := c.refuse(path)
	if err != nil {
		return nil, err
	}
	data, ok := c.overlay[real]
	if !ok {
		data, err = readFile(real, c.max)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", c.name(real), err)
		}
	}
	if isKustomizationFile(real) {
		if err := checkRemote(c, real, data); err != nil {
			c.block(err)
			return nil, err
		}
	}
	return data, nil
}

// Walk walks a directory tree inside the root. Like filepath.Walk it does
// not follow symlinks below the starting directory.
func (c *confinedFS) Walk(path string, walkFn filepath.WalkFunc) error {
	real, err := c.refuse(path)
	if err != nil {
		return err
	}
	return c.inner.Walk(real, walkFn)
}

// memFile is an overlay file opened for reading.
type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Write([]byte) (int, error) { return 0, errReadOnly }
func (f *memFile) Close() error              { return nil }
func (f *memFile) Stat() (os.FileInfo, error) {
	return memFileInfo{name: f.name, size: f.size}, nil
}

type memFileInfo struct {
	name string
	size int64
}

func (i memFileInfo) Name() string       { return i.name }
func (i memFileInfo) Size() int64        { return i.size }
func (i memFileInfo) Mode() fs.FileMode  { return 0o444 }
func (i memFileInfo) ModTime() time.Time { return time.Time{} }
func (i memFileInfo) IsDir() bool        { return false }
func (i memFileInfo) Sys() any           { return nil }
