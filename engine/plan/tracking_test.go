package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
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
		{"app in another namespace", "team-a_guestbook", "rbac.authorization.k8s.io/v1 ClusterRole viewer",
			"team-a_guestbook:rbac.authorization.k8s.io/ClusterRole:/viewer"},
		{"name with colons", "platform", "rbac.authorization.k8s.io/v1 ClusterRole system:auth-delegator",
			"platform:rbac.authorization.k8s.io/ClusterRole:/system:auth-delegator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := obj(t, tt.id)
			SetTracking(o, tt.app, policies.TrackingAnnotation)
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
			if !OwnedBy(o, tt.app, policies.TrackingAnnotation) {
				t.Errorf("OwnedBy(%q) = false", tt.app)
			}
			if OwnedBy(o, tt.app+"-other", policies.TrackingAnnotation) {
				t.Errorf("OwnedBy(other app) = true")
			}
		})
	}
}

func TestOwnedByCopiedObject(t *testing.T) {
	orig := obj(t, "v1 ConfigMap web/settings")
	SetTracking(orig, "guestbook", policies.TrackingAnnotation)
	copied := obj(t, "v1 ConfigMap web/settings-copy")
	copied.SetAnnotations(orig.GetAnnotations())
	if OwnedBy(copied, "guestbook", policies.TrackingAnnotationAndLabel) {
		t.Error("OwnedBy(copy with the original's annotation) = true, want false")
	}
	if _, err := TrackingOf(obj(t, "v1 ConfigMap web/plain")); !errors.Is(err, ErrNotTracked) {
		t.Errorf("TrackingOf(untracked) error = %v, want ErrNotTracked", err)
	}
}

func TestSetTrackingMethods(t *testing.T) {
	long := strings.Repeat("a", 62) + "-b" // 64 characters, cut to 62 a's
	tests := []struct {
		method     policies.TrackingMethod
		app        string
		annotation string
		label      string
	}{
		{"", "web", "web:/ConfigMap:ns/cm", ""},
		{policies.TrackingAnnotation, "web", "web:/ConfigMap:ns/cm", ""},
		{policies.TrackingLabel, "web", "", "web"},
		{policies.TrackingAnnotationAndLabel, "web", "web:/ConfigMap:ns/cm", "web"},
		{policies.TrackingAnnotationAndLabel, long, long + ":/ConfigMap:ns/cm", strings.Repeat("a", 62)},
	}
	for _, tt := range tests {
		t.Run(string(tt.method)+"/"+tt.app[:3], func(t *testing.T) {
			o := obj(t, "v1 ConfigMap ns/cm")
			SetTracking(o, tt.app, tt.method)
			got := [2]string{o.GetAnnotations()[TrackingAnnotation], o.GetLabels()[InstanceLabel]}
			if diff := cmp.Diff([2]string{tt.annotation, tt.label}, got); diff != "" {
				t.Errorf("annotation, label (-want +got):\n%s", diff)
			}
			if !OwnedBy(o, tt.app, tt.method) {
				t.Errorf("OwnedBy(%q, %q) = false after SetTracking", tt.app, tt.method)
			}
		})
	}
}

func TestOwnerOf(t *testing.T) {
	labelled := func(app string, annotations ...string) *unstructured.Unstructured {
		o := obj(t, "v1 ConfigMap ns/cm", annotations...)
		o.SetLabels(map[string]string{InstanceLabel: app})
		return o
	}
	withOwnerRef := labelled("web")
	withOwnerRef.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "1"}})
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		method  policies.TrackingMethod
		owner   string
		byLabel bool
	}{
		{"label ignored with annotation", labelled("web"), policies.TrackingAnnotation, "", false},
		{"label ignored with the default", labelled("web"), "", "", false},
		{"label read with label", labelled("web"), policies.TrackingLabel, "web", true},
		{"label read with annotation+label", labelled("web"), policies.TrackingAnnotationAndLabel, "web", true},
		{"annotation decides over the label", labelled("web", TrackingAnnotation+"=other:/ConfigMap:ns/cm"), policies.TrackingLabel, "other", false},
		{"copied annotation: no owner, label unread", labelled("web", TrackingAnnotation+"=web:/ConfigMap:ns/original"), policies.TrackingAnnotationAndLabel, "", false},
		{"inherited label: no owner", withOwnerRef, policies.TrackingLabel, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owner, byLabel := OwnerOf(tt.obj, tt.method)
			if owner != tt.owner || byLabel != tt.byLabel {
				t.Errorf("OwnerOf = %q, %v; want %q, %v", owner, byLabel, tt.owner, tt.byLabel)
			}
			if got, want := OwnedBy(tt.obj, "web", tt.method), tt.owner == "web"; got != want {
				t.Errorf("OwnedBy(web) = %v, want %v", got, want)
			}
		})
	}
}
