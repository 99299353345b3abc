package apply

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// patchOptions select how one server-side apply request is made.
type patchOptions struct {
	// force takes ownership of conflicting fields.
	force bool
	// dryRun asks the API server to run every stage but persist nothing.
	dryRun bool
	// validate rejects unknown and duplicate fields (fieldValidation=Strict);
	// false drops them (Ignore), Argo CD's Validate=false.
	validate bool
}

// patch server-side applies obj and replaces it with the API server's
// answer.
func (a *Applier) patch(ctx context.Context, obj *unstructured.Unstructured, o patchOptions) error {
	body := applyBody(obj)
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode %s: %w", RefOf(obj), err)
	}
	opts := []client.PatchOption{client.FieldOwner(a.opts.FieldManager)}
	if o.force {
		opts = append(opts, client.ForceOwnership)
	}
	if o.dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if o.validate {
		opts = append(opts, client.FieldValidation(metav1.FieldValidationStrict))
	} else {
		opts = append(opts, client.FieldValidation(metav1.FieldValidationIgnore))
	}
	return a.client.Patch(ctx, obj, client.RawPatch(types.ApplyPatchType, data), opts...)
}

// applyBody is obj without the server-maintained metadata a manifest may
// carry by accident (a stale resourceVersion would be a precondition).
func applyBody(obj *unstructured.Unstructured) map[string]any {
	body := make(map[string]any, len(obj.Object))
	for k, v := range obj.Object {
		body[k] = v
	}
	if md, ok := obj.Object["metadata"].(map[string]any); ok {
		clean := make(map[string]any, len(md))
		for k, v := range md {
			switch k {
			case "managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds":
				continue
			}
			clean[k] = v
		}
		body["metadata"] = clean
	}
	return body
}
