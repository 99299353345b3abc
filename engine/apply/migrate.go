package apply

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// DefaultMigrationManager is the field manager whose fields move to
// tollgate's before an apply unless the Application names another: the
// manager of a client-side `kubectl apply`, as Argo CD's default.
const DefaultMigrationManager = "kubectl-client-side-apply"

// AnnotationMigrationManager on an Application names the field manager
// whose fields move to tollgate's before an apply instead of
// DefaultMigrationManager, as in Argo CD (an operator no longer running,
// say).
const AnnotationMigrationManager = "argocd.argoproj.io/client-side-apply-migration-manager"

// ArgoCDManager is the field manager of Argo CD's application controller
// (its server-side apply manager; the manager of its client-side applies
// too).
const ArgoCDManager = "argocd-controller"

// migrateFields performs the ClientSideApplyMigration of it before it is
// applied server-side, as gitops-engine's syncContext.applyObject does
// (performClientSideApplyMigration, pkg/sync/sync_context.go): the fields
// the migration manager (WaveOptions.MigrationManager, default
// DefaultMigrationManager) owns by Update move to tollgate's Apply entry,
// so that the apply removes those the manifest no longer has. Without it a
// field that `kubectl apply` created and Git then dropped would stay for
// ever, owned by a manager nobody runs any more.
//
// On an object the Application already tracks (it.force), the fields of
// Argo CD's controller (ArgoCDManager, by Apply or by Update) move too: they
// are what Argo CD applied for the same Application before tollgate took
// over, and a field removed from Git must go as it would have under Argo CD.
// Argo CD has no such step (it is the manager itself); an object tracked by
// another Application keeps its managers, and so does an object whose live
// copy is not ours when Argo CD's manager is involved.
//
// Nothing is migrated with ClientSideApplyMigration=false, for objects that
// are replaced or re-created rather than applied, or when the live object
// has none of those managers. A failure to migrate fails it, as in Argo CD.
func (a *Applier) migrateFields(ctx context.Context, it *item, opts WaveOptions) error {
	if it.live == nil || !it.task.SyncOptions.ClientSideApplyMigration {
		return nil
	}
	if m := it.mode(); m != writeApply && m != writeApplyOrRecreate {
		return nil
	}
	updaters := sets.New(cmp.Or(opts.MigrationManager, DefaultMigrationManager))
	appliers := sets.New[string]()
	switch owner, _ := v1alpha1.OwnerOf(it.live, a.opts.Tracking, v1alpha1.OwnerOptions{}); {
	case it.force:
		updaters.Insert(ArgoCDManager)
		appliers.Insert(ArgoCDManager)
	case owner != "":
		return nil // another Application's: its own syncs migrate it
	}
	from := movedManagers(it.live, updaters, appliers, a.opts.FieldManager)
	if len(from) == 0 {
		return nil
	}
	live := it.live.DeepCopy()
	if err := a.moveFields(ctx, live, updaters, appliers); err != nil {
		return a.failed(it, "client-side apply migration", err)
	}
	logr.FromContextOrDiscard(ctx).V(1).Info("Moved fields to the field manager", "object", it.ref.String(), "from", from)
	it.notes = append(it.notes, fmt.Sprintf("fields of %s moved to %s (ClientSideApplyMigration)", strings.Join(from, ", "), a.opts.FieldManager))
	return nil
}

// movedManagers returns the managers of obj's entries that moveFields
// would hand over to fm, sorted.
func movedManagers(obj *unstructured.Unstructured, updaters, appliers sets.Set[string], fm string) []string {
	found := sets.New[string]()
	for _, e := range obj.GetManagedFields() {
		if e.Subresource != "" || e.Manager == fm {
			continue
		}
		if e.Operation == metav1.ManagedFieldsOperationUpdate && updaters.Has(e.Manager) ||
			e.Operation == metav1.ManagedFieldsOperationApply && appliers.Has(e.Manager) {
			found.Insert(e.Manager)
		}
	}
	return sets.List(found)
}

// moveFields gives the field manager's Apply entry the fields of the
// Update entries of updaters and of the Apply entries of appliers, in
// obj's managedFields, with obj's resourceVersion as a precondition, read
// again on a conflict. Update entries are merged as kubectl does when an
// object moves from client-side to server-side apply
// (k8s.io/client-go/util/csaupgrade); Apply entries are merged alike. obj is
// updated; an object gone in between is left alone.
func (a *Applier) moveFields(ctx context.Context, obj *unstructured.Unstructured, updaters, appliers sets.Set[string]) error {
	fm := a.opts.FieldManager
	uid := obj.GetUID()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		patch, err := handOverPatch(obj, updaters, appliers, fm)
		if err != nil || patch == nil {
			return err
		}
		err = a.client.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(fm))
		if !apierrors.IsConflict(err) {
			return err
		}
		f, gerr := a.get(ctx, RefOf(obj))
		switch {
		case gerr != nil:
			return gerr
		case f.obj == nil || f.obj.GetUID() != uid:
			return nil // gone: nothing left to own
		}
		obj.Object = f.obj.Object
		return err
	})
}

// handOverPatch returns the JSON patch that moves the fields of updaters'
// Update entries and appliers' Apply entries to fm's Apply entry, with the
// resourceVersion as the precondition (csaupgrade.UpgradeManagedFieldsPatch's
// form), or nil when nothing moves.
func handOverPatch(obj *unstructured.Unstructured, updaters, appliers sets.Set[string], fm string) ([]byte, error) {
	if appliers.Len() == 0 {
		return csaupgrade.UpgradeManagedFieldsPatch(obj, updaters, fm)
	}
	moved := obj.DeepCopy()
	if err := csaupgrade.UpgradeManagedFields(moved, updaters, fm); err != nil {
		return nil, err
	}
	entries, err := mergeApplyEntries(moved.GetManagedFields(), appliers, fm)
	if err != nil {
		return nil, err
	}
	if reflect.DeepEqual(obj.GetManagedFields(), entries) {
		return nil, nil
	}
	return json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/managedFields", "value": entries},
		{"op": "replace", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
	})
}

// mergeApplyEntries moves the fields of the Apply entries of appliers (not
// of a subresource) into fm's Apply entry and drops them. Without an entry
// of fm, the first one becomes fm's. An entry of another apiVersion than
// fm's is left alone: field sets of different versions do not merge.
func mergeApplyEntries(entries []metav1.ManagedFieldsEntry, appliers sets.Set[string], fm string) ([]metav1.ManagedFieldsEntry, error) {
	isApply := func(name string) func(metav1.ManagedFieldsEntry) bool {
		return func(e metav1.ManagedFieldsEntry) bool {
			return e.Manager == name && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ""
		}
	}
	entries = slices.Clone(entries)
	for _, name := range sets.List(appliers) {
		src := slices.IndexFunc(entries, isApply(name))
		if src < 0 || name == fm {
			continue
		}
		dst := slices.IndexFunc(entries, isApply(fm))
		if dst < 0 {
			entries[src].Manager = fm
			continue
		}
		if entries[dst].APIVersion != entries[src].APIVersion {
			continue
		}
		union, err := fieldSet(entries[dst])
		if err != nil {
			return nil, err
		}
		other, err := fieldSet(entries[src])
		if err != nil {
			return nil, err
		}
		raw, err := union.Union(other).ToJSON()
		if err != nil {
			return nil, fmt.Errorf("encode fields of %s: %w", fm, err)
		}
		entries[dst].FieldsV1 = &metav1.FieldsV1{Raw: raw}
		entries = slices.Delete(entries, src, src+1)
	}
	return entries, nil
}

// fieldSet decodes the fields of e.
func fieldSet(e metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	s := &fieldpath.Set{}
	if e.FieldsV1 == nil {
		return s, nil
	}
	if err := s.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
		return nil, fmt.Errorf("decode fields of %s: %w", e.Manager, err)
	}
	return s, nil
}
