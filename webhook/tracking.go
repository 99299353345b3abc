package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

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
// errors. The metadata is read as admission reads it (v1alpha1.OwnerOf with
// every OwnerOptions field set; see OwnerOptions for why it differs from
// the engine's reading).
func (h *Handler) owner(ctx context.Context, obj map[string]any, clusterScoped bool) (*v1alpha1.Application, error) {
	instance, _ := v1alpha1.OwnerOf(&unstructured.Unstructured{Object: obj}, h.cfg.trackingMethod(), v1alpha1.OwnerOptions{
		ClusterScoped:                clusterScoped,
		LabelMethodIgnoresAnnotation: true,
		LabelFallback:                true,
		LabelDespiteOwnerReferences:  true,
	})
	if instance == "" {
		return nil, nil
	}
	return h.applicationByInstance(ctx, instance)
}

// applicationByInstance returns the Application of an instance name, nil
// when the name is unusable or the Application does not exist.
func (h *Handler) applicationByInstance(ctx context.Context, instance string) (*v1alpha1.Application, error) {
	key, err := h.applicationKey(instance)
	if err != nil {
		return nil, nil
	}
	return h.getApplication(ctx, key)
}
