package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// EnsureNamespace creates the namespace name if it does not exist
// (CreateNamespace=true) for Application app. With labels or annotations
// (Argo CD's managedNamespaceMetadata) it applies them server-side as
// tollgate's fields, without force: a label another manager owns with
// another value is a conflict error. A namespace another Application
// tracks (its manifest is in that Application's render) gets none: every
// Application applies under the one field manager, so the apply would
// remove that Application's labels and tracking id; it is an error naming
// that Application (Argo CD applies and removes them).
func (a *Applier) EnsureNamespace(ctx context.Context, app, name string, labels, annotations map[string]string) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	f, err := a.get(ctx, RefOf(ns))
	if err != nil {
		return fmt.Errorf("ensure namespace %s: %w", name, err)
	}
	if len(labels) > 0 || len(annotations) > 0 {
		if f.obj != nil {
			if owner, _ := v1alpha1.OwnerOf(f.obj, a.opts.Tracking, v1alpha1.OwnerOptions{}); owner != "" && owner != app {
				return fmt.Errorf("ensure namespace %s: it is part of application %q, whose labels and annotations managedNamespaceMetadata would remove; set them in that application's Namespace manifest", name, owner)
			}
		}
		ns.SetLabels(labels)
		ns.SetAnnotations(annotations)
		if err := a.patch(ctx, ns, patchOptions{validate: true}); err != nil {
			return fmt.Errorf("ensure namespace %s: %w", name, err)
		}
		return nil
	}
	if f.obj != nil {
		return nil
	}
	if err := a.client.Create(ctx, ns, client.FieldOwner(a.opts.FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ensure namespace %s: %w", name, err)
	}
	return nil
}
