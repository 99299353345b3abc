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
// final: namespaces set and the tracking annotation set (v1alpha1.SetTracking),
// as ApplyWave will apply them. The comparison is made against a server-side
// dry-run apply of desired, so defaults and admission mutations are not
// drift; ignore rules are applied to both sides. An object whose kind the
// API server does not know yet (its CRD comes in the same sync) is
// OutOfSync and Missing, not an error. Only failures to reach the API server
// are returned as errors; per-object rejections are in ResourceDiff.Error.
func (a *Applier) Diff(ctx context.Context, desired []*unstructured.Unstructured, ignore []IgnoreDifference) ([]ResourceDiff, error) {
	return a.diff(ctx, desired, ignore, nil)
}

// DetailedDiff is a ResourceDiff with the two sides as they were compared,
// for showing them (gitops-engine's diff.DiffResult).
type DetailedDiff struct {
	ResourceDiff
	// NormalizedLive is the live object without status, server-maintained
	// metadata and ignored paths; nil when it does not exist.
	NormalizedLive map[string]any
	// PredictedLive is the server-side dry-run apply of the desired object,
	// normalized in the same way; when there is no live object to apply
	// to, the desired object itself without status. Nil when the dry run
	// was rejected (Error).
	PredictedLive map[string]any
}

// DiffDetailed is Diff with both sides of each comparison. Secret data is
// not hidden: the caller must not show it as it is.
func (a *Applier) DiffDetailed(ctx context.Context, desired []*unstructured.Unstructured, ignore []IgnoreDifference) ([]DetailedDiff, error) {
	sides := make([]DetailedDiff, len(desired))
	diffs, err := a.diff(ctx, desired, ignore, sides)
	if err != nil {
		return nil, err
	}
	for i := range diffs {
		sides[i].ResourceDiff = diffs[i]
	}
	return sides, nil
}

// diff is Diff; when sides is not nil (one per desired object), it also
// keeps the normalized sides there.
func (a *Applier) diff(ctx context.Context, desired []*unstructured.Unstructured, ignore []IgnoreDifference, sides []DetailedDiff) ([]ResourceDiff, error) {
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
		var sd *DetailedDiff
		if sides != nil {
			sd = &sides[i]
		}
		switch {
		case live[i].unknownKind:
			rd.Missing = true
			rd.Diff = fmt.Sprintf("kind %s is not served by the API server yet", d.GroupVersionKind().GroupKind())
		case live[i].obj == nil:
			rd.Missing = true
			rd.Diff = "missing from the cluster"
		default:
			if err := a.compare(ctx, d, live[i].obj, rules, &rd, sd); err != nil {
				return nil, fmt.Errorf("diff %s: %w", refs[i], err)
			}
		}
		if rd.Missing && sd != nil {
			sd.PredictedLive = Normalized(d)
		}
		out[i] = rd
	}
	return out, nil
}

// compare dry-runs desired and fills rd from the normalized comparison, and
// sd, when not nil, with the normalized sides.
func (a *Applier) compare(ctx context.Context, desired, live *unstructured.Unstructured, rules []ignoreRule, rd *ResourceDiff, sd *DetailedDiff) error {
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
	l, w := normalize(ctx, live, dry, rules)
	if sd != nil {
		sd.NormalizedLive, sd.PredictedLive = l, w
	}
	changes := changesBetween(l, w)
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(changes) == 0 {
		rd.Status = StatusSynced
		return nil
	}
	rd.Diff = summarize(changes, isSecret(live))
	return nil
}

// normalize returns copies of live and want (a dry-run result) without
// server noise and ignored paths, as they are compared.
func normalize(ctx context.Context, live, want *unstructured.Unstructured, rules []ignoreRule) (l, w map[string]any) {
	l = live.DeepCopy().Object
	w = want.DeepCopy().Object
	removePaths(l, ignoredPaths(ctx, rules, l, live))
	removePaths(w, ignoredPaths(ctx, rules, w, live))
	stripNoise(l)
	stripNoise(w)
	return l, w
}

// Normalized returns a copy of obj without status and server-maintained
// metadata, as Diff compares objects (without ignore rules).
func Normalized(obj *unstructured.Unstructured) map[string]any {
	o := obj.DeepCopy().Object
	stripNoise(o)
	return o
}

// normalizedChanges compares live with want (a dry-run result) after
// removing server noise and ignored paths from both.
func normalizedChanges(ctx context.Context, live, want *unstructured.Unstructured, rules []ignoreRule) ([]change, error) {
	l, w := normalize(ctx, live, want, rules)
	return changesBetween(l, w), ctx.Err()
}

// changesBetween returns the paths where the normalized l and w differ.
func changesBetween(l, w map[string]any) []change {
	var changes []change
	diffValues(l, w, nil, &changes)
	return changes
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
