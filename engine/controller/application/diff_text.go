package application

import "github.com/tollgate-dev/tollgate/internal/objdiff"

// UnifiedDiff returns the unified diff (3 lines of context) from the YAML
// of the live object to the YAML of the target; a missing side is empty.
// `tollgate app diff` prints it and the web UI shows it.
func (o ObjectDiff) UnifiedDiff() (string, error) {
	return objdiff.Unified(o.Live, o.Target, "live", "desired")
}
