package plan

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TrackingAnnotation marks the objects an Application applied, in Argo CD's
// `annotation` tracking method; its value is a [v1alpha1.TrackingID].
const TrackingAnnotation = v1alpha1.AnnotationKeyTrackingID

// ErrNotTracked is returned by [TrackingOf] for an object without the
// tracking annotation.
var ErrNotTracked = errors.New("object has no tracking annotation")

// AppInstanceName is the name an Application is tracked by: its name when it
// lives in the control-plane namespace, else `<namespace>_<name>`, as Argo
// CD does for Applications in other namespaces.
func AppInstanceName(name, namespace, controlPlaneNamespace string) string {
	if namespace == "" || namespace == controlPlaneNamespace {
		return name
	}
	return namespace + "_" + name
}

// TrackingIDFor returns the tracking id of obj for the application instance
// app.
func TrackingIDFor(app string, obj *unstructured.Unstructured) v1alpha1.TrackingID {
	gvk := obj.GroupVersionKind()
	return v1alpha1.TrackingID{App: app, Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// Describes reports whether id describes obj itself (same group, kind,
// namespace and name). An object copied by hand keeps the annotation of its
// original and does not match.
func Describes(id v1alpha1.TrackingID, obj *unstructured.Unstructured) bool {
	return TrackingIDFor(id.App, obj) == id
}

// TrackingOf returns the parsed tracking annotation of obj, or an error
// wrapping [ErrNotTracked] when it has none.
func TrackingOf(obj *unstructured.Unstructured) (v1alpha1.TrackingID, error) {
	v, ok := obj.GetAnnotations()[TrackingAnnotation]
	if !ok {
		return v1alpha1.TrackingID{}, ErrNotTracked
	}
	return v1alpha1.ParseTrackingID(v)
}

// OwnedBy reports whether obj carries app's tracking id and the id describes
// obj itself.
func OwnedBy(obj *unstructured.Unstructured, app string) bool {
	id, err := TrackingOf(obj)
	return err == nil && id.App == app && Describes(id, obj)
}

// SetTracking sets the tracking annotation of obj for app. Set the namespace
// of namespaced objects first: it is part of the id.
func SetTracking(obj *unstructured.Unstructured, app string) {
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[TrackingAnnotation] = TrackingIDFor(app, obj).String()
	obj.SetAnnotations(ann)
}
