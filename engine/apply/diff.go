package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ResourceDiff is the comparison of one desired object with its live state.
type ResourceDiff struct {
	Ref Ref
	// Live is the live object, nil when it does not exist.
	Live    *unstructured.Unstructured
	Status  SyncStatus
	Missing bool
	// Diff summarizes what differs, for people: changed paths, and short
	// values except for Secrets.
	Diff string
	// Error is set when the API server rejected the dry run (an invalid
	// manifest, an admission denial); Status is then OutOfSync.
	Error string
}

// Diff compares each desired object with its live state. desired must be
// final: namespaces set and the tracking annotation set (plan.SetTracking),
// as ApplyWave will apply them. The comparison is made against a server-side
// dry-run apply of desired, so defaults and admission mutations are not
// drift; ignore rules are applied to both sides. An object whose kind the
// API server does not know yet (its CRD comes in the same sync) is
// OutOfSync and Missing, not an error. Only failures to reach the API server
// are returned as errors; per-object rejections are in ResourceDiff.Error.
func (a *Applier) Diff(ctx context.Context, desired []*unstructured.Unstructured, ignore []IgnoreDifference) ([]ResourceDiff, error) {
	rules, err := compileIgnore(ignore)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	refs := make([]Ref, len(desired))
	for i, d := range desired {
		refs[i] = RefOf(d)
	}
	live, err := a.fetch(ctx, refs)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	out := make([]ResourceDiff, len(desired))
	for i, d := range desired {
		rd := ResourceDiff{Ref: refs[i], Live: live[i].obj, Status: StatusOutOfSync}
		switch {
		case live[i].unknownKind:
			rd.Missing = true
			rd.Diff = fmt.Sprintf("kind %s is not served by the API server yet", d.GroupVersionKind().GroupKind())
		case live[i].obj == nil:
			rd.Missing = true
			rd.Diff = "missing from the cluster"
		default:
			if err := a.compare(ctx, d, live[i].obj, rules, &rd); err != nil {
				return nil, fmt.Errorf("diff %s: %w", refs[i], err)
			}
		}
		out[i] = rd
	}
	return out, nil
}

// compare dry-runs desired and fills rd from the normalized comparison.
func (a *Applier) compare(ctx context.Context, desired, live *unstructured.Unstructured, rules []ignoreRule, rd *ResourceDiff) error {
	dry := desired.DeepCopy()
	err := a.patch(ctx, dry, patchOptions{force: true, dryRun: true, validate: false})
	if isUnknownFieldError(err) {
		// Compare what Validate=false would apply; a strictly validated
		// object is rejected by ApplyWave anyway.
		dry = desired.DeepCopy()
		if _, derr := a.dropUnknownFields(ctx, dry); derr == nil {
			err = a.patch(ctx, dry, patchOptions{force: true, dryRun: true, validate: false})
		}
	}
	if err != nil {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			rd.Error = err.Error()
			rd.Diff = "dry run rejected"
			return nil
		}
		return err
	}
	changes, err := normalizedChanges(ctx, live, dry, rules)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		rd.Status = StatusSynced
		return nil
	}
	rd.Diff = summarize(changes, isSecret(live))
	return nil
}

// normalizedChanges compares live with want (a dry-run result) after
// removing server noise and ignored paths from both.
func normalizedChanges(ctx context.Context, live, want *unstructured.Unstructured, rules []ignoreRule) ([]change, error) {
	l := live.DeepCopy().Object
	w := want.DeepCopy().Object
	removePaths(l, ignoredPaths(ctx, rules, l, live))
	removePaths(w, ignoredPaths(ctx, rules, w, live))
	stripNoise(l)
	stripNoise(w)
	var changes []change
	diffValues(l, w, nil, &changes)
	return changes, ctx.Err()
}

func isSecret(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}

// isUnknownFieldError reports whether server-side apply refused fields the
// schema does not declare (it does so whatever fieldValidation says).
func isUnknownFieldError(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && strings.Contains(status.Status().Message, "field not declared in schema")
}
