package render

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
)

// kustomize renders the kustomization whose file (real path) is kustFile.
func (s source) kustomize(kustFile string) ([]Document, []Note, error) {
	if kustFile == "" {
		return nil, nil, fmt.Errorf("%s has no kustomization file (kustomization.yaml, kustomization.yml or Kustomization)", s.rel)
	}
	original, err := readFile(kustFile, s.lim.MaxFileBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", s.repo.rel(kustFile), err)
	}
	components, err := s.kustomizeComponents()
	if err != nil {
		return nil, nil, err
	}
	served, added, err := editKustomization(original, s.opts.Kustomize, components)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.repo.rel(kustFile), err)
	}
	kopts, helm, err := kustomizerOptions(s.opts.KustomizeBuildOptions)
	if err != nil {
		return nil, nil, err
	}
	fsys, err := newConfinedFS(s.repo, map[string][]byte{kustFile: served}, s.lim.MaxFileBytes, s.opts.RemoteBases)
	if err != nil {
		return nil, nil, err
	}
	fsys.files = s.opts.RemoteFiles
	if helm != nil {
		fsys.helm = &kustomizeHelm{settings: *helm, caps: s.opts.Capabilities, charts: s.opts.KustomizeCharts, lim: s.lim,
			rootDir: kopts.LoadRestrictions == types.LoadRestrictionsRootOnly, namespaces: map[string]string{}, files: map[string]helmFile{}}
	}
	k := krusty.MakeKustomizer(kopts)
	// Kustomize keeps the OpenAPI schema of a build (kustomization
	// `openapi:`) in process-wide state. The product renders each source in
	// its own child process (reposerver/server), so builds never share
	// it; nothing here serializes in-process builds.
	resMap, err := k.Run(fsys, s.dir)
	blocked, outside := fsys.errors()
	if blocked != nil {
		return nil, nil, blocked
	}
	if err != nil {
		msg := s.relativize(fsys.nameBases(err.Error()))
		if outside != nil {
			return nil, nil, fmt.Errorf("%w (kustomize: %s)", outside, msg)
		}
		return nil, nil, errors.New(msg)
	}
	o := originMapper{src: s, kustRel: s.repo.rel(kustFile), files: map[string][]Document{}}
	var docs []Document
	var notes []Note
	for _, res := range resMap.Resources() {
		origin, err := res.GetOrigin()
		if err != nil {
			return nil, nil, fmt.Errorf("read origin of %s: %w", res.CurId(), err)
		}
		// What kustomize itself would write: a chart's objects are its
		// helm generator's output, a remote base's are named by what it
		// cloned. The chart is named only here, to find its entry.
		rewritten := false
		file, index, line := "", 0, 0
		if rf, ok := fsys.remoteFileOrigin(s.dir, origin); ok {
			// From a remote file: placed at its entry.
			file, line = o.kustRel, rf.line
			if s.repo.within(rf.kustPath) {
				file = s.repo.rel(rf.kustPath)
			} else {
				line = 0
			}
			origin, rewritten = &resource.Origin{Path: rf.url}, true
		}
		if inflated := fsys.helm.origin(fsys, s.dir, origin); inflated != nil {
			origin, rewritten = inflated, true
		}
		if remote := fsys.remoteOrigin(s.dir, origin); remote != nil {
			origin, rewritten = remote, true
		}
		switch {
		case added:
			err = res.SetOrigin(nil)
		case rewritten:
			shown := *origin
			shown.ConfiguredBy.Name = ""
			err = res.SetOrigin(&shown)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("set origin of %s: %w", res.CurId(), err)
		}
		data, err := res.MarshalJSON()
		if err != nil {
			return nil, nil, fmt.Errorf("encode %s: %w", res.CurId(), err)
		}
		if file == "" {
			file, index, line = o.locate(origin, res.GetKind(), res.GetName(), res.GetNamespace())
		}
		ds, ns, err := decodeData(file, data, s.lim, true, false)
		if err != nil {
			return nil, nil, err
		}
		for i := range ds {
			ds[i].Index, ds[i].Line, ds[i].Rendered, ds[i].Origin, ds[i].node = index, line, true, KindKustomize, nil
		}
		docs = append(docs, ds...)
		notes = append(notes, ns...)
	}
	return docs, notes, nil
}

// kustomizeComponents resolves KustomizeOptions.Components like `kustomize
// edit add component` run in the application directory: each path is a
// glob relative to it, and one that matches nothing is an error, or is left
// out with IgnoreMissingComponents (as is one that leaves the repository).
// A remote component is kept as written: the build loads it from its
// checkout when the repo-server fetched it (Options.RemoteBases), and
// refuses it otherwise.
func (s source) kustomizeComponents() ([]string, error) {
	o := s.opts.Kustomize
	if o == nil {
		return nil, nil
	}
	var out []string
	for _, c := range o.Components {
		if isRemote(c, func() bool { return false }) {
			out = append(out, c)
			continue
		}
		var found []string
		if rel, err := s.repo.clean(joinRel(s.rel, c)); err == nil {
			matches, err := filepath.Glob(filepath.Join(s.repo.root, filepath.FromSlash(rel)))
			if err != nil {
				return nil, fmt.Errorf("component %s: %w", c, err)
			}
			for _, m := range matches {
				if real, err := filepath.EvalSymlinks(m); err == nil && s.repo.within(real) {
					r, _ := filepath.Rel(s.dir, m)
					found = append(found, filepath.ToSlash(r))
				}
			}
		}
		if len(found) == 0 && !o.IgnoreMissingComponents {
			return nil, fmt.Errorf("component %s has no match in the repository", c)
		}
		out = append(out, found...)
	}
	return out, nil
}

// relativize removes the repository's location from kustomize messages,
// which name absolute paths.
func (s source) relativize(msg string) string {
	for _, root := range []string{s.repo.root, s.repo.given} {
		msg = strings.ReplaceAll(msg, root+string(filepath.Separator), "")
		msg = strings.ReplaceAll(msg, root, ".")
	}
	return msg
}

// originMapper finds the file and line a kustomize resource came from.
type originMapper struct {
	src source
	// kustRel is the application's kustomization file, repo-relative.
	kustRel string
	// files caches decoded source files by repo-relative path; nil when the
	// file could not be decoded.
	files map[string][]Document
}

// locate returns the repo-relative file, document index and line for a
// resource with the given origin. Resources read from a file point at their
// document in it (found by kind and name); generated resources point at the
// generator in the kustomization file; anything else at the application's
// kustomization file.
func (o *originMapper) locate(origin *resource.Origin, kind, name, namespace string) (string, int, int) {
	if origin == nil || origin.Repo != "" {
		return o.kustRel, 0, 0
	}
	if origin.Path != "" {
		file := joinRel(o.src.rel, filepath.FromSlash(origin.Path))
		if d, ok := bestMatch(o.decoded(file), kind, name, namespace); ok {
			return file, d.Index, d.Line
		}
		return file, 0, 0
	}
	if origin.ConfiguredIn != "" {
		file := joinRel(o.src.rel, filepath.FromSlash(origin.ConfiguredIn))
		return file, 0, o.generatorLine(file, origin.ConfiguredBy.Kind, origin.ConfiguredBy.Name)
	}
	return o.kustRel, 0, 0
}

func (o *originMapper) decoded(file string) []Document {
	if docs, ok := o.files[file]; ok {
		return docs
	}
	docs, _, err := o.src.repo.decodeFile(file, o.src.lim, false)
	if err != nil {
		docs = nil
	}
	o.files[file] = docs
	return docs
}

// bestMatch picks the document a rendered resource came from: same kind,
// and the same name, or else the longest name contained in the rendered one
// (name prefixes and suffixes), preferring the same namespace.
func bestMatch(docs []Document, kind, name, namespace string) (Document, bool) {
	best, bestScore := Document{}, -1
	for _, d := range docs {
		if k, _ := d.Object["kind"].(string); k != kind {
			continue
		}
		md, _ := d.Object["metadata"].(map[string]any)
		n, _ := md["name"].(string)
		ns, _ := md["namespace"].(string)
		score := 0
		switch {
		case n == name:
			score = 4 << 20
		case n != "" && strings.Contains(name, n):
			score = 2<<20 + len(n)
		}
		if ns == namespace {
			score++
		}
		if score > bestScore {
			best, bestScore = d, score
		}
	}
	return best, bestScore >= 0
}

// generatorLine returns the line of the configMapGenerator or
// secretGenerator entry called name in the kustomization file, or 1.
func (o *originMapper) generatorLine(file, generatorKind, name string) int {
	real, err := o.src.repo.resolveRel(file)
	if err != nil {
		return 0
	}
	data, err := readFile(real, o.src.lim.MaxFileBytes)
	if err != nil {
		return 0
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return 1
	}
	key := map[string]string{"ConfigMapGenerator": "configMapGenerator", "SecretGenerator": "secretGenerator", helmGenerator: helmChartsField}[generatorKind]
	top := deref(doc.Content[0])
	k, v := mapEntry(top, key, 0)
	if k == nil {
		return 1
	}
	if v = deref(v); v.Kind == yaml.SequenceNode {
		for _, item := range v.Content {
			if nk, _ := mapEntry(deref(item), "name", 0); nk != nil && scalarField(deref(item), "name") == name {
				return deref(item).Line
			}
		}
	}
	return k.Line
}
