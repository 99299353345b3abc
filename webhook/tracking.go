package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/policies"
)

// TrackingID is a parsed TrackingIDAnnotation:
// "<app>:<group>/<kind>:<namespace>/<name>". Group and namespace are empty
// for the core group and for cluster-scoped objects.
type TrackingID struct {
	// App is the application instance name: "<name>" for an Application in
	// the Argo CD namespace, "<namespace>_<name>" otherwise.
	App       string
	Group     string
	Kind      string
	Namespace string
	Name      string
}

// ParseTrackingID parses a TrackingIDAnnotation value. Object names may
// contain ":" (system:controller:x), so only the first two separate fields.
func ParseTrackingID(v string) (TrackingID, error) {
	app, rest, ok := strings.Cut(v, ":")
	if !ok || app == "" {
		return TrackingID{}, fmt.Errorf("parse tracking id %q: want <app>:<group>/<kind>:<namespace>/<name>", v)
	}
	gk, nsName, ok := strings.Cut(rest, ":")
	if !ok {
		return TrackingID{}, fmt.Errorf("parse tracking id %q: want <app>:<group>/<kind>:<namespace>/<name>", v)
	}
	group, kind, ok := strings.Cut(gk, "/")
	if !ok || kind == "" || strings.Contains(kind, "/") {
		return TrackingID{}, fmt.Errorf("parse tracking id %q: invalid <group>/<kind> %q", v, gk)
	}
	ns, name, ok := strings.Cut(nsName, "/")
	if !ok || name == "" {
		return TrackingID{}, fmt.Errorf("parse tracking id %q: invalid <namespace>/<name> %q", v, nsName)
	}
	return TrackingID{App: app, Group: group, Kind: kind, Namespace: ns, Name: name}, nil
}

// describes reports whether the tracking id names obj. Argo CD ignores an
// annotation copied onto another object (a Pod from its template, a
// resource duplicated by hand), and so does the webhook. The namespace is
// not compared for cluster-scoped objects.
func (t TrackingID) describes(obj map[string]any, clusterScoped bool) bool {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if t.Kind != kind || t.Group != policies.GroupOf(apiVersion) || t.Name != stringAt(obj, "metadata", "name") {
		return false
	}
	return clusterScoped || t.Namespace == stringAt(obj, "metadata", "namespace")
}

// errBadInstance is returned for an application instance name that cannot
// name an Application.
var errBadInstance = errors.New("invalid application instance name")

// applicationKey resolves an application instance name ("<name>" or
// "<namespace>_<name>") to the Application's namespace and name.
func (h *Handler) applicationKey(instance string) (types.NamespacedName, error) {
	ns, name := h.argocdNS, instance
	if before, after, ok := strings.Cut(instance, "_"); ok {
		ns, name = before, after
	}
	if !namespacePattern.MatchString(ns) || name == "" || len(name) > 253 || strings.ContainsAny(name, "/_") {
		return types.NamespacedName{}, fmt.Errorf("%w %q", errBadInstance, instance)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// owner returns the Application that owns obj by Argo CD's tracking
// metadata, or nil when none does: no or unusable tracking metadata, or an
// Application that does not exist (any more). Only cache failures are
// errors.
func (h *Handler) owner(ctx context.Context, obj map[string]any, clusterScoped bool) (map[string]any, error) {
	method := h.cfg.trackingMethod()
	if method != TrackingLabel {
		if v := stringAt(obj, "metadata", "annotations", TrackingIDAnnotation); v != "" {
			if id, err := ParseTrackingID(v); err == nil && id.describes(obj, clusterScoped) {
				return h.applicationByInstance(ctx, id.App)
			}
		}
	}
	if method != TrackingAnnotation {
		if v := stringAt(obj, "metadata", "labels", InstanceLabel); v != "" {
			return h.applicationByInstance(ctx, v)
		}
	}
	return nil, nil
}

// applicationByInstance returns the Application of an instance name, nil
// when the name is unusable or the Application does not exist.
func (h *Handler) applicationByInstance(ctx context.Context, instance string) (map[string]any, error) {
	key, err := h.applicationKey(instance)
	if err != nil {
		return nil, nil
	}
	return h.getApplication(ctx, key)
}
