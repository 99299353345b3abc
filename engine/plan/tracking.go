package plan

import (
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
)

// TrackingAnnotation marks the objects an Application applied, in Argo CD's
// `annotation` tracking method; its value is a [v1alpha1.TrackingID].
const TrackingAnnotation = v1alpha1.AnnotationKeyTrackingID

// InstanceLabel marks the objects an Application applied in Argo CD's
// `label` tracking method; its value is the application instance name
// ([AppInstanceName]).
const InstanceLabel = v1alpha1.LabelKeyAppInstance

// labelMaxLength is the longest label value.
const labelMaxLength = 63

// ErrNotTracked is returned by [TrackingOf] for an object without the
// tracking annotation.
var ErrNotTracked = errors.New("object has no tracking annotation")

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

// OwnerOf returns the application instance that tracks obj under method,
// or "" when none does. The tracking annotation, when obj has one, decides:
// it must describe obj itself. Without it, with the `label` and
// `annotation+label` methods, the instance label names the owner, unless
// obj has owner references (a Pod or ReplicaSet inherits the label of its
// template, not the ownership). With `annotation` (and an empty method) a
// label never tracks: Helm charts set app.kubernetes.io/instance to their
// release name, and Argo CD ignores the label then too. byLabel says which
// was read; a label may hold a truncated instance name (see
// [InstanceLabelValue]).
func OwnerOf(obj *unstructured.Unstructured, method policies.TrackingMethod) (app string, byLabel bool) {
	if _, ok := obj.GetAnnotations()[TrackingAnnotation]; ok {
		id, err := TrackingOf(obj)
		if err != nil || !Describes(id, obj) {
			return "", false
		}
		return id.App, false
	}
	if !ReadsLabel(method) || len(obj.GetOwnerReferences()) > 0 {
		return "", false
	}
	v := obj.GetLabels()[InstanceLabel]
	return v, v != ""
}

// OwnedBy reports whether obj is tracked by the application instance app
// under method (see [OwnerOf]): it carries app's tracking id describing obj
// itself, or, without a tracking annotation and with a method that reads
// labels, app's instance label.
func OwnedBy(obj *unstructured.Unstructured, app string, method policies.TrackingMethod) bool {
	owner, byLabel := OwnerOf(obj, method)
	if owner == "" || app == "" {
		return false
	}
	if byLabel {
		return owner == app || owner == InstanceLabelValue(app, method)
	}
	return owner == app
}

// ReadsLabel reports whether method recognises objects by their instance
// label.
func ReadsLabel(method policies.TrackingMethod) bool {
	return method == policies.TrackingLabel || method == policies.TrackingAnnotationAndLabel
}

// InstanceLabelValue is the instance label of app's objects under method:
// app, except with `annotation+label`, where a name longer than a label
// value is cut to 63 characters and then up to its last letter or digit, as
// Argo CD does (the annotation holds the full name then).
func InstanceLabelValue(app string, method policies.TrackingMethod) string {
	if method != policies.TrackingAnnotationAndLabel || len(app) <= labelMaxLength {
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
// it, when the field manager owned it.
func SetTracking(obj *unstructured.Unstructured, app string, method policies.TrackingMethod) {
	if method != policies.TrackingLabel {
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[TrackingAnnotation] = TrackingIDFor(app, obj).String()
		obj.SetAnnotations(ann)
	}
	if ReadsLabel(method) {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[InstanceLabel] = InstanceLabelValue(app, method)
		obj.SetLabels(labels)
	}
}
