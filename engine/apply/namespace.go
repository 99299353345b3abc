package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EnsureNamespace creates the namespace name if it does not exist
// (CreateNamespace=true). With labels or annotations (Argo CD's
// managedNamespaceMetadata) it applies them server-side as tollgate's
// fields, without force: a label another manager owns with another value is
// a conflict error.
func (a *Applier) EnsureNamespace(ctx context.Context, name string, labels, annotations map[string]string) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	if len(labels) > 0 || len(annotations) > 0 {
		ns.SetLabels(labels)
		ns.SetAnnotations(annotations)
		if err := a.patch(ctx, ns, patchOptions{validate: true}); err != nil {
			return fmt.Errorf("ensure namespace %s: %w", name, err)
		}
		return nil
	}
	f, err := a.get(ctx, RefOf(ns))
	if err != nil {
		return fmt.Errorf("ensure namespace %s: %w", name, err)
	}
	if f.obj != nil {
		return nil
	}
	if err := a.client.Create(ctx, ns, client.FieldOwner(a.opts.FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ensure namespace %s: %w", name, err)
	}
	return nil
}
