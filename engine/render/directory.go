package render

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// manifestExts are the file extensions read from a plain directory.
var manifestExts = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// IsManifestFile reports whether a file of this name is read as manifests
// from a plain directory (.yaml, .yml or .json, case-sensitive as in Argo
// CD); tollgate test walks directories with the same list.
func IsManifestFile(name string) bool {
	return manifestExts[filepath.Ext(name)]
}

// directory reads the manifests of a plain directory source like Argo CD:
// .yaml, .yml and .json files, subdirectories only with Recurse (symlinked
// directories are not followed), filtered by the Exclude and then the
// Include pattern matched against the path relative to the application
// directory. Documents come in lexical file order.
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
		ext := filepath.Ext(name)
		if !manifestExts[ext] {
			if ext == ".jsonnet" || ext == ".libsonnet" {
				rel, _ := filepath.Rel(s.dir, p)
				notes = append(notes, Note{File: joinRel(s.rel, rel), Index: -1, Message: "skipped: Jsonnet is not supported"})
			}
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
		ds, ns, err := s.repo.decodeFile(joinRel(s.rel, rel), s.lim)
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
