package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// PropagationPolicy is how dependents of a pruned object are deleted.
type PropagationPolicy string

// Propagation policies of PrunePropagationPolicy.
const (
	PropagationForeground PropagationPolicy = "foreground"
	PropagationBackground PropagationPolicy = "background"
	PropagationOrphan     PropagationPolicy = "orphan"
)

// SyncOptions are Argo CD's sync options that change how objects are
// applied and pruned. The zero value is not the default: use
// [DefaultSyncOptions] or [ParseSyncOptions].
type SyncOptions struct {
	// CreateNamespace creates the destination namespace if missing
	// (Application level).
	CreateNamespace bool
	// Validate is false with Validate=false: the API server drops unknown
	// fields instead of rejecting the object (fieldValidation=Ignore).
	Validate bool
	// ServerSideApply is recorded for compatibility (tollgate always applies
	// server-side); with it, Force=true alone never deletes, as in Argo CD.
	ServerSideApply bool
	// Prune is false with Prune=false: the object is never pruned.
	Prune bool
	// PruneConfirm is set by Prune=confirm: the object is pruned only after
	// a person confirmed it, so the engine skips it.
	PruneConfirm bool
	// Delete is false with Delete=false: the object is kept when the
	// Application is deleted, and never pruned.
	Delete bool
	// DeleteConfirm is set by Delete=confirm.
	DeleteConfirm bool
	// PruneLast prunes the object after every other prune.
	PruneLast bool
	// Replace is Replace=true: an existing object is replaced with a PUT of
	// the whole manifest (kubectl replace) instead of applied; with Force,
	// it is deleted and created anew (kubectl replace --force). A
	// CustomResourceDefinition or a Namespace is replaced in place only.
	Replace bool
	// Force is Force=true. Without Replace, an object whose apply the API
	// server rejects as invalid (an immutable field changed) or conflicting
	// is deleted and created anew (kubectl apply --force), unless
	// ServerSideApply=true is set, as in Argo CD.
	Force bool
	// ApplyOutOfSyncOnly applies only objects whose diff is OutOfSync.
	ApplyOutOfSyncOnly bool
	// PrunePropagationPolicy is foreground (default), background or orphan.
	PrunePropagationPolicy PropagationPolicy
	// FailOnSharedResource fails the sync when an object is already tracked
	// by another Application.
	FailOnSharedResource bool
	// RespectIgnoreDifferences keeps the live value of ignored fields when
	// applying.
	RespectIgnoreDifferences bool
	// SkipDryRunOnMissingResource applies an object whose kind is not yet
	// known to the API server without a dry run (its CRD comes in the same
	// sync).
	SkipDryRunOnMissingResource bool
	// ClientSideApplyMigration is false with ClientSideApplyMigration=false:
	// the fields a client-side kubectl apply (or the Application's
	// argocd.argoproj.io/client-side-apply-migration-manager) owns are not
	// moved to tollgate's field manager before an apply, so fields dropped
	// from Git that they own stay. On by default, as in Argo CD.
	ClientSideApplyMigration bool
	// Unknown lists the options this package does not know, as given. They
	// are ignored, as Argo CD ignores them.
	Unknown []string
}

// DefaultSyncOptions returns the options in effect when none are given.
func DefaultSyncOptions() SyncOptions {
	return SyncOptions{
		Validate:                 true,
		Prune:                    true,
		Delete:                   true,
		PrunePropagationPolicy:   PropagationForeground,
		ClientSideApplyMigration: true,
	}
}

// ParseSyncOptions parses `Key=value` options in order, later ones
// overriding earlier ones: pass the Application's syncOptions first and an
// object's annotation options after them. Empty items are ignored; an item
// without `=` or a known key with a bad value is an error; unknown keys are
// collected in Unknown.
func ParseSyncOptions(opts ...string) (SyncOptions, error) {
	o := DefaultSyncOptions()
	for _, raw := range opts {
		item := strings.TrimSpace(raw)
		if item == "" {
			continue
		}
		key, val, ok := strings.Cut(item, "=")
		if !ok {
			return SyncOptions{}, fmt.Errorf("parse sync option %q: want Key=value", item)
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if err := o.set(key, val); err != nil {
			return SyncOptions{}, fmt.Errorf("parse sync option %q: %w", item, err)
		}
		if !knownOption(key) {
			o.Unknown = append(o.Unknown, item)
		}
	}
	return o, nil
}

// SyncOptionsFor returns the options of obj: appOpts (the Application's
// spec.syncPolicy.syncOptions) overridden by obj's
// `argocd.argoproj.io/sync-options` annotation.
func SyncOptionsFor(obj *unstructured.Unstructured, appOpts ...string) (SyncOptions, error) {
	all := append(append([]string(nil), appOpts...), SplitList(obj.GetAnnotations()[AnnotationSyncOptions])...)
	return ParseSyncOptions(all...)
}

// boolOptions maps each boolean option to its field.
var boolOptions = map[string]func(*SyncOptions) *bool{
	"CreateNamespace":             func(o *SyncOptions) *bool { return &o.CreateNamespace },
	"Validate":                    func(o *SyncOptions) *bool { return &o.Validate },
	"ServerSideApply":             func(o *SyncOptions) *bool { return &o.ServerSideApply },
	"PruneLast":                   func(o *SyncOptions) *bool { return &o.PruneLast },
	"Replace":                     func(o *SyncOptions) *bool { return &o.Replace },
	"Force":                       func(o *SyncOptions) *bool { return &o.Force },
	"ApplyOutOfSyncOnly":          func(o *SyncOptions) *bool { return &o.ApplyOutOfSyncOnly },
	"FailOnSharedResource":        func(o *SyncOptions) *bool { return &o.FailOnSharedResource },
	"RespectIgnoreDifferences":    func(o *SyncOptions) *bool { return &o.RespectIgnoreDifferences },
	"SkipDryRunOnMissingResource": func(o *SyncOptions) *bool { return &o.SkipDryRunOnMissingResource },
	"ClientSideApplyMigration":    func(o *SyncOptions) *bool { return &o.ClientSideApplyMigration },
}

// otherOptions are the sync options that are not booleans.
var otherOptions = []string{"Prune", "Delete", "PrunePropagationPolicy"}

func knownOption(key string) bool {
	_, ok := boolOptions[key]
	return ok || slices.Contains(otherOptions, key)
}

// KnownSyncOptions returns the keys of every sync option tollgate reads,
// sorted.
func KnownSyncOptions() []string {
	return slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(boolOptions)), otherOptions...)))
}

// set applies one known option; unknown keys are left alone.
func (o *SyncOptions) set(key, val string) error {
	if field, ok := boolOptions[key]; ok {
		b, err := parseBool(val)
		if err != nil {
			return err
		}
		*field(o) = b
		return nil
	}
	switch key {
	case "Prune":
		return setConfirmable(val, &o.Prune, &o.PruneConfirm)
	case "Delete":
		return setConfirmable(val, &o.Delete, &o.DeleteConfirm)
	case "PrunePropagationPolicy":
		switch p := PropagationPolicy(strings.ToLower(val)); p {
		case PropagationForeground, PropagationBackground, PropagationOrphan:
			o.PrunePropagationPolicy = p
		default:
			return fmt.Errorf("want foreground, background or orphan, got %q", val)
		}
	}
	return nil
}

func setConfirmable(val string, enabled, confirm *bool) error {
	if strings.EqualFold(val, "confirm") {
		*enabled, *confirm = true, true
		return nil
	}
	b, err := parseBool(val)
	if err != nil {
		return fmt.Errorf("want true, false or confirm, got %q", val)
	}
	*enabled, *confirm = b, false
	return nil
}

func parseBool(val string) (bool, error) {
	switch strings.ToLower(val) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("want true or false, got %q", val)
}
