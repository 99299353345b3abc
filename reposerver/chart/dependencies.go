package chart

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/bounded"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// maxMetadataBytes bounds Chart.yaml, requirements.yaml and their locks.
const maxMetadataBytes = 1 << 20

// Dependency is a dependency of a chart that the chart does not vendor, as
// `helm dependency build` would add it to charts/.
type Dependency struct {
	// Name, Version and Repository are the dependency's, the version
	// resolved.
	Name       string `json:"name"`
	Version    string `json:"version,omitempty"`
	Repository string `json:"repository"`
	// Archive is the fetched chart archive of a repository or OCI
	// dependency; Dir the repository-relative chart directory of a
	// file:// one.
	Archive string `json:"archive,omitempty"`
	Dir     string `json:"dir,omitempty"`
}

// Dependencies returns the dependencies that the chart in directory dir
// (slash-separated, relative to the checkout root) declares but does not
// vendor in its charts/ directory, fetched as `helm dependency build` does:
// at the versions of Chart.lock (requirements.lock for apiVersion v1) when
// one is present, which must be in sync with the declared dependencies, or
// else at the highest version each constraint allows. Repositories are
// named by URL (https://, oci://), fetched with o from the repositories
// o.Permitted permits (every one is judged before anything is fetched),
// or by a file:// path inside the repository. A chart with nothing
// missing needs no network.
func (c *Cache) Dependencies(ctx context.Context, root, dir string, o FetchOptions) ([]Dependency, error) {
	meta, lock, err := readDependencies(root, dir)
	if err != nil || meta == nil || len(meta.Dependencies) == 0 {
		return nil, err
	}
	vendored, err := vendoredCharts(root, dir)
	if err != nil {
		return nil, err
	}
	var missing []*helmchart.Dependency
	for _, d := range meta.Dependencies {
		if d != nil && !vendored(d.Name) {
			missing = append(missing, d)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	locked := map[string]*helmchart.Dependency{}
	if lock != nil {
		if !lockInSync(meta.Dependencies, lock) {
			return nil, fmt.Errorf("%s: the lock file (%s) is out of sync with the dependencies file (%s). Please update the dependencies", dir, lockName(meta), depsName(meta))
		}
		for _, d := range lock.Dependencies {
			if d != nil {
				locked[d.Name] = d
			}
		}
	}
	deps := make([]Dependency, len(missing))
	for i, d := range missing {
		deps[i] = Dependency{Name: d.Name, Version: d.Version, Repository: d.Repository}
		if l, ok := locked[d.Name]; ok {
			deps[i].Version, deps[i].Repository = l.Version, l.Repository
		}
	}
	// Every dependency is judged before anything is fetched: a chart
	// with one from a repository the project does not permit fetches
	// nothing at all.
	remote := make([]bool, len(deps))
	for i := range deps {
		var err error
		if remote[i], err = judge(ctx, dir, &deps[i], o); err != nil {
			return nil, fmt.Errorf("%s: dependency %s: %w", path.Join(dir, depsName(meta)), deps[i].Name, err)
		}
	}
	for i := range deps {
		if !remote[i] {
			continue
		}
		ch, err := c.Fetch(ctx, deps[i].Repository, deps[i].Name, deps[i].Version, o)
		if err != nil {
			return nil, fmt.Errorf("%s: dependency %s: %w", path.Join(dir, depsName(meta)), deps[i].Name, err)
		}
		deps[i].Version, deps[i].Archive = ch.Version, ch.Archive
	}
	return deps, nil
}

// judge checks the repository of dependency dep of the chart in dir: a
// file:// one must stay inside the repository (its Dir is set), an
// https:// or oci:// one must be permitted by o (remote is true: it is to
// be fetched).
func judge(ctx context.Context, dir string, dep *Dependency, o FetchOptions) (remote bool, err error) {
	repository := dep.Repository
	lower := strings.ToLower(repository)
	switch {
	case repository == "":
		return false, errors.New("it is not in charts/ and names no repository")
	case strings.HasPrefix(lower, "file://"):
		local := repository[len("file://"):]
		rel := path.Clean(path.Join(dir, local))
		if path.IsAbs(local) || rel == ".." || strings.HasPrefix(rel, "../") {
			return false, fmt.Errorf("repository %s is outside the repository root", repository)
		}
		dep.Dir = rel
		return false, nil
	case strings.HasPrefix(repository, "@") || strings.HasPrefix(lower, "alias:"):
		return false, fmt.Errorf("repository %q names a Helm repository by its local name; tollgate resolves dependency repositories by URL (https:// or oci://)", repository)
	}
	permitted := false
	if o.Permitted != nil {
		if permitted, err = o.Permitted(ctx, repository, reposerver.IsOCI(repository, o.Repositories)); err != nil {
			return false, err
		}
	}
	if !permitted {
		return false, &NotPermittedError{Repository: repository, Project: o.Project}
	}
	return true, nil
}

// NotPermittedError is a chart dependency from a repository the
// AppProject's sourceRepos do not permit; nothing was fetched from it.
type NotPermittedError struct {
	// HelmRepository is the dependency's repository URL; Project the
	// AppProject.
	Repository, Project string
}

func (e *NotPermittedError) Error() string {
	return fmt.Sprintf("repository %s is not permitted in project %q: add it to the project's spec.sourceRepos, or vendor the chart in charts/", redact(e.Repository), e.Project)
}

// readDependencies reads the chart's metadata, with the dependencies of
// requirements.yaml for an apiVersion v1 chart, and its lock file (nil
// when there is none). A directory without Chart.yaml is no chart.
func readDependencies(root, dir string) (*helmchart.Metadata, *helmchart.Lock, error) {
	read := func(name string) ([]byte, error) {
		data, err := readInRoot(root, path.Join(dir, name), maxMetadataBytes)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read %s: %w", path.Join(dir, name), err)
		}
		return data, err
	}
	data, err := read("Chart.yaml")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var meta helmchart.Metadata
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path.Join(dir, "Chart.yaml"), err)
	}
	if meta.APIVersion == helmchart.APIVersionV1 {
		var req struct {
			Dependencies []*helmchart.Dependency `json:"dependencies"`
		}
		data, err := read("requirements.yaml")
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		if err == nil {
			if err := yaml.Unmarshal(data, &req); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", path.Join(dir, "requirements.yaml"), err)
			}
			meta.Dependencies = req.Dependencies
		}
	}
	data, err = read(lockName(&meta))
	if errors.Is(err, fs.ErrNotExist) {
		return &meta, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var lock helmchart.Lock
	if err := yaml.Unmarshal(data, &lock); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path.Join(dir, lockName(&meta)), err)
	}
	return &meta, &lock, nil
}

func lockName(m *helmchart.Metadata) string {
	if m.APIVersion == helmchart.APIVersionV1 {
		return "requirements.lock"
	}
	return "Chart.lock"
}

func depsName(m *helmchart.Metadata) string {
	if m.APIVersion == helmchart.APIVersionV1 {
		return "requirements.yaml"
	}
	return "Chart.yaml"
}

// lockInSync reports whether lock was written for the dependencies req, by
// Helm's digest of both (or Helm 2's of req alone).
func lockInSync(req []*helmchart.Dependency, lock *helmchart.Lock) bool {
	digest := func(v any) string {
		data, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		sum := sha256.Sum256(data)
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	lockDeps := lock.Dependencies
	if lockDeps == nil {
		lockDeps = []*helmchart.Dependency{}
	}
	return lock.Digest == digest([2][]*helmchart.Dependency{req, lockDeps}) ||
		lock.Digest == digest(map[string][]*helmchart.Dependency{"dependencies": req})
}

// vendoredCharts returns whether the chart's charts/ directory holds a
// chart of a given name: a directory whose Chart.yaml names it, or an
// archive named as `helm package` names it (<name>-<version>.tgz).
func vendoredCharts(root, dir string) (func(name string) bool, error) {
	names := map[string]bool{}
	var archives []string
	chartsDir := filepath.Join(root, filepath.FromSlash(dir), "charts")
	entries, err := os.ReadDir(chartsDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path.Join(dir, "charts"), err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tgz") {
			archives = append(archives, strings.TrimSuffix(e.Name(), ".tgz"))
			continue
		}
		data, err := readInRoot(root, path.Join(dir, "charts", e.Name(), "Chart.yaml"), maxMetadataBytes)
		if err != nil {
			continue
		}
		var m struct {
			Name string `json:"name"`
		}
		if yaml.Unmarshal(bytes.TrimSpace(data), &m) == nil && m.Name != "" {
			names[m.Name] = true
		}
	}
	return func(name string) bool {
		if names[name] {
			return true
		}
		for _, a := range archives {
			if v, ok := strings.CutPrefix(a, name+"-"); ok && v != "" && (v[0] >= '0' && v[0] <= '9' || v[0] == 'v') {
				return true
			}
		}
		return false
	}, nil
}

// readInRoot reads the regular file at the slash-separated path rel of the
// checkout at root ("/x" is "x"): a path or symlink that leaves root is
// refused (os.Root), as is a file larger than max bytes; a missing file is
// an error that wraps fs.ErrNotExist.
func readInRoot(root, rel string, max int64) ([]byte, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.Open(path.Clean(strings.TrimPrefix(rel, "/")))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return bounded.ReadAll(f, max)
}
