package v1alpha1

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// obj builds an object from a compact spec: "apiVersion Kind ns/name" (or
// "apiVersion Kind name" for a cluster-scoped one) plus annotations as
// key=value pairs.
func obj(t *testing.T, id string, annotations ...string) *unstructured.Unstructured {
	t.Helper()
	f := strings.Fields(id)
	if len(f) != 3 {
		t.Fatalf("bad object id %q", id)
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(f[0])
	u.SetKind(f[1])
	ns, name, ok := strings.Cut(f[2], "/")
	if !ok {
		ns, name = "", f[2]
	}
	u.SetNamespace(ns)
	u.SetName(name)
	if len(annotations) > 0 {
		ann := map[string]string{}
		for _, kv := range annotations {
			k, v, _ := strings.Cut(kv, "=")
			ann[k] = v
		}
		u.SetAnnotations(ann)
	}
	return u
}

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
			SetTracking(o, tt.app, TrackingMethodAnnotation)
			got := o.GetAnnotations()[AnnotationKeyTrackingID]
			if got != tt.want {
				t.Fatalf("annotation = %q, want %q", got, tt.want)
			}
			parsed, err := ParseTrackingID(got)
			if err != nil {
				t.Fatalf("ParseTrackingID: %v", err)
			}
			if diff := cmp.Diff(TrackingIDFor(tt.app, o), parsed); diff != "" {
				t.Errorf("parsed (-want +got):\n%s", diff)
			}
			if parsed.String() != got {
				t.Errorf("String() = %q, want %q", parsed.String(), got)
			}
			if !OwnedBy(o, tt.app, TrackingMethodAnnotation) {
				t.Errorf("OwnedBy(%q) = false", tt.app)
			}
			if OwnedBy(o, tt.app+"-other", TrackingMethodAnnotation) {
				t.Errorf("OwnedBy(other app) = true")
			}
		})
	}
}

func TestSetTrackingMethods(t *testing.T) {
	long := strings.Repeat("a", 62) + "-b" // 64 characters, cut to 62 a's
	tests := []struct {
		method     TrackingMethod
		app        string
		annotation string
		label      string
	}{
		{"", "web", "web:/ConfigMap:ns/cm", ""},
		{TrackingMethodAnnotation, "web", "web:/ConfigMap:ns/cm", ""},
		{TrackingMethodLabel, "web", "", "web"},
		{TrackingMethodAnnotationAndLabel, "web", "web:/ConfigMap:ns/cm", "web"},
		{TrackingMethodAnnotationAndLabel, long, long + ":/ConfigMap:ns/cm", strings.Repeat("a", 62)},
	}
	for _, tt := range tests {
		t.Run(string(tt.method)+"/"+tt.app[:3], func(t *testing.T) {
			o := obj(t, "v1 ConfigMap ns/cm")
			// A rendered object that claims another Application's id
			// is the Application's after SetTracking under every method.
			o.SetAnnotations(map[string]string{AnnotationKeyTrackingID: "victim:/ConfigMap:ns/cm"})
			SetTracking(o, tt.app, tt.method)
			got := [2]string{o.GetAnnotations()[AnnotationKeyTrackingID], o.GetLabels()[LabelKeyAppInstance]}
			if diff := cmp.Diff([2]string{tt.annotation, tt.label}, got); diff != "" {
				t.Errorf("annotation, label (-want +got):\n%s", diff)
			}
			if !OwnedBy(o, tt.app, tt.method) {
				t.Errorf("OwnedBy(%q, %q) = false after SetTracking", tt.app, tt.method)
			}
		})
	}
}
