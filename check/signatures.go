package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// signatureNote is the note that says what tollgate test does not check
// of the AppProjects among the reviewed documents and --project files that
// set spec.signatureKeys: whether commits are signed, which the controller
// verifies (there is no signature to verify in a checkout under test). It
// returns nil when no AppProject sets signatureKeys.
func signatureNote(g gathered) []Note {
	var names []string
	add := func(obj map[string]any) {
		if !isKind(obj, "argoproj.io", "AppProject") {
			return
		}
		spec, _ := obj["spec"].(map[string]any)
		if keys, _ := spec["signatureKeys"].([]any); len(keys) == 0 {
			return
		}
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		if q := strconv.Quote(name); !slices.Contains(names, q) {
			names = append(names, q)
		}
	}
	for _, p := range g.projects {
		add(p)
	}
	for _, e := range g.entries {
		add(e.doc.Object)
	}
	if len(names) == 0 {
		return nil
	}
	subject := "AppProject " + names[0] + " sets"
	if len(names) > 1 {
		subject = "AppProjects " + strings.Join(names, ", ") + " set"
	}
	return []Note{{Message: fmt.Sprintf("%s spec.signatureKeys: Git commit signatures are verified by the controller only, not by tollgate test", subject)}}
}
