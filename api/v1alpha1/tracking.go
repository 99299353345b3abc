package v1alpha1

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TrackingMethod is how the Application that manages an object is recorded
// on it, Argo CD's application.resourceTrackingMethod.
type TrackingMethod string

// Tracking methods, with Argo CD's names and values.
const (
	// TrackingMethodAnnotation is the AnnotationKeyTrackingID annotation,
	// a [TrackingID].
	TrackingMethodAnnotation TrackingMethod = "annotation"
	// TrackingMethodLabel is the LabelKeyAppInstance label, the
	// application instance name.
	TrackingMethodLabel TrackingMethod = "label"
	// TrackingMethodAnnotationAndLabel is both; the annotation is the one
	// read when present.
	TrackingMethodAnnotationAndLabel TrackingMethod = "annotation+label"
)

// Valid reports whether m is a tracking method, or empty (the reader's
// default).
func (m TrackingMethod) Valid() bool {
	switch m {
	case "", TrackingMethodAnnotation, TrackingMethodLabel, TrackingMethodAnnotationAndLabel:
		return true
	}
	return false
}

// TrackingID is the parsed value of AnnotationKeyTrackingID:
// `<app>:<group>/<kind>:<namespace>/<name>`. Group and namespace are empty
// for the core group and for cluster-scoped objects.
type TrackingID struct {
	// App is the application instance name: the Application's name when
	// it lives in the Argo CD namespace, else `<namespace>_<name>`.
	App       string
	Group     string
	Kind      string
	Namespace string
	Name      string
}

// String formats t as the annotation value.
func (t TrackingID) String() string {
	return t.App + ":" + t.Group + "/" + t.Kind + ":" + t.Namespace + "/" + t.Name
}

// ParseTrackingID parses an AnnotationKeyTrackingID value.
func ParseTrackingID(s string) (TrackingID, error) {
	// Application and kind names cannot hold ":"; object names can
	// (system:auth-delegator), so only the first two colons separate.
	app, rest, ok1 := strings.Cut(s, ":")
	gk, nsName, ok2 := strings.Cut(rest, ":")
	group, kind, ok3 := strings.Cut(gk, "/")
	ns, name, ok4 := strings.Cut(nsName, "/")
	if !ok1 || !ok2 || !ok3 || !ok4 || strings.Contains(kind, "/") || strings.Contains(name, "/") {
		return TrackingID{}, fmt.Errorf("parse tracking id %q: want <app>:<group>/<kind>:<namespace>/<name>", s)
	}
	if app == "" || kind == "" || name == "" {
		return TrackingID{}, fmt.Errorf("parse tracking id %q: application, kind and name must not be empty", s)
	}
	return TrackingID{App: app, Group: group, Kind: kind, Namespace: ns, Name: name}, nil
}

// ErrNotTracked is returned by [TrackingOf] for an object without the
// tracking annotation.
var ErrNotTracked = errors.New("object has no tracking annotation")

// TrackingIDFor returns the tracking id of obj for the application instance
// app.
func TrackingIDFor(app string, obj *unstructured.Unstructured) TrackingID {
	gvk := obj.GroupVersionKind()
	return TrackingID{App: app, Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// Describes reports whether id describes obj itself (same group, kind,
// namespace and name). An object copied by hand keeps the annotation of its
// original and does not match.
func Describes(id TrackingID, obj *unstructured.Unstructured) bool {
	return TrackingIDFor(id.App, obj) == id
}

// TrackingOf returns the parsed tracking annotation of obj, or an error
// wrapping [ErrNotTracked] when it has none.
func TrackingOf(obj *unstructured.Unstructured) (TrackingID, error) {
	v, ok := obj.GetAnnotations()[AnnotationKeyTrackingID]
	if !ok {
		return TrackingID{}, ErrNotTracked
	}
	return ParseTrackingID(v)
}

// labelMaxLength is the longest label value.
const labelMaxLength = 63

// ReadsLabel reports whether method recognises objects by their instance
// label.
func ReadsLabel(method TrackingMethod) bool {
	return method == TrackingMethodLabel || method == TrackingMethodAnnotationAndLabel
}

// InstanceLabelValue is the instance label of app's objects under method:
// app, except with `annotation+label`, where a name longer than a label
// value is cut to 63 characters and then up to its last letter or digit, as
// Argo CD does (the annotation holds the full name then).
func InstanceLabelValue(app string, method TrackingMethod) string {
	if method != TrackingMethodAnnotationAndLabel || len(app) <= labelMaxLength {
		return app
	}
	return strings.TrimRightFunc(app[:labelMaxLength], func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	})
}

// SetTracking marks obj as applied by app with method, as Argo CD's
// SetAppInstance does: the tracking annotation (`annotation`, the default),
// the instance label (`label`), or both (`annotation+label`). Set the
// namespace of namespaced objects first: it is part of the id. The other
// method's metadata is left as it is: an object applied without it loses
// it, when the field manager owned it. But under `label`, a tracking
// annotation the object brings that is not app's own id for it is
// dropped: the engine reads the annotation first under every method
// (OwnerOf), so a rendered object must not claim another Application's
// (Argo CD ignores the annotation under `label`).
func SetTracking(obj *unstructured.Unstructured, app string, method TrackingMethod) {
	if ann := obj.GetAnnotations(); method == TrackingMethodLabel {
		if v, ok := ann[AnnotationKeyTrackingID]; ok && v != TrackingIDFor(app, obj).String() {
			delete(ann, AnnotationKeyTrackingID)
			obj.SetAnnotations(ann)
		}
	}
	if method != TrackingMethodLabel {
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[AnnotationKeyTrackingID] = TrackingIDFor(app, obj).String()
		obj.SetAnnotations(ann)
	}
	if ReadsLabel(method) {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[LabelKeyAppInstance] = InstanceLabelValue(app, method)
		obj.SetLabels(labels)
	}
}
