package plan

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TrackingAnnotation marks the objects an Application applied, in Argo CD's
// `annotation` tracking method.
const TrackingAnnotation = "argocd.argoproj.io/tracking-id"

// TrackingID is the parsed value of [TrackingAnnotation]:
// `<app>:<group>/<kind>:<namespace>/<name>`.
type TrackingID struct {
	// App is the application instance name (see [AppInstanceName]).
	App       string
	Group     string
	Kind      string
	Namespace string
	Name      string
}

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
func TrackingIDFor(app string, obj *unstructured.Unstructured) TrackingID {
	gvk := obj.GroupVersionKind()
	return TrackingID{App: app, Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// String formats t as the annotation value.
func (t TrackingID) String() string {
	return fmt.Sprintf("%s:%s/%s:%s/%s", t.App, t.Group, t.Kind, t.Namespace, t.Name)
}

// Matches reports whether t describes obj itself (same group, kind,
// namespace and name). An object copied by hand keeps the annotation of its
// original and does not match.
func (t TrackingID) Matches(obj *unstructured.Unstructured) bool {
	id := TrackingIDFor(t.App, obj)
	return id == t
}

// ParseTrackingID parses an annotation value.
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

// TrackingOf returns the parsed tracking annotation of obj, or an error
// wrapping [ErrNotTracked] when it has none.
func TrackingOf(obj *unstructured.Unstructured) (TrackingID, error) {
	v, ok := obj.GetAnnotations()[TrackingAnnotation]
	if !ok {
		return TrackingID{}, ErrNotTracked
	}
	return ParseTrackingID(v)
}

// OwnedBy reports whether obj carries app's tracking id and the id describes
// obj itself.
func OwnedBy(obj *unstructured.Unstructured, app string) bool {
	id, err := TrackingOf(obj)
	return err == nil && id.App == app && id.Matches(obj)
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
