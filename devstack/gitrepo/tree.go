package gitrepo

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// tree is a Git tree flattened: slash-separated path to a non-directory
// entry (file, executable, symbolic link or submodule).
type tree map[string]entry

type entry struct {
	mode filemode.FileMode
	hash plumbing.Hash
}

// changedPaths returns the paths whose entries differ between a and b,
// sorted.
func changedPaths(a, b tree) []string {
	var out []string
	for p, e := range a {
		if f, ok := b[p]; !ok || f != e {
			out = append(out, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// flatten adds the entries of the tree h to out, their paths prefixed.
func flatten(st storer.EncodedObjectStorer, h plumbing.Hash, prefix string, out tree) error {
	t, err := object.GetTree(st, h)
	if err != nil {
		return fmt.Errorf("read tree %s %q: %w", h, prefix, err)
	}
	for _, e := range t.Entries {
		p := e.Name
		if prefix != "" {
			p = prefix + "/" + e.Name
		}
		if e.Mode == filemode.Dir {
			if err := flatten(st, e.Hash, p, out); err != nil {
				return err
			}
			continue
		}
		out[p] = entry{mode: e.Mode, hash: e.Hash}
	}
	return nil
}

// writeBlob stores data as a blob and returns its hash.
func writeBlob(st storer.EncodedObjectStorer, data []byte) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// writeTree stores the trees of t and returns the hash of the root one.
func writeTree(st storer.EncodedObjectStorer, t tree) (plumbing.Hash, error) {
	root := &dirNode{}
	for _, p := range slices.Sorted(maps.Keys(t)) {
		if err := root.insert(p, t[p]); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return root.write(st)
}

// dirNode is a directory of a tree being written.
type dirNode struct {
	files map[string]entry
	dirs  map[string]*dirNode
}

func (d *dirNode) insert(p string, e entry) error {
	elems := strings.Split(p, "/")
	for i, name := range elems[:len(elems)-1] {
		if _, ok := d.files[name]; ok {
			return fmt.Errorf("paths %s and %s: a path cannot be both a file and a directory", strings.Join(elems[:i+1], "/"), p)
		}
		next := d.dirs[name]
		if next == nil {
			next = &dirNode{}
			if d.dirs == nil {
				d.dirs = map[string]*dirNode{}
			}
			d.dirs[name] = next
		}
		d = next
	}
	name := elems[len(elems)-1]
	if _, ok := d.dirs[name]; ok {
		return fmt.Errorf("path %s: a path cannot be both a file and a directory", p)
	}
	if d.files == nil {
		d.files = map[string]entry{}
	}
	d.files[name] = e
	return nil
}

func (d *dirNode) write(st storer.EncodedObjectStorer) (plumbing.Hash, error) {
	entries := make([]object.TreeEntry, 0, len(d.files)+len(d.dirs))
	for name, e := range d.files {
		entries = append(entries, object.TreeEntry{Name: name, Mode: e.mode, Hash: e.hash})
	}
	for name, sub := range d.dirs {
		h, err := sub.write(st)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	sort.Sort(object.TreeEntrySorter(entries))
	obj := st.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode tree: %w", err)
	}
	return st.SetEncodedObject(obj)
}
