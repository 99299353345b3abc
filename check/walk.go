package check

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/tollgate-dev/tollgate/internal/bounded"
	"github.com/tollgate-dev/tollgate/reposerver/render"
)

// unitKind says what loading a unit does.
type unitKind int

const (
	// unitFile is a file decoded as it is.
	unitFile unitKind = iota
	// unitKustomize is a directory rendered with kustomize.
	unitKustomize
	// unitHelm is a directory rendered with Helm.
	unitHelm
	// unitJsonnet is a .jsonnet file evaluated as a plain directory source
	// evaluates it (no top-level arguments, external variables or libs).
	unitJsonnet
)

// unit is one file or directory tollgate test loads on its own.
type unit struct {
	kind unitKind
	// root is the directory rel is relative to and that rendering may not
	// leave: the repository root, or for a path outside it the path itself
	// (or the directory of a file).
	root string
	// prefix is prepended to root-relative names to report them:
	// "" under the repository root, else the root as the user spelled it.
	prefix string
	// rel is the slash-separated path of the file or directory relative to
	// root.
	rel string
}

// display returns the reported name of name, a slash-separated path
// relative to u.root.
func (u unit) display(name string) string {
	if u.prefix == "" {
		return name
	}
	return path.Join(u.prefix, name)
}

// repoRoot is the repository checkout tollgate test reads, as given and
// with symlinks resolved.
type repoRoot struct {
	given, real string
	// revision is the commit checked out there, "" outside Git: Argo CD's
	// ARGOCD_APP_REVISION when Applications are rendered.
	revision string
}

// openRepoRoot checks that dir is a directory and resolves it.
func openRepoRoot(dir string) (repoRoot, error) {
	given, err := filepath.Abs(dir)
	if err != nil {
		return repoRoot{}, fmt.Errorf("open repository root %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(given)
	if err != nil {
		return repoRoot{}, fmt.Errorf("open repository root: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return repoRoot{}, fmt.Errorf("open repository root: %w", err)
	}
	if !fi.IsDir() {
		return repoRoot{}, fmt.Errorf("open repository root %s: not a directory", dir)
	}
	return repoRoot{given: given, real: real, revision: headRevision(real)}, nil
}

// relTo returns abs relative to base when it is base or inside it.
func relTo(base, abs string) (string, bool) {
	if abs == base {
		return ".", true
	}
	if !strings.HasPrefix(abs, base+string(filepath.Separator)) {
		return "", false
	}
	rel, err := filepath.Rel(base, abs)
	if err != nil {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// discover turns the PATH arguments into the units to load, in argument
// order and, within a directory, in lexical order. A directory is walked
// (skipping .git and hidden directories): a directory with a kustomization
// becomes one kustomize unit and its files are not decoded on their own
// (directories below it are still searched for kustomizations and charts);
// a directory with a Chart.yaml becomes one Helm unit and is not descended
// into; .yaml, .yml and .json files elsewhere become file units, .jsonnet
// files Jsonnet units. A file named explicitly is decoded whatever its
// extension, but for .jsonnet. Paths inside the
// repository root are named relative to it; other paths as given. Notes
// report kustomize components, which are not rendered on their own.
func discover(root repoRoot, paths []string, preferHelm bool) ([]unit, []Note, error) {
	var units []unit
	var notes []Note
	seen := map[string]bool{}
	add := func(u unit) {
		key := fmt.Sprintf("%d\x00%s\x00%s", u.kind, u.root, u.rel)
		if !seen[key] {
			seen[key] = true
			units = append(units, u)
		}
	}
	for _, p := range paths {
		base, err := placePath(root, p)
		if err != nil {
			return nil, nil, err
		}
		fi, err := os.Stat(filepath.Join(base.root, filepath.FromSlash(base.rel)))
		if err != nil {
			return nil, nil, checkPathError(p, err)
		}
		if chart, ok := enclosingChart(base); ok {
			add(chart)
			continue
		}
		if !fi.IsDir() {
			if render.IsJsonnetFile(base.rel) {
				base.kind = unitJsonnet
			}
			add(base)
			continue
		}
		ns, err := walkDir(base, preferHelm, add)
		if err != nil {
			return nil, nil, err
		}
		notes = append(notes, ns...)
	}
	return units, notes, nil
}

// checkPathError reports a file system error about the PATH argument p,
// naming p as the user spelled it rather than the absolute path.
func checkPathError(p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("check %s: %w", p, err)
}

// placePath returns the unit for the PATH argument p, before knowing its
// kind: relative to the repository root when inside it, else rooted at p
// itself (at its directory for a file).
func placePath(root repoRoot, p string) (unit, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return unit{}, fmt.Errorf("check %s: %w", p, err)
	}
	// A symlink to a directory is walked at its target, as walking does not
	// follow symlinks.
	if rel, ok := relTo(root.given, abs); ok && !isSymlinkToDir(abs) {
		return unit{root: root.given, rel: rel}, nil
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return unit{}, checkPathError(p, err)
	}
	if rel, ok := relTo(root.real, real); ok {
		return unit{root: root.real, rel: rel}, nil
	}
	fi, err := os.Stat(real)
	if err != nil {
		return unit{}, checkPathError(p, err)
	}
	given := filepath.ToSlash(filepath.Clean(p))
	if fi.IsDir() {
		return unit{root: real, prefix: given, rel: "."}, nil
	}
	return unit{root: filepath.Dir(real), prefix: path.Dir(given), rel: filepath.Base(real)}, nil
}

// enclosingChart returns a Helm unit for the chart that contains the file
// or directory unit u below its top directory (such as a chart's templates/
// directory or values.yaml), which is never decoded on its own.
func enclosingChart(u unit) (unit, bool) {
	for rel := u.rel; rel != "." && rel != "/"; {
		rel = path.Dir(rel)
		if fileExists(filepath.Join(u.root, filepath.FromSlash(rel), "Chart.yaml")) {
			return unit{kind: unitHelm, root: u.root, prefix: u.prefix, rel: rel}, true
		}
	}
	return unit{}, false
}

// walkDir walks the directory unit base and adds the units found.
func walkDir(base unit, preferHelm bool, add func(unit)) ([]Note, error) {
	start := filepath.Join(base.root, filepath.FromSlash(base.rel))
	var notes []Note
	// rendered holds the directories whose files a kustomization renders.
	rendered := map[string]bool{}
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walk %s: %w", base.display(relName(base, start, p)), err)
		}
		rel := relName(base, start, p)
		if !d.IsDir() {
			kind := unitFile
			switch {
			case rendered[filepath.Dir(p)]:
				return nil
			case render.IsJsonnetFile(p):
				kind = unitJsonnet
			case !render.IsManifestFile(p):
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 && isDir(p) {
				return nil // symlinked directories are not followed
			}
			add(unit{kind: kind, root: base.root, prefix: base.prefix, rel: rel})
			return nil
		}
		if p != start && (d.Name() == ".git" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		rendered[p] = rendered[filepath.Dir(p)]
		kust := kustomizationFile(p)
		hasChart := fileExists(filepath.Join(p, "Chart.yaml"))
		switch {
		case hasChart && (kust == "" || preferHelm):
			add(unit{kind: unitHelm, root: base.root, prefix: base.prefix, rel: rel})
			return filepath.SkipDir
		case kust != "":
			rendered[p] = true
			if isComponent(kust) {
				notes = append(notes, Note{File: base.display(path.Join(rel, filepath.Base(kust))),
					Message: "skipped: a kustomize Component is rendered only as part of a kustomization that uses it"})
				return nil
			}
			add(unit{kind: unitKustomize, root: base.root, prefix: base.prefix, rel: rel})
		}
		return nil
	})
	return notes, err
}

// relName returns the slash-separated name of p (under start) relative to
// base.root.
func relName(base unit, start, p string) string {
	r, err := filepath.Rel(start, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return path.Join(base.rel, filepath.ToSlash(r))
}

// kustomizationFile returns the kustomization file in dir, or "".
func kustomizationFile(dir string) string {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if p := filepath.Join(dir, n); fileExists(p) {
			return p
		}
	}
	return ""
}

// isComponent reports whether the kustomization file at p declares
// kind: Component. A file that cannot be read or parsed is not a component:
// rendering it reports the problem.
func isComponent(p string) bool {
	data, err := bounded.ReadFile(p, maxKustomizationBytes)
	if err != nil {
		return false
	}
	var k struct {
		Kind string `yaml:"kind"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return false
	}
	return k.Kind == "Component"
}

// maxKustomizationBytes bounds the read of a kustomization file when
// checking for components.
const maxKustomizationBytes = 1 << 20

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

func isSymlinkToDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0 && isDir(p)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
