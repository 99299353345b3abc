package chart

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/tollgate-dev/tollgate/reposerver"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// Defaults of Options.
const (
	DefaultTimeout         = 60 * time.Second
	DefaultMaxIndexBytes   = 64 << 20
	DefaultMaxArchiveBytes = 50 << 20
)

// Options configure a Cache.
type Options struct {
	// Dir holds the archives and unpacked charts.
	Dir string
	// AllowInsecure allows http:// repositories without Insecure in their
	// HelmRepository.
	AllowInsecure bool
	// AllowLoopback, when set, reports whether the chart client may
	// connect to a loopback address (and port): the servers of tests and
	// of a developer's machine. Without it every loopback address is
	// refused, whatever name resolved to it, as link-local and cloud
	// metadata addresses always are (see Cache.httpClient).
	AllowLoopback func(netip.AddrPort) bool
	// Timeout bounds each request (an index, an archive, an OCI pull).
	Timeout time.Duration
	// MaxIndexBytes and MaxArchiveBytes bound an index.yaml and a chart
	// archive as downloaded. Unpacked, a chart stays within Helm's own
	// limits (loader.MaxDecompressedChartSize in all,
	// loader.MaxDecompressedFileSize per file).
	MaxIndexBytes, MaxArchiveBytes int64
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Cache fetches charts and keeps them on disk by (repository, project
// scope, chart, version). It is safe for concurrent use.
type Cache struct {
	opts    Options
	mu      sync.Mutex
	locks   map[string]*sync.Mutex
	indexes map[string]cachedIndex
	// tags are OCI repositories' tag listings, reused as indexes are.
	tags map[string]cachedTags
}

// New returns a Cache in opts.Dir, which it creates.
func New(opts Options) (*Cache, error) {
	if opts.Dir == "" {
		return nil, errors.New("new chart cache: no directory")
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("new chart cache: %w", err)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxIndexBytes <= 0 {
		opts.MaxIndexBytes = DefaultMaxIndexBytes
	}
	if opts.MaxArchiveBytes <= 0 {
		opts.MaxArchiveBytes = DefaultMaxArchiveBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Cache{opts: opts, locks: map[string]*sync.Mutex{}, indexes: map[string]cachedIndex{}, tags: map[string]cachedTags{}}, nil
}

// Chart is a chart in the cache.
type Chart struct {
	// Name and Version are the chart's, the version resolved.
	Name, Version string
	// Digest is the archive's sha256 ("sha256:<hex>").
	Digest string
	// Archive is the .tgz file; Dir the unpacked chart (its Chart.yaml at
	// the top). Both are shared and must not be modified.
	Archive, Dir string
}

// chartName is what a chart name may be: it becomes a path segment.
var chartName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// FetchOptions are what one fetch may use.
type FetchOptions struct {
	// Repositories hold the credentials (Match) and which registries are
	// OCI (IsOCI).
	Repositories []reposerver.HelmRepository
	// PassCredentials sends a repository's basic auth to chart URLs on
	// other hosts too (the source's helm.passCredentials).
	PassCredentials bool
	// IndexMaxAge is how old a downloaded index may be to resolve a
	// version; zero downloads it again. An exact version already in the
	// cache needs no index.
	IndexMaxAge time.Duration
	// Permitted reports whether Dependencies may fetch a chart from the
	// Helm repository or OCI registry repoURL (oci: a registry): the
	// AppProject's sourceRepos, as the repo-server judges them. nil
	// permits no repository. A dependency from a repository it does not
	// permit fails with a *NotPermittedError before anything is fetched;
	// file:// dependencies are not asked about, and neither is Fetch (a
	// chart source is judged before it is fetched).
	Permitted func(ctx context.Context, repoURL string, oci bool) (bool, error)
	// Project names the AppProject in a NotPermittedError.
	Project string
}

// Fetch returns chart name at version (an exact version or a semver
// constraint; "" or "*" is the latest) from the repository or registry
// repoURL.
func (c *Cache) Fetch(ctx context.Context, repoURL, name, version string, o FetchOptions) (Chart, error) {
	if !chartName.MatchString(name) {
		return Chart{}, fmt.Errorf("chart name %q is not a valid chart name", name)
	}
	repo, _ := reposerver.MatchHelmRepository(repoURL, o.Repositories)
	oci := reposerver.IsOCI(repoURL, o.Repositories)
	base := filepath.Join(c.opts.Dir, cacheKey(repoURL, repo.Project))
	// An exact version already fetched needs no network.
	if isExact(version) {
		if ch, ok := c.cached(base, name, version); ok {
			return ch, nil
		}
	}
	var (
		data   []byte
		digest string
		err    error
	)
	// A constraint resolved to a version already fetched downloads no
	// archive.
	var hit Chart
	have := func(v string) bool {
		var ok bool
		hit, ok = c.cached(base, name, v)
		return ok
	}
	resolved := version
	if oci {
		data, resolved, digest, err = c.pullOCI(ctx, repo, name, version, o.IndexMaxAge, have)
	} else {
		data, resolved, err = c.download(ctx, repo, name, version, o, have)
	}
	if err != nil {
		return Chart{}, err
	}
	if data == nil {
		return hit, nil
	}
	if digest == "" {
		sum := sha256.Sum256(data)
		digest = "sha256:" + hex.EncodeToString(sum[:])
	}
	return c.store(base, name, resolved, digest, data)
}

// isExact reports whether a version names one version: a semver version,
// or a tag that is no constraint ("latest"); "" and "*" are constraints.
func isExact(v string) bool {
	if _, err := semver.StrictNewVersion(v); err == nil {
		return true
	}
	if v == "" || v == "*" {
		return false
	}
	_, err := semver.NewConstraint(v)
	return err != nil
}

// lock returns the mutex of one cache entry.
func (c *Cache) lock(key string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.locks[key]
	if !ok {
		m = &sync.Mutex{}
		c.locks[key] = m
	}
	return m
}

// entry returns the archive and directory of a chart version under base.
func entry(base, name, version string) (archive, dir string, ok bool) {
	if !validVersionPath(version) {
		return "", "", false
	}
	stem := filepath.Join(base, name+"-"+version)
	return stem + ".tgz", stem, true
}

// validVersionPath accepts semver's characters (+ for build metadata).
func validVersionPath(v string) bool {
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '+', r == '_':
		default:
			return false
		}
	}
	return v != "" && v != "." && v != ".."
}

// cached returns a chart version already in the cache.
func (c *Cache) cached(base, name, version string) (Chart, bool) {
	archive, dir, ok := entry(base, name, version)
	if !ok {
		return Chart{}, false
	}
	m := c.lock(dir)
	m.Lock()
	defer m.Unlock()
	digest, err := os.ReadFile(dir + ".digest")
	if err != nil {
		return Chart{}, false
	}
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
		return Chart{}, false
	}
	return Chart{Name: name, Version: version, Digest: string(digest), Archive: archive, Dir: dir}, true
}

// store writes a verified archive and its unpacked chart into the cache,
// each by a rename, so a reader sees all of an entry or none of it.
func (c *Cache) store(base, name, version, digest string, data []byte) (Chart, error) {
	archive, dir, ok := entry(base, name, version)
	if !ok {
		return Chart{}, fmt.Errorf("chart %s version %q is not a valid version", name, version)
	}
	m := c.lock(dir)
	m.Lock()
	defer m.Unlock()
	ch := Chart{Name: name, Version: version, Digest: digest, Archive: archive, Dir: dir}
	if stored, err := os.ReadFile(dir + ".digest"); err == nil {
		ch.Digest = string(stored) // another request stored it first
		return ch, nil
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return Chart{}, fmt.Errorf("store chart %s-%s: %w", name, version, err)
	}
	tmp, err := os.MkdirTemp(base, ".unpack-")
	if err != nil {
		return Chart{}, fmt.Errorf("store chart %s-%s: %w", name, version, err)
	}
	defer os.RemoveAll(tmp)
	if err := unpack(data, tmp, Limits{TotalBytes: loader.MaxDecompressedChartSize, FileBytes: loader.MaxDecompressedFileSize}); err != nil {
		return Chart{}, fmt.Errorf("unpack chart %s-%s: %w", name, version, err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "Chart.yaml")); err != nil {
		return Chart{}, fmt.Errorf("unpack chart %s-%s: the archive has no Chart.yaml", name, version)
	}
	if err := writeFileAtomic(archive, data); err != nil {
		return Chart{}, fmt.Errorf("store chart %s-%s: %w", name, version, err)
	}
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Chart{}, fmt.Errorf("store chart %s-%s: %w", name, version, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return Chart{}, fmt.Errorf("store chart %s-%s: %w", name, version, err)
	}
	if err := writeFileAtomic(dir+".digest", []byte(digest)); err != nil {
		return Chart{}, fmt.Errorf("store chart %s-%s: %w", name, version, err)
	}
	return ch, nil
}

// writeFileAtomic writes data to a temporary file beside name and renames
// it into place.
func writeFileAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}
