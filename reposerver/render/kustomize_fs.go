package render

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// errReadOnly is returned by every write to the confined file system.
var errReadOnly = errors.New("the repository is read-only while rendering")

// confinedFS is the file system krusty sees: the disk, read-only, limited to
// the repository root after symlink resolution, with files of the overlay
// served from memory instead of the disk (the edited kustomization). The
// checkouts of the source's remote bases (Options.RemoteBases) are roots
// of their own: a path spelled inside one must stay inside it once its
// symlinks are resolved. Every kustomization file krusty reads is checked
// for remote references before krusty can act on them, and a remote base
// the repo-server fetched is rewritten to the relative path of its
// checkout; the first refusal is kept in blocked, because krusty reports a
// failed read of a kustomization file only as "missing". Refused paths
// outside the roots are kept in outside, to report them with their type
// when the build fails.
type confinedFS struct {
	repo repo
	// roots are the repository (roots[0]) and the distinct checkouts of
	// the remote bases.
	roots []fsRoot
	// remote maps a remote base's entry to its directory: a path in its
	// checkout, symlinks not yet resolved.
	remote map[string]string
	inner  filesys.FileSystem
	// overlay holds files served from memory: the edited kustomization,
	// and the inflated charts of helmCharts, added as their
	// kustomizations are read (krusty builds in one goroutine).
	overlay map[string][]byte
	max     int64
	// helm inflates helmCharts; nil without --enable-helm.
	helm *kustomizeHelm
	// files are the downloaded remote files of resources by URL
	// (Options.RemoteFiles); served maps the overlay file each entry was
	// rewritten to (real path) to that entry.
	files  map[string][]byte
	served map[string]remoteFileEntry

	mu      sync.Mutex
	blocked error
	outside error
	// rewrites maps the relative paths remote bases were rewritten to
	// back to their entries, for messages.
	rewrites map[string]string
}

// fsRoot is one root of a confinedFS.
type fsRoot struct {
	repo
	// base is the remote base a checkout was fetched for (the first
	// entry of that checkout), nil for the repository.
	base *RemoteBase
}

var _ filesys.FileSystem = (*confinedFS)(nil)

// newConfinedFS returns the file system of a kustomize build in r with the
// checkouts of bases.
func newConfinedFS(r repo, overlay map[string][]byte, max int64, bases map[string]RemoteBase) (*confinedFS, error) {
	c := &confinedFS{repo: r, roots: []fsRoot{{repo: r}}, remote: map[string]string{}, inner: filesys.MakeFsOnDisk(), overlay: overlay, max: max}
	for _, entry := range slices.Sorted(maps.Keys(bases)) {
		b := bases[entry]
		cr, err := openRepo(b.Root)
		if err != nil {
			return nil, fmt.Errorf("remote base %q: %w", entry, err)
		}
		i := slices.IndexFunc(c.roots, func(fr fsRoot) bool { return fr.root == cr.root })
		if i < 0 {
			c.roots = append(c.roots, fsRoot{repo: cr, base: &b})
			i = len(c.roots) - 1
		}
		rel, err := cr.clean(b.Path)
		if err != nil {
			return nil, fmt.Errorf("remote base %q: %w", entry, err)
		}
		c.remote[entry] = filepath.Join(c.roots[i].root, filepath.FromSlash(rel))
	}
	return c, nil
}

// remoteFileEntry is an entry of a kustomization's resources that names
// a remote file.
type remoteFileEntry struct {
	kustPath, url string
	line          int
}

// addRemoteFile puts data, the remote file url that the kustomization at
// kustPath (in dir) names at line, in the overlay, and returns its path
// relative to dir: in a directory of its own, under the URL's file name,
// as kustomize would name it.
func (c *confinedFS) addRemoteFile(dir, kustPath string, line int, url string, data []byte) string {
	name := path.Base(strings.SplitN(strings.SplitN(url, "?", 2)[0], "#", 2)[0])
	rel := fmt.Sprintf(".remote-%d/%s", len(c.served), name)
	real := filepath.Join(dir, filepath.FromSlash(rel))
	c.overlay[real] = data
	if c.served == nil {
		c.served = map[string]remoteFileEntry{}
	}
	c.served[real] = remoteFileEntry{kustPath: kustPath, url: url, line: line}
	return rel
}

// remoteFileOrigin returns, for the origin of a resource of a build in
// dir, the remote file entry it was read from, if it was.
func (c *confinedFS) remoteFileOrigin(dir string, origin *resource.Origin) (remoteFileEntry, bool) {
	if len(c.served) == 0 || origin == nil || origin.Path == "" || origin.Repo != "" {
		return remoteFileEntry{}, false
	}
	e, ok := c.served[filepath.Join(dir, filepath.FromSlash(origin.Path))]
	return e, ok
}

// rootOf returns the index of the root the absolute, clean path abs is
// spelled in (as given or resolved), the longest one when several are;
// -1 when none.
func (c *confinedFS) rootOf(abs string) int {
	best, bestLen := -1, -1
	for i, r := range c.roots {
		for _, base := range []string{r.root, r.given} {
			if (abs == base || strings.HasPrefix(abs, base+string(filepath.Separator))) && len(base) > bestLen {
				best, bestLen = i, len(base)
			}
		}
	}
	return best
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
// is checked out; a path in a remote base's checkout as
// "<repository>//<path>".
func (c *confinedFS) name(abs string) string {
	if i := c.rootOf(abs); i > 0 {
		r := c.roots[i]
		base := r.root
		if !r.within(abs) {
			base = r.given
		}
		rel, _ := filepath.Rel(base, abs)
		return r.base.RepoURL + "//" + filepath.ToSlash(rel)
	}
	base := c.repo.root
	if !c.repo.within(abs) && strings.HasPrefix(abs, c.repo.given+string(filepath.Separator)) {
		base = c.repo.given
	}
	if rel, err := filepath.Rel(base, abs); err == nil {
		return filepath.ToSlash(rel)
	}
	return abs
}

// remoteOrigin returns, for the origin of a resource of a build in dir
// that came from a remote base's checkout, the origin kustomize gives what
// it cloned: the repository, the ref, and paths inside the repository;
// nil for any other origin.
func (c *confinedFS) remoteOrigin(dir string, origin *resource.Origin) *resource.Origin {
	if origin == nil || origin.Repo != "" {
		return nil
	}
	out, found := *origin, false
	for _, p := range []*string{&out.Path, &out.ConfiguredIn} {
		if *p == "" {
			continue
		}
		abs := filepath.Join(dir, filepath.FromSlash(*p))
		i := c.rootOf(abs)
		if i <= 0 {
			continue
		}
		r := c.roots[i]
		base := r.root
		if !r.within(abs) {
			base = r.given
		}
		rel, err := filepath.Rel(base, abs)
		if err != nil {
			continue
		}
		*p, out.Repo, out.Ref, found = filepath.ToSlash(rel), r.base.RepoURL, r.base.Ref, true
	}
	if !found {
		return nil
	}
	return &out
}

// nameBases names the checkouts of remote bases in a kustomize message,
// which names absolute paths, by their repositories
// ("<repository>//<path>").
func (c *confinedFS) nameBases(msg string) string {
	c.mu.Lock()
	rewritten := slices.SortedFunc(maps.Keys(c.rewrites), func(a, b string) int { return len(b) - len(a) })
	for _, rel := range rewritten {
		msg = strings.ReplaceAll(msg, rel, c.rewrites[rel])
	}
	c.mu.Unlock()
	for _, r := range c.roots[1:] {
		for _, root := range []string{r.root, r.given} {
			msg = strings.ReplaceAll(msg, root+string(filepath.Separator), r.base.RepoURL+"//")
			msg = strings.ReplaceAll(msg, root, r.base.RepoURL)
		}
	}
	return msg
}

// rewrote records that entry was rewritten to rel.
func (c *confinedFS) rewrote(rel, entry string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rewrites == nil {
		c.rewrites = map[string]string{}
	}
	c.rewrites[rel] = entry
}

// describe names root i of c for messages.
func (c *confinedFS) describe(i int) string {
	if i <= 0 {
		return "the repository"
	}
	return "remote base " + c.roots[i].base.RepoURL
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

// resolve returns the real path of p, which must be inside the root it is
// spelled in (one not spelled in any must resolve inside the repository).
// A missing path is resolved as far as it exists, so that a missing file
// in the repository is reported as missing while a path through a symlink
// out of the repository is refused.
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
	root := c.repo
	if i := c.rootOf(abs); i >= 0 {
		root = c.roots[i].repo
	}
	if !root.within(real) {
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
// Kustomization files are checked for remote references first, and their
// fetched remote bases rewritten (serveKustomization).
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
		if data, err = serveKustomization(c, real, data); err != nil {
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
