package v1alpha1

import (
	"fmt"
	"strings"
)

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
