package application

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"
)

// UnifiedDiff returns the unified diff (3 lines of context) from the YAML
// of the live object to the YAML of the target; a missing side is empty.
// `tollgate app diff` prints it and the web UI shows it.
func (o ObjectDiff) UnifiedDiff() (string, error) {
	a, err := yamlLines(o.Live)
	if err != nil {
		return "", err
	}
	b, err := yamlLines(o.Target)
	if err != nil {
		return "", err
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: a, B: b, FromFile: "live", ToFile: "desired", Context: 3})
}

// yamlLines returns the YAML of obj as lines ending in "\n"; none for nil.
func yamlLines(obj map[string]any) ([]string, error) {
	if obj == nil {
		return nil, nil
	}
	data, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines, nil
}
