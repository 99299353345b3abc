package render

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// HelmDetails is what Argo CD's repo-server tells of a Helm source
// (GetAppDetails), which notification templates read through
// repo.GetAppDetails.
type HelmDetails struct {
	// ValueFiles are the files and directories under the chart directory
	// whose name contains "values" and ends in .yaml or .yml, relative to
	// it, in walk order: the value files a source could select.
	ValueFiles []string
	// Values is the chart's values.yaml, "" without one.
	Values string
	// Parameters are values.yaml, then the source's value files in order,
	// flattened as Argo CD flattens them: "image.tag", "args[0]", each
	// value as Go's %v prints what sigs.k8s.io/yaml decodes (numbers are
	// float64: 1000000 is "1e+06"). A later file's value replaces an
	// earlier one's at the same name; a value file that does not exist is
	// skipped, as in Argo CD.
	Parameters map[string]string
}

// helmDetails reads the details of the Helm source s, rendering nothing.
func (s source) helmDetails() (*HelmDetails, error) {
	d := &HelmDetails{Parameters: map[string]string{}}
	err := filepath.WalkDir(s.dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := strings.ToLower(filepath.Ext(p))
		if strings.Contains(e.Name(), "values") && (ext == ".yaml" || ext == ".yml") {
			rel, err := filepath.Rel(s.dir, p)
			if err != nil {
				return err
			}
			d.ValueFiles = append(d.ValueFiles, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list value files: %w", err)
	}
	files := []string{"values.yaml"}
	if s.opts.Helm != nil {
		files = append(files, s.opts.Helm.ValueFiles...)
	}
	for i, vf := range files {
		data, rel, err := s.chartFile(vf, "value file")
		if errors.Is(err, fs.ErrNotExist) || i == 0 && err != nil {
			// values.yaml that cannot be read (a link out of the
			// repository) is left out, as Argo CD leaves it out.
			continue
		}
		if err != nil {
			return nil, err
		}
		if i == 0 {
			d.Values = string(data)
		}
		var vals map[string]any
		if err := yaml.Unmarshal(data, &vals); err != nil {
			return nil, fmt.Errorf("parse value file %s: %w", displayValueFile(vf, rel), err)
		}
		flattenValues(vals, d.Parameters, nil)
	}
	return d, nil
}

// flattenValues adds v's leaves to out under their dotted names, a list's
// items as name[i], as Argo CD's helm.flatVals does.
func flattenValues(v any, out map[string]string, prefix []string) {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			flattenValues(item, out, append(prefix[:len(prefix):len(prefix)], k))
		}
	case []any:
		if len(prefix) == 0 {
			return
		}
		last := prefix[len(prefix)-1]
		for i, item := range v {
			flattenValues(item, out, append(prefix[:len(prefix)-1:len(prefix)-1], fmt.Sprintf("%s[%d]", last, i)))
		}
	default:
		out[strings.Join(prefix, ".")] = fmt.Sprintf("%v", v)
	}
}
