package render

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Bounds of the walk of one kustomization graph (FindRemote).
const (
	// MaxKustomizations is how many kustomizations one walk reads.
	MaxKustomizations = 1000
	// MaxKustomizationDepth is how deep local bases are followed.
	MaxKustomizationDepth = 64
)

// ErrKustomizationGraph is returned (wrapped) when a kustomization graph
// passes MaxKustomizations or MaxKustomizationDepth.
var ErrKustomizationGraph = errors.New("kustomization graph too large")

// RemoteEntry is a remote Git base a kustomization names.
type RemoteEntry struct {
	// Entry is the entry as written: the key of Options.RemoteBases.
	Entry string
	// File is the kustomization naming it, slash-separated and relative
	// to the checkout's root, and Line its line (0 for a component the
	// Application adds, kustomize.components).
	File string
	Line int
	Spec GitSpec
}

// RemoteChart is a chart of a kustomization's helmCharts that is not in
// its chart home: kustomize would pull it, the repo-server does
// (Options.KustomizeCharts).
type RemoteChart struct {
	// Repo, Name and Version are the entry's; Devel allows pre-releases.
	Repo, Name, Version string
	Devel               bool
	// File is the kustomization naming it, slash-separated and relative
	// to the checkout's root, and Line the line of its helm fields.
	File string
	Line int
}

// RemoteFile is a file a kustomization names by URL in its resources:
// kustomize would download it, the repo-server does
// (Options.RemoteFiles).
type RemoteFile struct {
	// URL is the entry as written.
	URL string
	// File is the kustomization naming it, slash-separated and relative
	// to the checkout's root, and Line the entry's line.
	File string
	Line int
}

// Remote is what a kustomization graph fetches: remote Git bases, files
// and charts to pull.
type Remote struct {
	Bases  []RemoteEntry
	Files  []RemoteFile
	Charts []RemoteChart
}

// baseFields are the fields of a kustomization whose entries kustomize may
// clone: the others name files, which it downloads.
var baseFields = []string{"resources", "bases", "components"}

// FindRemote returns what kustomize would fetch to build the application
// directory dir of the checkout at root with opts: the remote Git bases,
// entries of resources, bases and components (and of the Application's
// kustomize.components) that ParseGitSpec reads, the files they name by
// URL (isRemoteFile), and the charts of
// helmCharts with a repo that are not in their chart home; walking the
// local bases and components they name, each once, in the order found.
// It reads only kustomization files, at most MaxKustomizations of them
// and MaxKustomizationDepth deep (ErrKustomizationGraph past either), and
// no path that leaves root. What kustomize will refuse (a remote file, an
// entry that is not a Git spec, a kustomization that does not parse) is
// left for Build to report.
func FindRemote(root, dir string, opts Options, lim Limits) (Remote, error) {
	lim = lim.withDefaults()
	r, err := openRepo(root)
	if err != nil {
		return Remote{}, err
	}
	appRel, err := r.clean(dir)
	if err != nil {
		return Remote{}, nil
	}
	appDir, err := r.resolveRel(appRel)
	if err != nil {
		return Remote{}, nil
	}
	w := &baseWalker{repo: r, lim: lim, seen: map[string]bool{}, visited: map[string]bool{}}
	w.queue = append(w.queue, walkDir{dir: appDir})
	src := source{repo: r, dir: appDir, rel: r.rel(appDir), opts: opts, lim: lim}
	if comps, err := src.kustomizeComponents(); err == nil && len(comps) > 0 {
		file := r.rel(findKustomization(appDir))
		for _, c := range comps {
			w.entry(walkDir{dir: appDir, depth: 0}, file, 0, c, false)
		}
	}
	for len(w.queue) > 0 {
		d := w.queue[0]
		w.queue = w.queue[1:]
		if err := w.visit(d); err != nil {
			return Remote{}, err
		}
	}
	return w.found, nil
}

// walkDir is a directory of a kustomization graph to read.
type walkDir struct {
	dir   string
	depth int
}

// baseWalker walks one kustomization graph.
type baseWalker struct {
	repo    repo
	lim     Limits
	queue   []walkDir
	visited map[string]bool
	seen    map[string]bool
	found   Remote
}

// visit reads the kustomization of d, if it has one.
func (w *baseWalker) visit(d walkDir) error {
	kust := findKustomization(d.dir)
	if kust == "" || w.visited[d.dir] {
		return nil
	}
	file := w.repo.rel(kust)
	switch {
	case len(w.visited) >= MaxKustomizations:
		return fmt.Errorf("%s: %w: more than %d kustomizations", file, ErrKustomizationGraph, MaxKustomizations)
	case d.depth > MaxKustomizationDepth:
		return fmt.Errorf("%s: %w: bases nested more than %d deep", file, ErrKustomizationGraph, MaxKustomizationDepth)
	}
	w.visited[d.dir] = true
	data, err := readFile(kust, w.lim.MaxFileBytes)
	if err != nil {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	top := deref(doc.Content[0])
	if top.Kind != yaml.MappingNode {
		return nil
	}
	for _, item := range baseEntries(top) {
		w.entry(d, file, item.Line, strings.TrimSpace(item.Value), true)
	}
	w.charts(d, file, top)
	return nil
}

// baseEntries returns the entries of the kustomization top's resources,
// bases and components: the scalars of each list (or the field's scalar).
func baseEntries(top *yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	for _, field := range baseFields {
		_, v := mapEntry(top, field, 0)
		v = deref(v)
		items := []*yaml.Node{v}
		if v != nil && v.Kind == yaml.SequenceNode {
			items = v.Content
		}
		for _, item := range items {
			if item = deref(item); item != nil && item.Kind == yaml.ScalarNode {
				out = append(out, item)
			}
		}
	}
	return out
}

// charts records the charts of the kustomization top in d.dir that name
// a repo and are not in their chart home.
func (w *baseWalker) charts(d walkDir, file string, top *yaml.Node) {
	e, err := readHelmEntries(top)
	if err != nil || e == nil {
		return
	}
	for _, ch := range e.charts {
		home, err := chartHome(d.dir, e.globals, ch)
		if err != nil || ch.Repo == "" || ch.Name == "" {
			continue
		}
		if real, err := filepath.EvalSymlinks(filepath.Join(home, ch.Name)); err == nil && w.repo.within(real) {
			if fi, err := os.Stat(real); err == nil && fi.IsDir() {
				continue
			}
		}
		key := "chart\x00" + ch.Repo + "\x00" + ch.Name + "\x00" + ch.Version
		if w.seen[key] {
			continue
		}
		w.seen[key] = true
		w.found.Charts = append(w.found.Charts, RemoteChart{Repo: ch.Repo, Name: ch.Name, Version: ch.Version, Devel: ch.Devel, File: file, Line: e.line})
	}
}

// entry records s, an entry of the kustomization file in d.dir, when it is
// a remote Git base, or queues the local directory it names. fileFirst:
// like kustomize for a resources entry, a local file of that name is read
// rather than cloned.
func (w *baseWalker) entry(d walkDir, file string, line int, s string, fileFirst bool) {
	if s == "" {
		return
	}
	localFile := func() bool {
		if !fileFirst {
			return false
		}
		real, err := filepath.EvalSymlinks(filepath.Join(d.dir, s))
		if err != nil || !w.repo.within(real) {
			return false
		}
		fi, err := os.Stat(real)
		return err == nil && fi.Mode().IsRegular()
	}
	if isRemote(s, localFile) {
		if w.seen[s] {
			return
		}
		if isRemoteFile(s) {
			w.seen[s] = true
			w.found.Files = append(w.found.Files, RemoteFile{URL: s, File: file, Line: line})
			return
		}
		spec, err := ParseGitSpec(s)
		if err != nil {
			return
		}
		w.seen[s] = true
		w.found.Bases = append(w.found.Bases, RemoteEntry{Entry: s, File: file, Line: line, Spec: spec})
		return
	}
	if filepath.IsAbs(s) {
		return
	}
	real, err := filepath.EvalSymlinks(filepath.Join(d.dir, s))
	if err != nil || !w.repo.within(real) {
		return
	}
	if fi, err := os.Stat(real); err == nil && fi.IsDir() {
		w.queue = append(w.queue, walkDir{dir: real, depth: d.depth + 1})
	}
}
