package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/strvals"
)

// helmValues merges the user-supplied values the way `helm template` does
// with Argo CD's arguments: value files in order, then Values or
// ValuesObject (ApplicationOptions keeps one, as Argo CD), then each parameter as `--set` (or `--set-string`), then
// each file parameter as `--set-file`. Chart
// defaults are coalesced later by Helm itself. Values are read with Helm's
// own YAML reader so numbers behave exactly as in Helm.
func (s source) helmValues() (map[string]any, error) {
	vals := map[string]any{}
	h := s.opts.Helm
	if h == nil {
		return vals, nil
	}
	for _, vf := range h.ValueFiles {
		m, err := s.valueFile(vf)
		if errors.Is(err, fs.ErrNotExist) && h.IgnoreMissingValueFiles {
			continue
		}
		if err != nil {
			return nil, err
		}
		vals = MergeValues(vals, m)
	}
	if strings.TrimSpace(h.Values) != "" {
		m, err := chartutil.ReadValues([]byte(h.Values))
		if err != nil {
			return nil, fmt.Errorf("parse helm values: %w", err)
		}
		vals = MergeValues(vals, m)
	}
	if h.ValuesObject != nil {
		data, err := json.Marshal(h.ValuesObject)
		if err != nil {
			return nil, fmt.Errorf("encode helm valuesObject: %w", err)
		}
		m, err := chartutil.ReadValues(data)
		if err != nil {
			return nil, fmt.Errorf("parse helm valuesObject: %w", err)
		}
		vals = MergeValues(vals, m)
	}
	if err := s.setParameters(vals); err != nil {
		return nil, err
	}
	return vals, nil
}

// setParameters applies the parameters (`--set`, `--set-string`), then
// the file parameters (`--set-file`), in Helm's order.
func (s source) setParameters(vals map[string]any) error {
	h := s.opts.Helm
	for i, p := range h.Parameters {
		if p.Name == "" {
			return fmt.Errorf("parse helm parameter %d: name is empty", i)
		}
		set := p.Name + "=" + escapeSetValue(p.Value)
		var err error
		if p.ForceString {
			err = strvals.ParseIntoString(set, vals)
		} else {
			err = strvals.ParseInto(set, vals)
		}
		if err != nil {
			return fmt.Errorf("parse helm parameter %q: %w", p.Name, err)
		}
	}
	for i, p := range h.FileParameters {
		if p.Name == "" {
			return fmt.Errorf("parse helm file parameter %d: name is empty", i)
		}
		data, _, err := s.chartFile(p.Path, "file parameter")
		if err != nil {
			return err
		}
		read := func([]rune) (any, error) { return string(data), nil }
		if err := strvals.ParseIntoFile(p.Name+"=file", vals, read); err != nil {
			return fmt.Errorf("parse helm file parameter %q: %w", p.Name, err)
		}
	}
	return nil
}

// valueFile reads and parses one value file (chartFile).
func (s source) valueFile(vf string) (map[string]any, error) {
	data, rel, err := s.chartFile(vf, "value file")
	if err != nil {
		return nil, err
	}
	m, err := chartutil.ReadValues(data)
	if err != nil {
		return nil, fmt.Errorf("parse value file %s: %w", displayValueFile(vf, rel), err)
	}
	return m, nil
}

// chartFile reads a file a Helm source names (what: "value file", "file
// parameter"). Like Argo CD, a relative path is relative to the chart
// directory, an absolute path is relative to the repository root and
// "$name/path" is relative to the root of the source with ref name; URLs
// are refused. Every path stays inside its repository. It returns the
// data and the repo-relative path.
func (s source) chartFile(vf, what string) ([]byte, string, error) {
	if strings.Contains(vf, "://") {
		return nil, "", fmt.Errorf("read %s %q: %w", what, vf, ErrRemoteReference)
	}
	r, p := s.repo, vf
	switch {
	case strings.HasPrefix(vf, "$"):
		name, rest, _ := strings.Cut(vf[1:], "/")
		root, ok := s.opts.Refs[name]
		if !ok {
			return nil, "", fmt.Errorf("read %s %s: no source of the application has ref %q", what, vf, name)
		}
		var err error
		if r, err = openRepo(root); err != nil {
			return nil, "", fmt.Errorf("read %s %s: %w", what, vf, err)
		}
		p = repoPath(rest)
	case !filepath.IsAbs(p) && !strings.HasPrefix(p, "/"):
		p = joinRel(s.rel, p)
	default:
		p = repoPath(p)
	}
	real, rel, err := r.resolve(p)
	if err != nil {
		return nil, "", fmt.Errorf("read %s %s: %w", what, vf, err)
	}
	data, err := readFile(real, s.lim.MaxFileBytes)
	if err != nil {
		return nil, "", fmt.Errorf("read %s %s: %w", what, displayValueFile(vf, rel), err)
	}
	return data, rel, nil
}

// repoPath turns a path from the repository root ("/a/b" or "a/b") into a
// repo-relative path.
func repoPath(p string) string {
	p = strings.TrimLeft(filepath.ToSlash(p), "/")
	if p == "" {
		return "."
	}
	return p
}

// displayValueFile names a value file in messages: its repo-relative path,
// or the value file as written when it is in another source.
func displayValueFile(vf, rel string) string {
	if strings.HasPrefix(vf, "$") {
		return vf
	}
	return rel
}

// MergeValues merges b into a copy of a: nested maps merge, anything else in
// b replaces what a has (Helm's rule for -f files). Neither input is changed.
func MergeValues(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = MergeValues(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// escapeSetValue escapes the commas in a parameter value, which `--set`
// would otherwise read as separators, as Argo CD does; a {a,b} list is left
// alone.
func escapeSetValue(v string) string {
	if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
		return v
	}
	var b strings.Builder
	escaped := false
	for _, r := range v {
		if r == ',' && !escaped {
			b.WriteByte('\\')
		}
		escaped = r == '\\' && !escaped
		b.WriteRune(r)
	}
	return b.String()
}
