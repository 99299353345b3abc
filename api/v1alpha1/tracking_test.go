package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTrackingID(t *testing.T) {
	tests := []struct {
		in   string
		want TrackingID
	}{
		{"web:apps/Deployment:team-a/api", TrackingID{App: "web", Group: "apps", Kind: "Deployment", Namespace: "team-a", Name: "api"}},
		{"web:/ConfigMap:team-a/settings", TrackingID{App: "web", Kind: "ConfigMap", Namespace: "team-a", Name: "settings"}},
		{"team-b_web:/Service:team-b/api", TrackingID{App: "team-b_web", Kind: "Service", Namespace: "team-b", Name: "api"}},
		{"team_app:/Namespace:/web", TrackingID{App: "team_app", Kind: "Namespace", Name: "web"}},
		{
			"web:rbac.authorization.k8s.io/ClusterRole:/system:controller:web",
			TrackingID{App: "web", Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:controller:web"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTrackingID(tt.in)
			if err != nil {
				t.Fatalf("ParseTrackingID(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseTrackingID(%q) (-want +got):\n%s", tt.in, diff)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}

func TestParseTrackingIDErrors(t *testing.T) {
	for _, s := range []string{
		"",
		"app",
		"app:/ConfigMap",
		"app:ConfigMap:ns/name",
		"app:/ConfigMap:ns-name",
		":/ConfigMap:ns/name",
		"app:/:ns/name",
		"app:/ConfigMap:ns/",
		"app:/ConfigMap:ns/a/b",
		"a:b:/ConfigMap:ns/name",
		"web:apps/v1/Deployment:a/b",
	} {
		t.Run(s, func(t *testing.T) {
			if id, err := ParseTrackingID(s); err == nil {
				t.Errorf("ParseTrackingID(%q) = %+v, want error", s, id)
			}
		})
	}
}

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
