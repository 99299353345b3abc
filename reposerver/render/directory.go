package render

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// manifestExts are the file extensions read from a plain directory.
var manifestExts = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// skipMarker in a file of a plain directory leaves the file out, as in
// Argo CD.
var skipMarker = []byte("+argocd:skip-file-rendering")

// IsManifestFile reports whether a file of this name is decoded as
// manifests from a plain directory (.yaml, .yml or .json, case-sensitive as
// in Argo CD); tollgate test walks directories with the same list.
func IsManifestFile(name string) bool {
	return manifestExts[filepath.Ext(name)]
}

// IsJsonnetFile reports whether a plain directory evaluates a file of this
// name as Jsonnet (.jsonnet; .libsonnet files are only imported).
func IsJsonnetFile(name string) bool {
	return filepath.Ext(name) == jsonnetExt
}

// directory reads the manifests of a plain directory source like Argo CD:
// .yaml, .yml and .json files decoded (every file but .jsonnet ones with
// DisableExtensionFilter) and .jsonnet files evaluated,
// subdirectories only with Recurse (symlinked directories are not
// followed), filtered by the Exclude and then the Include pattern matched
// against the path relative to the application directory; a file holding
// "+argocd:skip-file-rendering" is left out. Documents come in lexical file
// order.
func (s source) directory(ctx context.Context) ([]Document, []Note, error) {
	var o DirectoryOptions
	if s.opts.Directory != nil {
		o = *s.opts.Directory
	}
	include, err := compileGlob(o.Include)
	if err != nil {
		return nil, nil, fmt.Errorf("include: %w", err)
	}
	exclude, err := compileGlob(o.Exclude)
	if err != nil {
		return nil, nil, fmt.Errorf("exclude: %w", err)
	}
	var docs []Document
	var notes []Note
	err = filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != s.dir && (!o.Recurse || d.Name() == ".git") {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !o.DisableExtensionFilter && !IsManifestFile(name) && !IsJsonnetFile(name) {
			return nil
		}
		rel, err := filepath.Rel(s.dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if exclude != nil && exclude.MatchString(rel) {
			return nil
		}
		if include != nil && !include.MatchString(rel) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			// A symlink to a directory is not followed (as filepath.Walk).
			if real, err := filepath.EvalSymlinks(p); err == nil && isDir(real) {
				return nil
			}
		}
		fileRel := joinRel(s.rel, rel)
		real, _, err := s.repo.resolve(fileRel)
		if err != nil {
			return &DecodeError{File: fileRel, Index: -1, Err: err}
		}
		data, err := readFile(real, s.lim.MaxFileBytes)
		if err != nil {
			return &DecodeError{File: fileRel, Index: -1, Err: err}
		}
		if bytes.Contains(data, skipMarker) {
			return nil
		}
		var ds []Document
		var ns []Note
		if IsJsonnetFile(name) {
			ds, err = s.jsonnet(ctx, real, fileRel)
		} else {
			ds, ns, err = Decode(fileRel, data, s.lim)
		}
		if err != nil {
			return err
		}
		docs = append(docs, ds...)
		notes = append(notes, ns...)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return docs, notes, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// HasJsonnet reports whether rendering dir as a plain directory with opts
// would evaluate a .jsonnet file (before include and exclude), reading
// nothing but directory entries. A directory that cannot be read is
// reported as having Jsonnet, so that the caller renders it where Jsonnet
// would run.
func HasJsonnet(root, dir string, opts Options) bool {
	r, err := openRepo(root)
	if err != nil {
		return true
	}
	rel, err := r.clean(dir)
	if err != nil {
		return true
	}
	start, err := r.resolveRel(rel)
	if err != nil {
		return true
	}
	recurse := opts.Directory != nil && opts.Directory.Recurse
	found := false
	err = filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != start && (!recurse || d.Name() == ".git"):
			return filepath.SkipDir
		case !d.IsDir() && IsJsonnetFile(d.Name()):
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found || err != nil
}
