package render

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"
)

// chartFiles reads the chart in the source directory like Helm's
// loader.LoadDir (.helmignore honoured, symlinks followed, byte order marks
// dropped) but confined to the repository: a symlink out of it is an error.
// Reads are bounded per file by the file size limit and in total by Helm's
// own chart size limit.
func (s source) chartFiles() ([]*loader.BufferedFile, error) {
	rules := ignore.Empty()
	if data, err := readFile(filepath.Join(s.dir, ignore.HelmIgnore), s.lim.MaxFileBytes); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("read %s: %w", joinRel(s.rel, ignore.HelmIgnore), err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", joinRel(s.rel, ignore.HelmIgnore), err)
	}
	rules.AddDefaults()

	w := chartWalker{src: s, rules: rules, budget: loader.MaxDecompressedChartSize, ancestors: map[string]bool{}}
	if err := w.walk(s.dir, ""); err != nil {
		return nil, err
	}
	for _, d := range s.opts.ChartDependencies {
		if err := w.dependency(d); err != nil {
			return nil, err
		}
	}
	return w.files, nil
}

// dependency adds a fetched dependency under charts/.
func (w *chartWalker) dependency(d ChartDependency) error {
	if d.Dir != "" {
		real, _, err := w.src.repo.resolve(d.Dir)
		if err != nil {
			return fmt.Errorf("chart dependency %s in %s: %w", d.Name, d.Dir, err)
		}
		return w.walk(real, path.Join("charts", d.Name))
	}
	data, err := readFile(d.Archive, w.budget)
	if err != nil {
		return fmt.Errorf("chart dependency %s: %w", d.Name, err)
	}
	if w.budget -= int64(len(data)); w.budget < 0 {
		return fmt.Errorf("read chart: %w: the chart is larger than %d bytes", ErrFileTooLarge, loader.MaxDecompressedChartSize)
	}
	w.files = append(w.files, &loader.BufferedFile{Name: path.Join("charts", filepath.Base(d.Archive)), Data: data})
	return nil
}

type chartWalker struct {
	src       source
	rules     *ignore.Rules
	budget    int64
	ancestors map[string]bool
	files     []*loader.BufferedFile
}

// walk reads the directory real, whose path inside the chart is name.
func (w *chartWalker) walk(real, name string) error {
	w.ancestors[real] = true
	defer delete(w.ancestors, real)
	entries, err := os.ReadDir(real)
	if err != nil {
		return fmt.Errorf("read chart directory %s: %w", joinRel(w.src.rel, name), err)
	}
	for _, e := range entries {
		n := path.Join(name, e.Name())
		rel := joinRel(w.src.rel, n)
		target := filepath.Join(real, e.Name())
		if e.Type()&fs.ModeSymlink != 0 {
			t, err := filepath.EvalSymlinks(target)
			if err != nil {
				return fmt.Errorf("read chart file %s: %w", rel, err)
			}
			if !w.src.repo.within(t) {
				return fmt.Errorf("read chart file %s: symlink target is %w", rel, ErrOutsideRoot)
			}
			target = t
		}
		fi, err := os.Stat(target)
		if err != nil {
			return fmt.Errorf("read chart file %s: %w", rel, err)
		}
		if w.rules.Ignore(n, fi) {
			continue
		}
		if fi.IsDir() {
			if w.ancestors[target] {
				continue // a symlink loop
			}
			if err := w.walk(target, n); err != nil {
				return err
			}
			continue
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("read chart file %s: cannot load irregular file", rel)
		}
		data, err := readFile(target, w.src.lim.MaxFileBytes)
		if err != nil {
			return fmt.Errorf("read chart file %s: %w", rel, err)
		}
		if w.budget -= int64(len(data)); w.budget < 0 {
			return fmt.Errorf("read chart: %w: the chart is larger than %d bytes", ErrFileTooLarge, loader.MaxDecompressedChartSize)
		}
		w.files = append(w.files, &loader.BufferedFile{Name: n, Data: bytes.TrimPrefix(data, utf8BOM)})
	}
	return nil
}

// chartLayout maps the paths Helm gives templates ("app/charts/db/templates/
// x.yaml": chart names, aliases applied) to the files in the repository
// (subchart directories are named freely, and may be archives).
type chartLayout struct {
	// dirs maps a chart's name path ("" for the top chart, "/charts/db"
	// for a subchart) to its repo-relative directory, or archive file.
	dirs     map[string]string
	archives map[string]bool
	// aliases maps a name path to its dependencies' alias -> chart name.
	aliases map[string]map[string]string
}

type chartMeta struct {
	Name         string `yaml:"name"`
	Dependencies []struct {
		Name  string `yaml:"name"`
		Alias string `yaml:"alias"`
	} `yaml:"dependencies"`
}

// newChartLayout builds the layout of the chart whose files (named relative
// to the chart directory rel) are given.
func newChartLayout(rel string, files []*loader.BufferedFile) chartLayout {
	l := chartLayout{dirs: map[string]string{"": rel}, archives: map[string]bool{}, aliases: map[string]map[string]string{}}
	byDir := map[string]string{"": ""} // chart directory -> name path
	var metas []*loader.BufferedFile
	for _, f := range files {
		if path.Base(f.Name) == "Chart.yaml" {
			metas = append(metas, f)
		}
	}
	// Parents before children.
	sort.Slice(metas, func(i, j int) bool { return len(metas[i].Name) < len(metas[j].Name) })
	for _, f := range metas {
		dir := path.Dir(f.Name)
		if dir == "." {
			dir = ""
		}
		var m chartMeta
		if yaml.Unmarshal(f.Data, &m) != nil {
			continue
		}
		np, ok := "", dir == ""
		if !ok {
			parent, seg, found := cutLast(dir, "/charts/")
			if !found && strings.HasPrefix(dir, "charts/") && !strings.Contains(strings.TrimPrefix(dir, "charts/"), "/") {
				parent, seg, found = "", strings.TrimPrefix(dir, "charts/"), true
			}
			pnp, known := byDir[parent]
			if !found || !known || seg == "" {
				continue
			}
			np = pnp + "/charts/" + m.Name
			l.dirs[np] = joinRel(rel, dir)
		}
		byDir[dir] = np
		for _, d := range m.Dependencies {
			if d.Alias != "" {
				if l.aliases[np] == nil {
					l.aliases[np] = map[string]string{}
				}
				l.aliases[np][d.Alias] = d.Name
			}
		}
	}
	for _, f := range files {
		if path.Ext(f.Name) != ".tgz" {
			continue
		}
		parent, _, found := cutLast(path.Dir(f.Name)+"/", "/charts/")
		if path.Dir(f.Name) == "charts" {
			parent, found = "", true
		}
		pnp, known := byDir[parent]
		if !found || !known {
			continue
		}
		sub, err := loader.LoadArchive(bytes.NewReader(f.Data))
		if err != nil || sub.Metadata == nil {
			continue
		}
		np := pnp + "/charts/" + sub.Name()
		l.dirs[np] = joinRel(rel, f.Name)
		l.archives[np] = true
	}
	return l
}

// cutLast splits s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], strings.TrimSuffix(s[i+len(sep):], "/"), true
}

// file returns the repo-relative file for a Helm template path. Templates
// of a packaged subchart map to its archive.
func (l chartLayout) file(p string) string {
	_, rest, _ := strings.Cut(p, "/") // drop the top chart's name
	np := ""
	for strings.HasPrefix(rest, "charts/") {
		seg, after, _ := strings.Cut(strings.TrimPrefix(rest, "charts/"), "/")
		name := seg
		if a, ok := l.aliases[np][seg]; ok {
			name = a
		}
		next := np + "/charts/" + name
		if _, ok := l.dirs[next]; !ok {
			break
		}
		np, rest = next, after
		if l.archives[np] {
			return l.dirs[np]
		}
	}
	return joinRel(l.dirs[np], rest)
}
