package render

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"
)

// ErrRemoteReference is returned (wrapped) when a kustomization refers to a
// URL or a Git repository that rendering may not read: a remote file
// (kustomize would download it), or a remote base the repo-server did not
// fetch (Options.RemoteBases). Rendering itself never touches the network.
var ErrRemoteReference = errors.New("remote references are not allowed")

// isKustomizationFile reports whether path names a kustomization file.
func isKustomizationFile(path string) bool {
	base := filepath.Base(path)
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if base == n {
			return true
		}
	}
	return false
}

// findKustomization returns the kustomization file in dir, or "".
func findKustomization(dir string) string {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return ""
}

// Fields of a kustomization that hold paths kustomize loads.
var (
	pathListFields = map[string]bool{
		"resources": true, "bases": true, "components": true, "crds": true,
		"configurations": true, "patchesStrategicMerge": true,
		"generators": true, "transformers": true, "validators": true,
	}
	pathObjectListFields = map[string]bool{
		"patches": true, "patchesJson6902": true, "replacements": true,
	}
	generatorFields = map[string]bool{"configMapGenerator": true, "secretGenerator": true}
)

// serveKustomization returns the kustomization at the real path kustPath,
// content data, as krusty may read it: a reference to anything outside the
// repository by URL or Git address is refused, except a remote base the
// repo-server fetched (Options.RemoteBases), which is rewritten to the
// relative path of its checkout; and an entry of a kustomization in one
// root that leads into another (a remote base into the repository or
// another base) is refused, as kustomize keeps a cloned base inside its
// clone. A kustomization that does not parse is left to kustomize, which
// reports the syntax error.
func serveKustomization(c *confinedFS, kustPath string, data []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return data, nil
	}
	top := deref(doc.Content[0])
	if top.Kind != yaml.MappingNode {
		return data, nil
	}
	rc := &remoteChecker{fs: c, dir: filepath.Dir(kustPath), kustPath: kustPath, name: c.name(kustPath), root: c.rootOf(kustPath)}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if err := rc.field(deref(top.Content[i]).Value, deref(top.Content[i+1])); err != nil {
			return nil, err
		}
	}
	if err := rc.helm(top); err != nil {
		return nil, err
	}
	if !rc.edited {
		return data, nil
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("%s: write kustomization: %w", rc.name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("%s: write kustomization: %w", rc.name, err)
	}
	return buf.Bytes(), nil
}

// remoteChecker checks the fields of one kustomization file.
type remoteChecker struct {
	fs *confinedFS
	// dir is the kustomization's real directory, kustPath its file,
	// name that file for messages, root the index of its root in fs.
	dir, kustPath, name string
	root                int
	// edited is set once a remote base was rewritten.
	edited bool
}

// field checks the top-level field key with value v.
func (rc *remoteChecker) field(key string, v *yaml.Node) error {
	switch {
	case pathListFields[key]:
		return rc.list(key, v, false)
	case pathObjectListFields[key] && v.Kind == yaml.SequenceNode:
		for _, item := range v.Content {
			if err := rc.path(key+".path", lookupNode(deref(item), "path"), false); err != nil {
				return err
			}
		}
	case key == "openapi":
		return rc.path("openapi.path", lookupNode(v, "path"), false)
	case generatorFields[key] && v.Kind == yaml.SequenceNode:
		for _, item := range v.Content {
			item = deref(item)
			if err := rc.list(key+".files", lookupNode(item, "files"), true); err != nil {
				return err
			}
			if err := rc.list(key+".envs", lookupNode(item, "envs"), false); err != nil {
				return err
			}
			if err := rc.path(key+".env", lookupNode(item, "env"), false); err != nil {
				return err
			}
		}
	}
	return nil
}

// helm inflates the helmCharts of the kustomization top, once its paths
// are checked, and tells the kustomizations it names which namespace
// their charts inherit; without --enable-helm a kustomization with charts
// is refused, as kustomize refuses it.
func (rc *remoteChecker) helm(top *yaml.Node) error {
	e, err := readHelmEntries(top)
	if err != nil {
		return fmt.Errorf("%s %w", rc.name, err)
	}
	h := rc.fs.helm
	if h == nil {
		if e != nil {
			return fmt.Errorf("%s line %d: %w", rc.name, e.line, errHelmNotEnabled)
		}
		return nil
	}
	namespace := scalarField(top, "namespace")
	var entries []string
	for _, item := range baseEntries(top) {
		entries = append(entries, strings.TrimSpace(item.Value))
	}
	h.inherit(rc.dir, namespace, entries)
	if e == nil {
		return nil
	}
	return h.inflate(rc, top, e, namespace)
}

// list checks a list of paths (or a single path).
func (rc *remoteChecker) list(field string, v *yaml.Node, stripKey bool) error {
	v = deref(v)
	if v == nil || v.Kind != yaml.SequenceNode {
		return rc.path(field, v, stripKey)
	}
	for _, item := range v.Content {
		if err := rc.path(field, item, stripKey); err != nil {
			return err
		}
	}
	return nil
}

// path checks one path; stripKey drops a generator's "key=" prefix.
func (rc *remoteChecker) path(field string, v *yaml.Node, stripKey bool) error {
	v = deref(v)
	if v == nil || v.Kind != yaml.ScalarNode || strings.Contains(v.Value, "\n") {
		return nil // inline patch or configuration
	}
	s := strings.TrimSpace(v.Value)
	if stripKey {
		if _, after, ok := strings.Cut(s, "="); ok {
			s = after
		}
	}
	localFile := func() bool {
		real, err := rc.fs.resolve(filepath.Join(rc.dir, s))
		if err != nil {
			return false
		}
		fi, err := os.Stat(real)
		return err == nil && fi.Mode().IsRegular()
	}
	if !isRemote(s, localFile) {
		return rc.local(field, v.Line, s)
	}
	where := fmt.Sprintf("%s line %d: %s entry %q", rc.name, v.Line, field, s)
	if isRemoteFile(s) && (field == "resources" || field == "bases") {
		return rc.remoteFile(where, v, s)
	}
	if !slices.Contains(baseFields, field) || isRemoteFile(s) {
		return fmt.Errorf("%s: %w: kustomize would download this file; only the remote files of resources and bases are fetched", where, ErrRemoteReference)
	}
	if _, err := ParseGitSpec(s); err != nil {
		return fmt.Errorf("%s: %w: not a Git repository kustomize can clone: %v", where, ErrRemoteReference, err)
	}
	dir, ok := rc.fs.remote[s]
	if !ok {
		return fmt.Errorf("%s: %w: the remote base was not fetched", where, ErrRemoteReference)
	}
	rel, err := filepath.Rel(rc.dir, dir)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	v.Value, v.Style, v.Tag = filepath.ToSlash(rel), 0, "!!str"
	rc.edited = true
	rc.fs.rewrote(v.Value, s)
	return nil
}

// remoteFile serves the remote file s, entry v of resources, from what
// the repo-server downloaded (Options.RemoteFiles): rewritten to a file
// of the kustomization's directory held in memory.
func (rc *remoteChecker) remoteFile(where string, v *yaml.Node, s string) error {
	data, ok := rc.fs.files[s]
	if !ok {
		return fmt.Errorf("%s: %w: the remote file was not fetched", where, ErrRemoteReference)
	}
	v.Value, v.Style, v.Tag = rc.fs.addRemoteFile(rc.dir, rc.kustPath, v.Line, s, data), 0, "!!str"
	rc.edited = true
	rc.fs.rewrote(v.Value, s)
	return nil
}

// local checks a local path s: it may not lead from the kustomization's
// root into another root of the build (paths outside every root are
// refused when krusty reads them).
func (rc *remoteChecker) local(field string, line int, s string) error {
	if filepath.IsAbs(s) {
		return nil
	}
	to := rc.fs.rootOf(filepath.Join(rc.dir, s))
	if to < 0 || to == rc.root || rc.root < 0 {
		return nil
	}
	return fmt.Errorf("%s line %d: %s entry %q: %w: a kustomization of %s may not read %s",
		rc.name, line, field, s, ErrOutsideRoot, rc.fs.describe(rc.root), rc.fs.describe(to))
}

// gitUser matches the user@ prefix kustomize takes for an SCP-style Git
// address (git@github.com:org/repo).
var gitUser = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

// isRemote reports whether kustomize would fetch s over the network rather
// than read it from disk: any URL, a go-getter style git:: address, and
// GitHub shorthand and SCP-style Git addresses, unless a local file of that
// name exists (kustomize loads a file before it tries a Git clone; a
// directory of that name would still be cloned).
func isRemote(s string, existsLocally func() bool) bool {
	l := strings.ToLower(s)
	if strings.Contains(l, "://") || strings.HasPrefix(l, "git::") {
		return true
	}
	if strings.HasPrefix(l, "github.com/") || strings.HasPrefix(l, "github.com:") || gitUser.MatchString(s) {
		return !existsLocally()
	}
	return false
}
