package appops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// Outcomes of Create, as argocd app create prints them.
const (
	Created   = "created"
	Unchanged = "unchanged"
	Updated   = "updated"
)

// ErrSpecDiffers is why Create refuses an Application that exists with
// another spec, labels, annotations or finalizers when not asked to
// upsert: Argo CD's API server's message.
var ErrSpecDiffers = errors.New("existing application spec is different, use upsert flag to force update")

// Create creates app as Argo CD's API server does for argocd app create:
// an operation in the request is dropped (a sync is requested through
// Sync, never set at creation), an empty project is "default". When an
// Application of that name exists, Create does nothing if its spec,
// labels, annotations and finalizers are those of app (Unchanged);
// otherwise it is refused with ErrSpecDiffers unless upsert, which
// replaces the spec and finalizers and merges the labels and annotations
// (Updated), under the existing Application's resourceVersion. app is set
// to the Application as written, or as it is.
func Create(ctx context.Context, c client.Client, app *v1alpha1.Application, upsert bool) (string, error) {
	app.Operation = nil
	app.Status = v1alpha1.ApplicationStatus{}
	app.ResourceVersion = ""
	if app.Spec.Project == "" {
		app.Spec.Project = "default"
	}
	err := c.Create(ctx, app)
	if err == nil {
		return Created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create application %s: %w", app.Name, err)
	}
	existing, err := Get(ctx, c, types.NamespacedName{Namespace: app.Namespace, Name: app.Name})
	if err != nil {
		return "", err
	}
	if sameRequest(existing, app) {
		*app = *existing
		return Unchanged, nil
	}
	if !upsert {
		return "", &RefusedError{Err: ErrSpecDiffers}
	}
	want := app.DeepCopy()
	if err := Edit(ctx, c, existing, "update", func(a *v1alpha1.Application) {
		a.Spec = want.Spec
		a.Labels = mergeMaps(a.Labels, want.Labels)
		a.Annotations = mergeMaps(a.Annotations, want.Annotations)
		a.Finalizers = want.Finalizers
	}); err != nil {
		return "", err
	}
	*app = *existing
	return Updated, nil
}

// sameRequest is Argo CD's test of an idempotent create: the spec,
// labels, annotations and finalizers are deeply equal (nil and empty
// alike, as they are after a round trip through the API server).
func sameRequest(existing, app *v1alpha1.Application) bool {
	norm := func(a *v1alpha1.Application) []any {
		return []any{a.Spec, nilIfEmpty(a.Labels), nilIfEmpty(a.Annotations), nilIfEmptySlice(a.Finalizers)}
	}
	return reflect.DeepEqual(roundTrip(norm(existing)), roundTrip(norm(app)))
}

// roundTrip is v as JSON reads it back, so that nil and empty members
// the API server drops compare equal.
func roundTrip(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return v
	}
	return out
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func nilIfEmptySlice(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// mergeMaps is a with b's entries set over it (Argo CD's
// collections.Merge).
func mergeMaps(a, b map[string]string) map[string]string {
	if len(a) == 0 && len(b) == 0 {
		return a
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

// Patch types of PatchRequest, argocd app patch's --type.
const (
	PatchTypeJSON  = "json"
	PatchTypeMerge = "merge"
)

// PatchRequest applies patch, of typ json (RFC 6902, the default) or merge
// (RFC 7386), to the Application key as Argo CD's API server does for
// argocd app patch: the patch is applied to the Application as read, and
// the spec, labels, annotations and finalizers of the result are written
// (through Edit, under the resourceVersion read); what the patch does to
// the status or the operation is not. It returns the Application as
// written.
func PatchRequest(ctx context.Context, c client.Client, key types.NamespacedName, patch, typ string) (*v1alpha1.Application, error) {
	app, err := Get(ctx, c, key)
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(app)
	if err != nil {
		return nil, fmt.Errorf("encode application %s: %w", key.Name, err)
	}
	var patched []byte
	switch typ {
	case PatchTypeJSON, "":
		p, err := jsonpatch.DecodePatch([]byte(patch))
		if err != nil {
			return nil, refused("error decoding json patch: %v", err)
		}
		if patched, err = p.Apply(doc); err != nil {
			return nil, refused("error applying patch: %v", err)
		}
	case PatchTypeMerge:
		if patched, err = jsonpatch.MergePatch(doc, []byte(patch)); err != nil {
			return nil, refused("error calculating merge patch: %v", err)
		}
	default:
		return nil, refused("Patch type '%s' is not supported", typ)
	}
	var want v1alpha1.Application
	if err := json.Unmarshal(patched, &want); err != nil {
		return nil, refused("error unmarshaling patched app: %v", err)
	}
	err = Edit(ctx, c, app, "patch", func(a *v1alpha1.Application) {
		a.Spec = want.Spec
		a.Labels = want.Labels
		a.Annotations = want.Annotations
		a.Finalizers = want.Finalizers
	})
	return app, err
}
