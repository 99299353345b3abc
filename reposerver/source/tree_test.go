package source

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
)

// objects builds Git objects in memory, including trees git itself would
// refuse to create.
type objects struct {
	t *testing.T
	s *memory.Storage
}

func (o objects) blob(content string) plumbing.Hash {
	obj := o.s.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		o.t.Fatal(err)
	}
	if _, err := w.Write([]byte(content)); err != nil {
		o.t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		o.t.Fatal(err)
	}
	h, err := o.s.SetEncodedObject(obj)
	if err != nil {
		o.t.Fatal(err)
	}
	return h
}

func (o objects) tree(entries ...object.TreeEntry) plumbing.Hash {
	obj := o.s.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		o.t.Fatal(err)
	}
	h, err := o.s.SetEncodedObject(obj)
	if err != nil {
		o.t.Fatal(err)
	}
	return h
}

func file(name string, h plumbing.Hash) object.TreeEntry {
	return object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}
}

func TestWriteTree(t *testing.T) {
	o := objects{t: t, s: memory.NewStorage()}
	a := o.blob("a\n")
	sub := o.tree(file("inner.yaml", a))
	tests := []struct {
		name      string
		entries   []object.TreeEntry
		wantErr   error
		wantFiles map[string]string
	}{
		{"nested", []object.TreeEntry{file("a.yaml", a), {Name: "dir", Mode: filemode.Dir, Hash: sub}}, nil,
			map[string]string{"a.yaml": "a\n", "dir/inner.yaml": "a\n"}},
		{"submodule skipped", []object.TreeEntry{file("a.yaml", a), {Name: "mod", Mode: filemode.Submodule, Hash: plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")}}, nil,
			map[string]string{"a.yaml": "a\n"}},
		{"dot dot", []object.TreeEntry{file("..", a)}, ErrInvalidTree, nil},
		{"dot", []object.TreeEntry{file(".", a)}, ErrInvalidTree, nil},
		{"slash in name", []object.TreeEntry{file("../../etc/x", a)}, ErrInvalidTree, nil},
		{"backslash in name", []object.TreeEntry{file(`..\x`, a)}, ErrInvalidTree, nil},
		{"git dir", []object.TreeEntry{{Name: ".GIT", Mode: filemode.Dir, Hash: sub}}, ErrInvalidTree, nil},
		{"duplicate file", []object.TreeEntry{file("a", a), file("a", a)}, ErrInvalidTree, nil},
		{"file and directory", []object.TreeEntry{file("a", a), {Name: "a", Mode: filemode.Dir, Hash: sub}}, ErrInvalidTree, nil},
		{"huge link target", []object.TreeEntry{{Name: "l", Mode: filemode.Symlink, Hash: o.blob(strings.Repeat("a/", 3000))}}, ErrInvalidTree, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tree, err := object.GetTree(o.s, o.tree(tt.entries...))
			if err != nil {
				t.Fatal(err)
			}
			w := &treeWriter{root: root, storer: o.s, log: logr.Discard(), bytesLeft: 1 << 20, filesLeft: 100, maxBytes: 1 << 20, maxFiles: 100}
			err = w.writeTree(t.Context(), tree, "")
			if err == nil {
				err = w.writeLinks()
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if _, serr := os.Stat(filepath.Join(filepath.Dir(root), "etc")); serr == nil {
					t.Errorf("a file was written outside the root")
				}
				return
			}
			if diff := cmp.Diff(tt.wantFiles, readTree(t, root)); diff != "" {
				t.Errorf("files mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteTreeModes(t *testing.T) {
	o := objects{t: t, s: memory.NewStorage()}
	h := o.blob("#!/bin/sh\n")
	tree, err := object.GetTree(o.s, o.tree(
		file("plain", h),
		object.TreeEntry{Name: "run.sh", Mode: filemode.Executable, Hash: h},
	))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	w := &treeWriter{root: root, storer: o.s, log: logr.Discard(), bytesLeft: 1 << 20, filesLeft: 10, maxBytes: 1 << 20, maxFiles: 10}
	if err := w.writeTree(t.Context(), tree, ""); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{"plain": 0o444, "run.sh": 0o555} {
		fi, err := os.Stat(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s mode = %o, want %o", name, got, want)
		}
	}
}

func TestLinkInside(t *testing.T) {
	tests := []struct {
		rel, target string
		want        bool
	}{
		{"a", "b", true},
		{"a", ".", true},
		{"dir/a", "..", true},
		{"dir/a", "../b", true},
		{"a", "..", false},
		{"a", "../b", false},
		{"dir/a", "../../b", false},
		{"a", "/etc/passwd", false},
		{"a", `\\server\share`, false},
		{"a", `C:\Windows`, false},
		{"a", "", false},
		{"a", "b\x00c", false},
	}
	for _, tt := range tests {
		if got := linkInside(tt.rel, tt.target); got != tt.want {
			t.Errorf("linkInside(%q, %q) = %v, want %v", tt.rel, tt.target, got, tt.want)
		}
	}
}
