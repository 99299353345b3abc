package plan

import (
	"strings"
	"testing"
)

// FuzzParseSyncOptions checks that parsing never panics and that a
// successful parse keeps a valid propagation policy.
func FuzzParseSyncOptions(f *testing.F) {
	for _, s := range []string{
		"Prune=false,Validate=false",
		"PrunePropagationPolicy=orphan",
		"Prune=confirm, Foo=bar",
		"=,==",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseSyncOptions(strings.Split(s, ",")...)
		if err != nil {
			return
		}
		switch o.PrunePropagationPolicy {
		case PropagationForeground, PropagationBackground, PropagationOrphan:
		default:
			t.Fatalf("ParseSyncOptions(%q): propagation policy %q", s, o.PrunePropagationPolicy)
		}
	})
}
