package v1alpha1

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestOwnedByCopiedObject(t *testing.T) {
	orig := obj(t, "v1 ConfigMap web/settings")
	SetTracking(orig, "guestbook", TrackingMethodAnnotation)
	copied := obj(t, "v1 ConfigMap web/settings-copy")
	copied.SetAnnotations(orig.GetAnnotations())
	if OwnedBy(copied, "guestbook", TrackingMethodAnnotationAndLabel) {
		t.Error("OwnedBy(copy with the original's annotation) = true, want false")
	}
	if _, err := TrackingOf(obj(t, "v1 ConfigMap web/plain")); !errors.Is(err, ErrNotTracked) {
		t.Errorf("TrackingOf(untracked) error = %v, want ErrNotTracked", err)
	}
}

// labelled returns obj with the instance label app.
func labelled(o *unstructured.Unstructured, app string) *unstructured.Unstructured {
	o.SetLabels(map[string]string{LabelKeyAppInstance: app})
	return o
}

// withOwnerRef returns o with an owner reference to a ReplicaSet.
func withOwnerRef(o *unstructured.Unstructured) *unstructured.Unstructured {
	o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "1"}})
	return o
}

// TestOwnerOf: the engine's reading, the zero OwnerOptions.
func TestOwnerOf(t *testing.T) {
	cm := func(app string, annotations ...string) *unstructured.Unstructured {
		return labelled(obj(t, "v1 ConfigMap ns/cm", annotations...), app)
	}
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		method  TrackingMethod
		owner   string
		byLabel bool
	}{
		{"label ignored with annotation", cm("web"), TrackingMethodAnnotation, "", false},
		{"label ignored with the default", cm("web"), "", "", false},
		{"label read with label", cm("web"), TrackingMethodLabel, "web", true},
		{"label read with annotation+label", cm("web"), TrackingMethodAnnotationAndLabel, "web", true},
		{"annotation decides over the label", cm("web", AnnotationKeyTrackingID+"=other:/ConfigMap:ns/cm"), TrackingMethodLabel, "other", false},
		{"copied annotation: no owner, label unread", cm("web", AnnotationKeyTrackingID+"=web:/ConfigMap:ns/original"), TrackingMethodAnnotationAndLabel, "", false},
		{"empty annotation: no owner, label unread", cm("web", AnnotationKeyTrackingID+"="), TrackingMethodAnnotationAndLabel, "", false},
		{"inherited label: no owner", withOwnerRef(cm("web")), TrackingMethodLabel, "", false},
		{"namespace of a cluster-scoped object's id compared",
			obj(t, "rbac.authorization.k8s.io/v1 ClusterRole reader", AnnotationKeyTrackingID+"=web:rbac.authorization.k8s.io/ClusterRole:team-a/reader"),
			TrackingMethodAnnotation, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owner, byLabel := OwnerOf(tt.obj, tt.method, OwnerOptions{})
			if owner != tt.owner || byLabel != tt.byLabel {
				t.Errorf("OwnerOf = %q, %v; want %q, %v", owner, byLabel, tt.owner, tt.byLabel)
			}
			if got, want := OwnedBy(tt.obj, "web", tt.method), tt.owner == "web"; got != want {
				t.Errorf("OwnedBy(web) = %v, want %v", got, want)
			}
		})
	}
}

// TestOwnerOfAdmission: the admission webhook's reading, every OwnerOptions
// field set.
func TestOwnerOfAdmission(t *testing.T) {
	deploy := func(annotations ...string) *unstructured.Unstructured {
		return obj(t, "apps/v1 Deployment team-c/api", annotations...)
	}
	const (
		ours   = AnnotationKeyTrackingID + "=web:apps/Deployment:team-c/api"
		copied = AnnotationKeyTrackingID + "=other:apps/Deployment:team-c/api-original"
	)
	tests := []struct {
		name          string
		obj           *unstructured.Unstructured
		method        TrackingMethod
		clusterScoped bool
		owner         string
		byLabel       bool
	}{
		{"annotation read with annotation", deploy(ours), TrackingMethodAnnotation, false, "web", false},
		{"annotation read with annotation+label", deploy(ours), TrackingMethodAnnotationAndLabel, false, "web", false},
		{"annotation ignored with label", deploy(ours), TrackingMethodLabel, false, "", false},
		{"label read with label despite an annotation", labelled(deploy(copied), "web"), TrackingMethodLabel, false, "web", true},
		{"annotation decides over the label", labelled(deploy(ours), "other"), TrackingMethodAnnotationAndLabel, false, "web", false},
		{"label ignored with annotation", labelled(deploy(), "web"), TrackingMethodAnnotation, false, "", false},
		{"copied annotation: label read", labelled(deploy(copied), "web"), TrackingMethodAnnotationAndLabel, false, "web", true},
		{"copied annotation: no label with annotation", labelled(deploy(copied), "web"), TrackingMethodAnnotation, false, "", false},
		{"malformed annotation: label read", labelled(deploy(AnnotationKeyTrackingID+"=web"), "web"), TrackingMethodAnnotationAndLabel, false, "web", true},
		{"empty annotation: label read", labelled(deploy(AnnotationKeyTrackingID+"="), "web"), TrackingMethodAnnotationAndLabel, false, "web", true},
		{"label read despite owner references", withOwnerRef(labelled(deploy(), "web")), TrackingMethodLabel, false, "web", true},
		{"annotation in another namespace ignored", deploy(AnnotationKeyTrackingID + "=web:apps/Deployment:team-a/api"), TrackingMethodAnnotationAndLabel, false, "", false},
		{"namespace of a cluster-scoped object's id ignored",
			obj(t, "rbac.authorization.k8s.io/v1 ClusterRole reader", AnnotationKeyTrackingID+"=web:rbac.authorization.k8s.io/ClusterRole:team-a/reader"),
			TrackingMethodAnnotationAndLabel, true, "web", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := OwnerOptions{
				ClusterScoped:                tt.clusterScoped,
				LabelMethodIgnoresAnnotation: true,
				LabelFallback:                true,
				LabelDespiteOwnerReferences:  true,
			}
			owner, byLabel := OwnerOf(tt.obj, tt.method, opts)
			if owner != tt.owner || byLabel != tt.byLabel {
				t.Errorf("OwnerOf = %q, %v; want %q, %v", owner, byLabel, tt.owner, tt.byLabel)
			}
		})
	}
}
