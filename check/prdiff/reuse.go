package prdiff

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/check"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// The head reuses the base's render of an Application when nothing it
// renders from changed: the same Application (every field), no build
// variable that names the commit, and no changed file under any of its
// inputs: each source path in the repository under test with what its
// kustomizations and charts name (check.SourceInputs), and the value files
// and file parameters it names (in that source or, with "$ref/", in a ref
// source of the repository). A source this cannot see through (a plugin,
// Jsonnet, whose imports are code) is rendered again.

// changedFiles lists the slash-separated paths that differ between the
// commit base and the head: the commit head, or the work tree at root
// when head is zero. A path present on one side only is changed.
func changedFiles(repo *git.Repository, base, head plumbing.Hash, root string) (map[string]bool, error) {
	before, err := treeFiles(repo, base)
	if err != nil {
		return nil, err
	}
	var after map[string]plumbing.Hash
	if head.IsZero() {
		after, err = workTreeFiles(root)
	} else {
		after, err = treeFiles(repo, head)
	}
	if err != nil {
		return nil, err
	}
	changed := map[string]bool{}
	for p, h := range before {
		if after[p] != h {
			changed[p] = true
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			changed[p] = true
		}
	}
	return changed, nil
}

// treeFiles maps the files of commit h to their blob hashes.
func treeFiles(repo *git.Repository, h plumbing.Hash) (map[string]plumbing.Hash, error) {
	c, err := repo.CommitObject(h)
	if err != nil {
		return nil, err
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	out := map[string]plumbing.Hash{}
	err = tree.Files().ForEach(func(f *object.File) error {
		out[f.Name] = f.Hash
		return nil
	})
	return out, err
}

// maxHashedFile bounds the work tree files hashed; a larger one counts as
// changed.
const maxHashedFile = 64 << 20

// workTreeFiles maps the files under root (but .git) to the blob hashes
// Git would give them.
func workTreeFiles(root string) (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" && p != root {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || d.IsDir() {
			return err
		}
		var data []byte
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			data = []byte(filepath.ToSlash(target))
		case d.Type().IsRegular():
			if fi, err := d.Info(); err != nil || fi.Size() > maxHashedFile {
				out[filepath.ToSlash(rel)] = plumbing.ZeroHash // counts as changed
				return nil
			}
			if data, err = os.ReadFile(p); err != nil {
				return err
			}
		default:
			return nil
		}
		out[filepath.ToSlash(rel)] = plumbing.ComputeHash(plumbing.BlobObject, data)
		return nil
	})
	return out, err
}

// reuser decides, for the head's check, which of the base's renders stand.
type reuser struct {
	// root is the head's checkout, repoURL the repository under test
	// (normalized), changed the files the change touches.
	root, repoURL string
	changed       map[string]bool
}

// reuse implements check.RenderMemo.Reuse.
func (r reuser) reuse(kept, app map[string]any) bool {
	if !reflect.DeepEqual(kept, app) {
		return false
	}
	if b, err := yaml.Marshal(app); err != nil || bytes.Contains(b, []byte("ARGOCD_APP_REVISION")) {
		return false
	}
	inputs, ok := r.inputs(app)
	if !ok {
		return false
	}
	for c := range r.changed {
		for _, in := range inputs {
			if in == "." || c == in || strings.HasPrefix(c, in+"/") {
				return false
			}
		}
	}
	return true
}

// inputs lists the repository paths app renders from, false when it
// cannot tell.
func (r reuser) inputs(app map[string]any) ([]string, bool) {
	sources, ok := check.ApplicationSources(app)
	if !ok {
		return nil, false
	}
	ours := func(s map[string]any) bool {
		u, _ := s["repoURL"].(string)
		return reposerver.NormalizeURL(u) == r.repoURL
	}
	refs := map[string]bool{}
	for _, s := range sources {
		if ref, _ := s["ref"].(string); ref != "" && ours(s) {
			refs[ref] = true
		}
	}
	var paths []string
	for _, s := range sources {
		if s["plugin"] != nil {
			return nil, false
		}
		p, _ := s["path"].(string)
		dir := ""
		if ours(s) && !(p == "" && (s["chart"] != nil || s["ref"] != nil)) {
			if dir = check.CleanRepoPath(p); dir == "" {
				return nil, false
			}
			in, ok := check.SourceInputs(r.root, dir)
			if !ok {
				return nil, false
			}
			paths = append(paths, in...)
		}
		for _, f := range helmFiles(s) {
			if strings.HasPrefix(f, "$") {
				ref, rest, _ := strings.Cut(f[1:], "/")
				if !refs[ref] {
					continue // another repository's: the same on both sides
				}
				f = rest
			} else if dir != "" {
				f = path.Join(dir, f)
			} else {
				continue // in another repository's source
			}
			if c := check.CleanRepoPath(f); c != "" {
				paths = append(paths, c)
			}
		}
	}
	return paths, true
}

// helmFiles are the value files and file parameters of source s.
func helmFiles(s map[string]any) []string {
	helm, _ := s["helm"].(map[string]any)
	var files []string
	if vf, ok := helm["valueFiles"].([]any); ok {
		for _, f := range vf {
			str, _ := f.(string)
			files = append(files, str)
		}
	}
	if fp, ok := helm["fileParameters"].([]any); ok {
		for _, f := range fp {
			m, _ := f.(map[string]any)
			str, _ := m["path"].(string)
			files = append(files, str)
		}
	}
	return files
}
