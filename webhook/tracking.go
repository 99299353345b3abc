package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
)

// describes reports whether the tracking id names obj. Argo CD ignores an
// annotation copied onto another object (a Pod from its template, a
// resource duplicated by hand), and so does the webhook. The namespace is
// not compared for cluster-scoped objects.
func describes(t v1alpha1.TrackingID, obj map[string]any, clusterScoped bool) bool {
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
			if id, err := v1alpha1.ParseTrackingID(v); err == nil && describes(id, obj, clusterScoped) {
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
