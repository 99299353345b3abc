package plan

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

func TestTrackingRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		app  string
		id   string
		want string
	}{
		{"namespaced core", "guestbook", "v1 ConfigMap web/settings", "guestbook:/ConfigMap:web/settings"},
		{"namespaced group", "guestbook", "apps/v1 Deployment web/front", "guestbook:apps/Deployment:web/front"},
		{"cluster scoped", "guestbook", "v1 Namespace web", "guestbook:/Namespace:/web"},
		{"app in another namespace", AppInstanceName("guestbook", "team-a", "argocd"), "rbac.authorization.k8s.io/v1 ClusterRole viewer",
			"team-a_guestbook:rbac.authorization.k8s.io/ClusterRole:/viewer"},
		{"name with colons", "platform", "rbac.authorization.k8s.io/v1 ClusterRole system:auth-delegator",
			"platform:rbac.authorization.k8s.io/ClusterRole:/system:auth-delegator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := obj(t, tt.id)
			SetTracking(o, tt.app)
			got := o.GetAnnotations()[TrackingAnnotation]
			if got != tt.want {
				t.Fatalf("annotation = %q, want %q", got, tt.want)
			}
			parsed, err := v1alpha1.ParseTrackingID(got)
			if err != nil {
				t.Fatalf("ParseTrackingID: %v", err)
			}
			if diff := cmp.Diff(TrackingIDFor(tt.app, o), parsed); diff != "" {
				t.Errorf("parsed (-want +got):\n%s", diff)
			}
			if parsed.String() != got {
				t.Errorf("String() = %q, want %q", parsed.String(), got)
			}
			if !OwnedBy(o, tt.app) {
				t.Errorf("OwnedBy(%q) = false", tt.app)
			}
			if OwnedBy(o, tt.app+"-other") {
				t.Errorf("OwnedBy(other app) = true")
			}
		})
	}
}

func TestAppInstanceName(t *testing.T) {
	tests := []struct{ name, ns, cp, want string }{
		{"app", "argocd", "argocd", "app"},
		{"app", "", "argocd", "app"},
		{"app", "team", "argocd", "team_app"},
	}
	for _, tt := range tests {
		if got := AppInstanceName(tt.name, tt.ns, tt.cp); got != tt.want {
			t.Errorf("AppInstanceName(%q, %q, %q) = %q, want %q", tt.name, tt.ns, tt.cp, got, tt.want)
		}
	}
}

func TestOwnedByCopiedObject(t *testing.T) {
	orig := obj(t, "v1 ConfigMap web/settings")
	SetTracking(orig, "guestbook")
	copied := obj(t, "v1 ConfigMap web/settings-copy")
	copied.SetAnnotations(orig.GetAnnotations())
	if OwnedBy(copied, "guestbook") {
		t.Error("OwnedBy(copy with the original's annotation) = true, want false")
	}
	if _, err := TrackingOf(obj(t, "v1 ConfigMap web/plain")); !errors.Is(err, ErrNotTracked) {
		t.Errorf("TrackingOf(untracked) error = %v, want ErrNotTracked", err)
	}
}
