package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// probePrefix names the throw-away objects of a dry-run create.
const probePrefix = "tollgate-probe-"

// dropUnknownFields implements Validate=false. Server-side apply rejects
// fields the schema does not declare whatever fieldValidation says, so the
// fields are found by a dry-run create of a renamed copy with
// fieldValidation=Ignore (the API server decodes it against the real schema,
// CRDs included, and drops what it does not know) and removed from obj.
// Create only adds defaults, so whatever obj has and the result lacks is
// unknown. Secret stringData is kept: the API server moves it into data.
// It returns the dropped paths; an API error (the namespace does not exist
// yet, say) is returned for the caller to retry later.
func (a *Applier) dropUnknownFields(ctx context.Context, obj *unstructured.Unstructured) ([]string, error) {
	probe := obj.DeepCopy()
	probe.SetName("")
	probe.SetGenerateName(probePrefix)
	probe.SetResourceVersion("")
	err := a.client.Create(ctx, probe, client.DryRunAll,
		client.FieldValidation(metav1.FieldValidationIgnore), client.FieldOwner(a.opts.FieldManager))
	if err != nil {
		return nil, err
	}
	var missing []fieldPath
	missingPaths(obj.Object, probe.Object, nil, &missing)
	missing = slices.DeleteFunc(missing, func(p fieldPath) bool {
		switch {
		case len(p) == 2 && p[0] == "metadata" && (p[1] == "name" || p[1] == "generateName"):
			return true
		case len(p) >= 1 && p[0] == "stringData" && isSecret(obj):
			return true
		}
		return false
	})
	removePaths(obj.Object, missing)
	out := make([]string, len(missing))
	for i, p := range missing {
		out[i] = p.String()
	}
	slices.Sort(out)
	return out, nil
}

// missingPaths appends the paths of want that got does not have.
func missingPaths(want, got any, p fieldPath, out *[]fieldPath) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return
		}
		for k, v := range w {
			gv, exists := g[k]
			cp := append(slices.Clone(p), k)
			if !exists {
				*out = append(*out, cp)
				continue
			}
			missingPaths(v, gv, cp, out)
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			return
		}
		for i, v := range w {
			if i < len(g) {
				missingPaths(v, g[i], append(slices.Clone(p), i), out)
			}
		}
	}
}

// probeUnvalidated drops unknown fields of a Validate=false item once. An
// API error leaves the item unprobed, to be tried again before applying.
func (a *Applier) probeUnvalidated(ctx context.Context, it *item) error {
	if it.probed || it.task.SyncOptions.Validate || it.unknownKind {
		return nil
	}
	dropped, err := a.dropUnknownFields(ctx, it.obj)
	if err != nil {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return nil
		}
		return fmt.Errorf("probe %s for unknown fields: %w", it.ref, err)
	}
	it.probed = true
	if len(dropped) > 0 {
		it.notes = append(it.notes, "Validate=false: dropped unknown fields "+strings.Join(dropped, ", "))
	}
	return nil
}
