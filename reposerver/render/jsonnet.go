package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	jsonnet "github.com/google/go-jsonnet"
)

// JsonnetOptions mirror spec.source.directory.jsonnet. Values arrive with
// Argo CD's build variables already substituted (ApplicationOptions).
type JsonnetOptions struct {
	// TLAs are top-level arguments, ExtVars external variables: a string,
	// or Jsonnet code when Code is set.
	TLAs, ExtVars []JsonnetVar
	// Libs are library directories searched by imports, relative to the
	// repository root ("/lib" is the root's lib too), as in Argo CD.
	Libs []string
}

// JsonnetVar is one top-level argument or external variable.
type JsonnetVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Code  bool   `json:"code,omitempty"`
}

// jsonnetExt is the extension of the files a directory source evaluates;
// .libsonnet files are only imported.
const jsonnetExt = ".jsonnet"

// jsonnet evaluates the .jsonnet file at real (rel, repo-relative) the way
// Argo CD's repo-server does: a VM per file with the source's TLAs and
// external variables, imports searched in the importing file's directory,
// then the libraries from last to first, then the application directory.
// Unlike Argo CD, every import is confined to the repository: a tenant's
// Jsonnet cannot read the renderer's files. The output is an object, an
// array of objects (null entries dropped) or null (nothing).
func (s source) jsonnet(ctx context.Context, real, rel string) ([]Document, error) {
	var o JsonnetOptions
	if s.opts.Directory != nil {
		o = s.opts.Directory.Jsonnet
	}
	imp := &jsonnetImporter{repo: s.repo, max: s.lim.MaxFileBytes, cache: map[string]jsonnetImport{}}
	// Library paths are searched last first, the application directory
	// after them all.
	imp.paths = append(imp.paths, s.dir)
	for _, lib := range o.Libs {
		dir, err := s.jsonnetLib(lib)
		if err != nil {
			return nil, err
		}
		imp.paths = append(imp.paths, dir)
	}
	vm := jsonnet.MakeVM()
	vm.Importer(imp)
	for _, v := range o.TLAs {
		if v.Code {
			vm.TLACode(v.Name, v.Value)
		} else {
			vm.TLAVar(v.Name, v.Value)
		}
	}
	for _, v := range o.ExtVars {
		if v.Code {
			vm.ExtCode(v.Name, v.Value)
		} else {
			vm.ExtVar(v.Name, v.Value)
		}
	}
	var out string
	_, _, err := guarded(ctx, func() ([]Document, []Note, error) {
		var err error
		out, err = vm.EvaluateFile(real)
		return nil, nil, err
	})
	if err != nil {
		return nil, fmt.Errorf("evaluate jsonnet %s: %s", rel, s.relativize(strings.TrimSpace(err.Error())))
	}
	if int64(len(out)) > s.lim.MaxFileBytes {
		return nil, fmt.Errorf("evaluate jsonnet %s: %w: output is %d bytes, limit is %d", rel, ErrFileTooLarge, len(out), s.lim.MaxFileBytes)
	}
	return decodeJsonnetOutput(rel, []byte(out), s.lim)
}

// decodeJsonnetOutput turns Jsonnet's JSON output into documents, each
// array entry its own document.
func decodeJsonnetOutput(rel string, out []byte, lim Limits) ([]Document, error) {
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("decode jsonnet output of %s: %w", rel, err)
	}
	var entries []json.RawMessage
	switch v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		entries = []json.RawMessage{out}
	case []any:
		if err := json.Unmarshal(out, &entries); err != nil {
			return nil, fmt.Errorf("decode jsonnet output of %s: %w", rel, err)
		}
	default:
		return nil, fmt.Errorf("jsonnet %s: output is %s, want an object, an array of objects or null", rel, describe(v))
	}
	var docs []Document
	for i, e := range entries {
		if string(e) == "null" {
			continue
		}
		ds, notes, err := decodeData(rel, e, lim, true, false)
		if err != nil {
			return nil, err
		}
		if len(notes) > 0 {
			return nil, fmt.Errorf("jsonnet %s: entry %d: %s", rel, i, notes[0].Message)
		}
		for j := range ds {
			ds[j].Index, ds[j].Line, ds[j].Rendered, ds[j].Origin, ds[j].node = i, 0, true, KindJsonnet, nil
		}
		docs = append(docs, ds...)
	}
	return docs, nil
}

// jsonnetLib resolves a library directory as Argo CD does: relative to the
// repository root whether it starts with "/" or not, symlinks followed,
// inside the repository. A missing directory is no error (imports just do
// not find anything there).
func (s source) jsonnetLib(lib string) (string, error) {
	rel, err := s.repo.clean(strings.TrimPrefix(lib, "/"))
	if err != nil {
		return "", fmt.Errorf("jsonnet lib %q: %w", lib, err)
	}
	real, err := s.repo.resolveRel(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return filepath.Join(s.repo.root, filepath.FromSlash(rel)), nil
	case err != nil:
		return "", fmt.Errorf("jsonnet lib %q: %w", lib, err)
	}
	return real, nil
}

// jsonnetImporter finds imports like go-jsonnet's FileImporter, confined to
// the repository and to files of at most max bytes.
type jsonnetImporter struct {
	repo repo
	max  int64
	// paths are the library directories, searched last to first.
	paths []string
	cache map[string]jsonnetImport
}

type jsonnetImport struct {
	contents jsonnet.Contents
	found    bool
	err      error
}

// Import implements jsonnet.Importer.
func (i *jsonnetImporter) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	dirs := []string{filepath.Dir(importedFrom)}
	for j := len(i.paths) - 1; j >= 0; j-- {
		dirs = append(dirs, i.paths[j])
	}
	for _, dir := range dirs {
		p := importedPath
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		got := i.read(p)
		if got.err != nil {
			return jsonnet.Contents{}, "", fmt.Errorf("import %q: %w", importedPath, got.err)
		}
		if got.found {
			return got.contents, p, nil
		}
	}
	return jsonnet.Contents{}, "", fmt.Errorf("couldn't open import %q: no match locally or in the Jsonnet library paths", importedPath)
}

// read returns the file at the absolute path p, cached: not found when it
// does not exist, an error when it leaves the repository or is too large.
func (i *jsonnetImporter) read(p string) jsonnetImport {
	if got, ok := i.cache[p]; ok {
		return got
	}
	var got jsonnetImport
	real, _, err := i.repo.resolve(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		got.err = err
	default:
		data, err := readFile(real, i.max)
		if err != nil {
			got.err = err
		} else {
			got.contents, got.found = jsonnet.MakeContentsRaw(data), true
		}
	}
	i.cache[p] = got
	return got
}
