package check

import (
	"context"
	"errors"
	"fmt"
	"path"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/tollgate-dev/tollgate/internal/bounded"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/reposerver/render"
	"github.com/tollgate-dev/tollgate/reposerver/server"
)

// Note is a remark about input that was skipped rather than rejected.
// tollgate test prints notes to stderr with its text report; other formats
// leave them out.
type Note struct {
	// File is the reported file name, "" when the note is about the run.
	File string
	// Line is the 1-based line, 0 when unknown.
	Line    int
	Message string
}

// String formats the note as "file:line: message".
func (n Note) String() string {
	switch {
	case n.File == "":
		return n.Message
	case n.Line > 0:
		return n.File + ":" + strconv.Itoa(n.Line) + ": " + n.Message
	default:
		return n.File + ": " + n.Message
	}
}

// entry is one document to evaluate.
type entry struct {
	doc render.Document
	// root is the directory doc.File is relative to.
	root string
	// file is the name reported for doc.File.
	file string
	// app is the Application that rendered the document, nil for a
	// document read from a walked path.
	app map[string]any
	// appName is app's metadata.name.
	appName string
}

// loadedUnit is the outcome of loading one unit.
type loadedUnit struct {
	unit    unit
	entries []entry
	notes   []Note
	// pending is a directory not loaded yet: it waits for the
	// Applications (defer.go).
	pending bool
	// err is why the unit could not be decoded or rendered; the run
	// reports it as an error result and judges the other units.
	err error
}

// basesFunc returns render options with what a kustomization fetches
// (its remote bases, the charts of its helmCharts), with
// server.Service.FetchRemote's signature.
type basesFunc func(ctx context.Context, root, dir string, opts render.Options) (render.Options, error)

// loadUnits decodes or renders the units concurrently, with up to
// GOMAXPROCS at once, and returns them in unit order. helmValues are the
// merged --helm-values for the charts found by walking; bases fetches the
// remote bases of kustomizations (nil: none are). A unit that fails keeps
// its error (loadedUnit.err); the error returned is ctx's.
func loadUnits(ctx context.Context, units []unit, helmValues map[string]any, build buildFunc, bases basesFunc, lim render.Limits) ([]loadedUnit, error) {
	out := make([]loadedUnit, len(units))
	err := forEach(ctx, len(units), func(ctx context.Context, i int) error {
		l, err := loadUnit(ctx, units[i], helmValues, build, bases, lim)
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		l.err = err
		out[i] = l
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// loadUnit decodes a file unit or renders a directory unit. A
// kustomization with a remote base that is not fetched
// (*server.UnservedBaseError) renders nothing and gets a note.
func loadUnit(ctx context.Context, u unit, helmValues map[string]any, build buildFunc, bases basesFunc, lim render.Limits) (loadedUnit, error) {
	l := loadedUnit{unit: u}
	var docs []render.Document
	var notes []render.Note
	switch u.kind {
	case unitFile:
		var err error
		docs, notes, err = render.DecodeFile(u.root, u.rel, lim)
		if err != nil {
			var de *render.DecodeError
			if errors.As(err, &de) {
				de.File = u.display(de.File)
				return l, de
			}
			return l, fmt.Errorf("%s: %w", u.display(u.rel), err)
		}
	default:
		var opts render.Options
		dir := u.rel
		switch {
		case u.kind == unitHelm && helmValues != nil:
			opts.Helm = &render.HelmOptions{ValuesObject: helmValues}
		case u.kind == unitJsonnet:
			// The file alone, as its directory would render it.
			dir = path.Dir(u.rel)
			opts.Directory = &render.DirectoryOptions{Include: render.QuoteGlob(path.Base(u.rel))}
		}
		wrap := func(err error) error {
			if u.prefix != "" {
				return fmt.Errorf("%s: %w", u.prefix, err)
			}
			return err
		}
		if u.kind == unitKustomize && bases != nil {
			fetched, err := bases(ctx, u.root, dir, opts)
			var ub *server.UnservedBaseError
			if errors.As(err, &ub) {
				l.notes = append(l.notes, Note{File: u.display(ub.File), Line: ub.Line, Message: baseNote(ub, "")})
				return l, nil
			}
			if err != nil {
				return l, wrap(err)
			}
			opts = fetched
		}
		res, err := build(ctx, u.root, dir, opts, lim)
		if err != nil {
			return l, wrap(err)
		}
		docs, notes = res.Documents, res.Notes
	}
	l.entries = make([]entry, len(docs))
	for i, d := range docs {
		l.entries[i] = entry{doc: d, root: u.root, file: u.display(d.File)}
	}
	for _, n := range notes {
		l.notes = append(l.notes, Note{File: u.display(n.File), Line: n.Line, Message: n.Message})
	}
	return l, nil
}

// forEach calls fn for every index in [0, n) on up to GOMAXPROCS
// goroutines, in index order. After a call fails no new call starts; calls
// already running finish. It returns the error of the lowest index that
// failed, which does not depend on scheduling: every index below a started
// one was started too.
func forEach(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[i] = err
					failed.Store(true)
					return
				}
				if err := fn(ctx, i); err != nil {
					errs[i] = err
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// loadHelmValues reads the --helm-values files and merges them in order,
// like `helm template -f a.yaml -f b.yaml`. It returns nil for no files.
func loadHelmValues(files []string, lim render.Limits) (map[string]any, error) {
	if len(files) == 0 {
		return nil, nil
	}
	merged := map[string]any{}
	for _, f := range files {
		data, err := bounded.ReadFile(f, lim.MaxFileBytes)
		if err != nil {
			return nil, fmt.Errorf("read helm values: %w", err)
		}
		vals, err := chartutil.ReadValues(data)
		if err != nil {
			return nil, fmt.Errorf("read helm values %s: %w", f, err)
		}
		merged = render.MergeValues(merged, vals)
	}
	return merged, nil
}

// loadProjects reads the AppProjects in the --project files. A file without
// an AppProject is an error: the flag names project files.
func loadProjects(files []string, lim render.Limits) ([]map[string]any, error) {
	var out []map[string]any
	for _, f := range files {
		data, err := bounded.ReadFile(f, lim.MaxFileBytes)
		if err != nil {
			return nil, fmt.Errorf("read project: %w", err)
		}
		docs, _, err := render.Decode(f, data, lim)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, d := range docs {
			if isKind(d.Object, "argoproj.io", "AppProject") {
				out = append(out, d.Object)
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("read project %s: no AppProject (argoproj.io) in the file", f)
		}
	}
	return out, nil
}

// isKind reports whether obj has the given API group and kind.
func isKind(obj map[string]any, group, kind string) bool {
	k, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	return k == kind && policies.GroupOf(apiVersion) == group
}

// nestedString returns the string at path inside obj.
func nestedString(obj map[string]any, path ...string) (string, bool) {
	cur := obj
	for i, p := range path {
		if i == len(path)-1 {
			s, ok := cur[p].(string)
			return s, ok
		}
		next, ok := cur[p].(map[string]any)
		if !ok {
			return "", false
		}
		cur = next
	}
	return "", false
}
