package check

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/policies/report"
	"github.com/tollgate-dev/tollgate/reposerver/render"
)

// unitFailure is the error result of a walked file or directory that
// could not be decoded or rendered: at the file, document and line a
// decode error names, else at the unit.
func unitFailure(l loadedUnit) report.Result {
	res := report.Result{File: l.unit.display(l.unit.rel)}
	var de *render.DecodeError
	if errors.As(l.err, &de) {
		res.File, res.Document, res.Line = de.File, max(de.Index, 0), de.Line
	}
	res.Error = strings.TrimPrefix(l.err.Error(), res.File+": ")
	return res
}

// buildResults appends to results the report results of the decisions
// about entries, one per entry in entry order, pointing every violation at
// the line a reviewer edits (see fieldLines). Results that repeat an
// earlier one exactly (a kustomize base rendered unchanged by two overlays,
// say) are dropped; seen holds the encoded results so far, across calls.
// keep, when not nil, is given each result kept with its object.
func buildResults(ctx context.Context, results []report.Result, seen map[string]bool, entries []entry, decisions []policies.Decision, lim render.Limits, keep func(report.Result, map[string]any)) ([]report.Result, error) {
	lines, err := fieldLines(ctx, entries, decisions, lim)
	if err != nil {
		return nil, err
	}
	for i, e := range entries {
		obj := e.doc.Object
		kind, _ := obj["kind"].(string)
		name, _ := nestedString(obj, "metadata", "name")
		namespace, _ := nestedString(obj, "metadata", "namespace")
		res := report.Result{
			File:        e.file,
			Document:    e.doc.Index,
			Line:        e.doc.Line,
			Kind:        kind,
			Name:        name,
			Namespace:   namespace,
			Application: e.appName,
		}
		for j, v := range decisions[i].Violations {
			f := report.Finding{Rule: v.Rule, Severity: v.Severity, Message: v.Message}
			if lines[i] != nil {
				f.Line = lines[i][j]
			}
			res.Violations = append(res.Violations, f)
		}
		key, err := json.Marshal(res)
		if err == nil {
			if seen[string(key)] {
				continue
			}
			seen[string(key)] = true
		}
		results = append(results, res)
		if keep != nil {
			keep(res, obj)
		}
	}
	return results, nil
}

// fieldLines returns, for each entry with violations that name a field,
// the line of each violation's field (0 for the document's line), indexed
// like decisions[i].Violations.
//
// Documents do not keep their YAML syntax tree (render.DecodeFileLines), so the
// files behind violations are decoded again, each once and concurrently. A
// document read from a file is looked up in the file at its index and line.
// A kustomize output document is looked up in the source document it came
// from, and the field's line there is used only when the field has the same
// value in both, so a patched or transformed field points at the document
// rather than at a stale line. Helm output has no field lines.
func fieldLines(ctx context.Context, entries []entry, decisions []policies.Decision, lim render.Limits) ([][]int, error) {
	type file struct {
		root, name string
		entries    []int
	}
	var files []*file
	byKey := map[string]*file{}
	for i, e := range entries {
		if !needsFieldLines(e.doc, decisions[i].Violations) {
			continue
		}
		key := e.root + "\x00" + e.doc.File
		f, ok := byKey[key]
		if !ok {
			f = &file{root: e.root, name: e.doc.File}
			byKey[key] = f
			files = append(files, f)
		}
		f.entries = append(f.entries, i)
	}
	lines := make([][]int, len(entries))
	err := forEach(ctx, len(files), func(_ context.Context, n int) error {
		f := files[n]
		// The file was decoded before; if it changed or vanished since,
		// violations fall back to their documents' lines.
		docs, _, _ := render.DecodeFileLines(f.root, f.name, lim)
		for _, i := range f.entries {
			vs := decisions[i].Violations
			lines[i] = make([]int, len(vs))
			src, ok := sourceDocument(docs, entries[i].doc)
			if !ok {
				continue
			}
			for j, v := range vs {
				lines[i][j] = fieldLine(entries[i].doc, src, v.Path)
			}
		}
		return nil
	})
	return lines, err
}

// needsFieldLines reports whether d has violations with a field path whose
// line can be found in a file.
func needsFieldLines(d render.Document, vs []policies.Violation) bool {
	if d.Line == 0 || d.Rendered && d.Origin != render.KindKustomize {
		return false
	}
	for _, v := range vs {
		if len(v.Path) > 0 {
			return true
		}
	}
	return false
}

// sourceDocument returns the document among docs that d is, or was
// rendered from: the one at the same index and line.
func sourceDocument(docs []render.Document, d render.Document) (render.Document, bool) {
	for _, s := range docs {
		if s.Index == d.Index && s.Line == d.Line {
			return s, true
		}
	}
	return render.Document{}, false
}

// fieldLine returns the line of the field at path in src, the source of d,
// or 0 when it has none or, for rendered d, when the field's value differs
// from the source's.
func fieldLine(d, src render.Document, path []any) int {
	if len(path) == 0 {
		return 0
	}
	if d.Rendered {
		want, ok := valueAt(d.Object, path)
		if !ok {
			return 0
		}
		if got, ok := valueAt(src.Object, path); !ok || !reflect.DeepEqual(got, want) {
			return 0
		}
	}
	return src.LineOf(path)
}

// valueAt returns the value at path inside v: string keys and int
// indexes.
func valueAt(v any, path []any) (any, bool) {
	for _, p := range path {
		switch cur := v.(type) {
		case map[string]any:
			k, ok := p.(string)
			if !ok {
				return nil, false
			}
			if v, ok = cur[k]; !ok {
				return nil, false
			}
		case []any:
			i, ok := p.(int)
			if !ok || i < 0 || i >= len(cur) {
				return nil, false
			}
			v = cur[i]
		default:
			return nil, false
		}
	}
	return v, true
}
