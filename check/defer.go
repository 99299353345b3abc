package check

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/render"
)

// A kustomization or chart directory that an Application renders from its
// path is checked as that Application's render, and its walked copy is
// dropped (claims). Rendering it as a walked unit first would double the
// renders of a typical Argo CD repository, so such a directory waits: the
// files are loaded first, and a directory named as a source path by an
// Application among them is rendered as a walked unit only if, in the end,
// no Application claimed it. A directory whose inputs (SourceInputs) hold
// Argo CD's own kinds (Applications, ApplicationSets, AppProjects) or
// cluster Secrets never waits: the walk must see those, as ApplicationSets
// are generated and projects known from the walked copies.

// unitLoader loads units with the run's settings.
type unitLoader struct {
	helmValues map[string]any
	build      buildFunc
	bases      basesFunc
	lim        render.Limits
}

func (ld unitLoader) load(ctx context.Context, units []unit) ([]loadedUnit, error) {
	return loadUnits(ctx, units, ld.helmValues, ld.build, ld.bases, ld.lim)
}

// loadWalked loads units, in unit order, but for the directories that wait
// for the Applications (pending set, nothing loaded).
func (ld unitLoader) loadWalked(ctx context.Context, root repoRoot, repoURL string, units []unit) ([]loadedUnit, error) {
	var files, dirs []int
	for i, u := range units {
		if u.kind == unitFile {
			files = append(files, i)
		} else {
			dirs = append(dirs, i)
		}
	}
	out := make([]loadedUnit, len(units))
	place := func(idx []int) error {
		sub := make([]unit, len(idx))
		for j, i := range idx {
			sub[j] = units[i]
		}
		loaded, err := ld.load(ctx, sub)
		for j, i := range idx {
			if err == nil {
				out[i] = loaded[j]
			}
		}
		return err
	}
	if err := place(files); err != nil {
		return nil, err
	}
	named := sourcePaths(out, repoURL)
	var now []int
	for _, i := range dirs {
		u := units[i]
		if u.kind != unitJsonnet && (u.root == root.given || u.root == root.real) && named[u.rel] && !holdsArgoKinds(u.root, u.rel) {
			out[i] = loadedUnit{unit: u, pending: true}
			continue
		}
		now = append(now, i)
	}
	if err := place(now); err != nil {
		return nil, err
	}
	return out, nil
}

// loadUnclaimed loads the pending units no Application claimed.
func (ld unitLoader) loadUnclaimed(ctx context.Context, root repoRoot, cl claims, loaded []loadedUnit) error {
	var idx []int
	var units []unit
	for i, l := range loaded {
		if l.pending && !cl.claimsUnit(root, l.unit) {
			idx = append(idx, i)
			units = append(units, l.unit)
		}
	}
	if len(units) == 0 {
		return nil
	}
	late, err := ld.load(ctx, units)
	if err != nil {
		return err
	}
	for j, i := range idx {
		loaded[i] = late[j]
	}
	return nil
}

// sourcePaths are the source paths in the repository under test that the
// Applications among the loaded units name.
func sourcePaths(loaded []loadedUnit, repoURL string) map[string]bool {
	out := map[string]bool{}
	if repoURL == "" {
		return out
	}
	for _, l := range loaded {
		for _, e := range l.entries {
			if !isKind(e.doc.Object, "argoproj.io", "Application") {
				continue
			}
			sources, _ := ApplicationSources(e.doc.Object)
			for _, s := range sources {
				u, _ := s["repoURL"].(string)
				p, _ := s["path"].(string)
				if p != "" && reposerver.NormalizeURL(u) == repoURL {
					if c := CleanRepoPath(p); c != "" {
						out[c] = true
					}
				}
			}
		}
	}
	return out
}

// argoMarkers are what the files of a directory whose walked copy matters
// hold: the API version of Argo CD's kinds, or a cluster Secret's label.
var argoMarkers = [][]byte{[]byte("argoproj.io/v1alpha1"), []byte("argocd.argoproj.io/secret-type")}

// maxScannedFile and maxScannedFiles bound what holdsArgoKinds reads: a
// larger file, or more files, count as holding them.
const (
	maxScannedFile  = 4 << 20
	maxScannedFiles = 10000
)

// holdsArgoKinds reports whether the inputs of the directory dir under
// root may hold Argo CD's own kinds or cluster Secrets; true when it
// cannot tell.
func holdsArgoKinds(root, dir string) bool {
	inputs, ok := SourceInputs(root, dir)
	if !ok {
		return true
	}
	found, files := false, 0
	for _, in := range inputs {
		err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(in)), func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // named, not there: nothing to read
			}
			if err != nil || found {
				return err
			}
			if !d.Type().IsRegular() {
				return nil // links are not followed: SourceInputs kept the inputs inside
			}
			files++
			fi, err := d.Info()
			if err != nil || fi.Size() > maxScannedFile || files > maxScannedFiles {
				found = true
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range argoMarkers {
				if bytes.Contains(data, m) {
					found = true
				}
			}
			return nil
		})
		if err != nil || found {
			return true
		}
	}
	return false
}
