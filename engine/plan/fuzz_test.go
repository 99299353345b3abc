package plan

import (
	"strings"
	"testing"
)

// FuzzParseTrackingID checks that whatever parses formats back to itself.
func FuzzParseTrackingID(f *testing.F) {
	for _, s := range []string{
		"guestbook:/ConfigMap:web/settings",
		"guestbook:apps/Deployment:web/front",
		"team_app:/Namespace:/web",
		"app:/ConfigMap:ns/a/b",
		"::/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseTrackingID(s)
		if err != nil {
			return
		}
		if id.String() != s {
			t.Fatalf("ParseTrackingID(%q).String() = %q", s, id.String())
		}
	})
}

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
