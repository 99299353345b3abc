package check

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// SourceInputs lists the repository paths (slash-separated, relative to
// root) that rendering the source directory dir may read: dir itself, and
// every path outside it that a kustomization or Chart.yaml under it names
// (any string of the file that resolves to a file or directory of the
// checkout counts, configMapGenerator's "key=path" and Helm's "file://"
// included, and one that looks like a path to nothing, which may have been
// removed), followed into the kustomizations and charts there. ok is
// false when dir holds what cannot be seen through: Jsonnet, whose imports
// are code. tollgate diff reuses a render when no input changed; tollgate
// test leaves to an Application the directories it renders, unless their
// inputs hold Argo CD's own kinds.
//
// Nothing outside root is read: a path that leads out of it through a
// symbolic link makes ok false.
func SourceInputs(root, dir string) (paths []string, ok bool) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, false
	}
	w := &inputWalk{root: root, real: real, seen: map[string]bool{}, ok: true}
	w.follow(dir, 0)
	return w.paths, w.ok
}

// ApplicationSources returns the sources of the Application document app,
// spec.source then spec.sources; ok is false when one is not an object.
func ApplicationSources(app map[string]any) (sources []map[string]any, ok bool) {
	spec, _ := app["spec"].(map[string]any)
	if s, isMap := spec["source"].(map[string]any); isMap {
		sources = append(sources, s)
	}
	list, _ := spec["sources"].([]any)
	for _, s := range list {
		m, isMap := s.(map[string]any)
		if !isMap {
			return nil, false
		}
		sources = append(sources, m)
	}
	return sources, true
}

// inputWalk collects input paths, following kustomizations and charts.
type inputWalk struct {
	// root is the checkout, real the same with symbolic links resolved.
	root, real string
	seen       map[string]bool
	paths      []string
	// ok turns false at what cannot be seen through.
	ok bool
}

// maxInputDepth bounds how far kustomizations naming kustomizations are
// followed.
const maxInputDepth = 32

func (w *inputWalk) add(p string) {
	if !w.seen[p] {
		w.seen[p] = true
		w.paths = append(w.paths, p)
	}
}

// follow records the directory dir and what its kustomization or chart
// names outside it.
func (w *inputWalk) follow(dir string, depth int) {
	if w.seen[dir] || !w.ok {
		return
	}
	w.add(dir)
	if depth > maxInputDepth {
		w.ok = false
		return
	}
	abs := filepath.Join(w.root, filepath.FromSlash(dir))
	resolved, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return // nothing there to read
	}
	if err != nil || !inside(w.real, resolved) {
		w.ok = false
		return
	}
	entries, err := os.ReadDir(resolved)
	if err != nil {
		w.ok = false
		return
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".jsonnet") || strings.HasSuffix(name, ".libsonnet"):
			w.ok = false
			return
		case name == "kustomization.yaml" || name == "kustomization.yml" || name == "Kustomization" || name == "Chart.yaml":
			for _, s := range fileStrings(filepath.Join(resolved, name)) {
				s = strings.TrimPrefix(s, "file://")
				if _, after, ok := strings.Cut(s, "="); ok {
					s = after // configMapGenerator's key=path
				}
				p := CleanRepoPath(path.Join(dir, s))
				if p == "" || p == dir || strings.HasPrefix(p, dir+"/") {
					continue
				}
				fi, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(p)))
				switch {
				case err == nil && (fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0):
					w.follow(p, depth+1) // a link is resolved, and must stay inside
				case err == nil || errors.Is(err, fs.ErrNotExist) && looksLikePath(s):
					// A path gone from the checkout is an input too: what
					// was there before changed.
					w.add(p)
				}
			}
		}
	}
}

// inside reports whether p is root or below it; both are clean absolute
// paths.
func inside(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// looksLikePath reports whether a string of a kustomization or chart that
// names nothing in the checkout could have named a file or directory: a
// relative path with a separator or an extension, not a URL.
func looksLikePath(s string) bool {
	return s != "" && !strings.Contains(s, "://") && !strings.ContainsAny(s, " \n:{}") &&
		(strings.Contains(s, "/") || path.Ext(s) != "")
}

// fileStrings returns every string in the YAML file at p, keys and values;
// none when it does not read or decode (its render then fails the same way
// wherever it is asked for).
func fileStrings(p string) []string {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil
	}
	var v any
	if yaml.Unmarshal(data, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case map[string]any:
			for k, e := range v {
				out = append(out, k)
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// CleanRepoPath cleans a repository path: slash-separated, relative to the
// root ("." for the root itself), "" when it leaves the repository.
func CleanRepoPath(p string) string {
	c := path.Clean(strings.TrimPrefix(filepath.ToSlash(p), "/"))
	if c == ".." || strings.HasPrefix(c, "../") {
		return ""
	}
	return c
}
