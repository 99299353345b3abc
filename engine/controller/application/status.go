package application

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// maxConditionMessage bounds a condition message; long lists are cut.
const maxConditionMessage = 8 << 10

// conditionEdits are the condition changes one reconcile decided: a type
// mapped to its message, or to nil to remove it. Types not mentioned are
// left as they are.
type conditionEdits map[string]*string

func (e conditionEdits) set(typ, msg string) {
	if len(msg) > maxConditionMessage {
		msg = msg[:maxConditionMessage] + "\n... (truncated)"
	}
	e[typ] = &msg
}

func (e conditionEdits) clear(typ string) { e[typ] = nil }

// apply merges the edits into conds. A condition whose message did not
// change keeps its lastTransitionTime. The result is sorted by type. It
// also returns the types that were added or whose message changed.
func (e conditionEdits) apply(conds []v1alpha1.ApplicationCondition, now metav1.Time) ([]v1alpha1.ApplicationCondition, []string) {
	var out []v1alpha1.ApplicationCondition
	var changed []string
	seen := map[string]bool{}
	for _, c := range conds {
		edit, ok := e[c.Type]
		seen[c.Type] = true
		switch {
		case !ok:
			out = append(out, c)
		case edit == nil:
		case *edit == c.Message:
			out = append(out, c)
		default:
			out = append(out, v1alpha1.ApplicationCondition{Type: c.Type, Message: *edit, LastTransitionTime: &now})
			changed = append(changed, c.Type)
		}
	}
	for typ, edit := range e {
		if seen[typ] || edit == nil {
			continue
		}
		out = append(out, v1alpha1.ApplicationCondition{Type: typ, Message: *edit, LastTransitionTime: &now})
		changed = append(changed, typ)
	}
	slices.SortStableFunc(out, func(a, b v1alpha1.ApplicationCondition) int {
		switch {
		case a.Type < b.Type:
			return -1
		case a.Type > b.Type:
			return 1
		}
		return 0
	})
	slices.Sort(changed)
	return out, changed
}

// conditionMessage returns the message of app's condition of type typ.
func conditionMessage(app *v1alpha1.Application, typ string) (string, bool) {
	for _, c := range app.Status.Conditions {
		if c.Type == typ {
			return c.Message, true
		}
	}
	return "", false
}

// writeApplication sends the changes made to app since orig as one JSON
// merge patch: only the fields that changed are sent, so fields tollgate's
// types do not know are never dropped. When ranOp is set the operation is
// cleared too, and when fence is set the pass ran an operation under that
// replica's fence (AnnotationOperationReplica), which app no longer has.
// Either write carries an optimistic lock: if the Application changed since
// it was read, it is read again; a different operation there (a new
// request) is kept, and a fence taken by another replica meanwhile drops
// the write (errFenceLost). app's metadata is updated from the answer.
func writeApplication(ctx context.Context, c client.Client, orig, app *v1alpha1.Application, ranOp *v1alpha1.Operation, fence string) error {
	if ranOp == nil && fence == "" {
		return patchIfChanged(ctx, c, orig, app, false)
	}
	if ranOp != nil {
		app.Operation = nil
	}
	err := patchIfChanged(ctx, c, orig, app, true)
	if !apierrors.IsConflict(err) {
		return err
	}
	// Someone wrote the Application meanwhile: read it again and clear
	// the operation only if it is still the one that ran; a new request
	// stays.
	var fresh v1alpha1.Application
	if err := c.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, &fresh); err != nil {
		return fmt.Errorf("read application again: %w", err)
	}
	if fence != "" && fresh.Annotations[AnnotationOperationReplica] != fence {
		return errFenceLost
	}
	base := fresh.DeepCopy()
	fresh.Status = app.Status
	if fence != "" {
		delete(fresh.Annotations, AnnotationOperationReplica)
	}
	switch {
	case ranOp != nil && equality.Semantic.DeepEqual(fresh.Operation, ranOp):
		fresh.Operation = nil
	case fresh.Operation == nil:
		fresh.Operation = app.Operation // a retry the pass set, or none
	}
	if err := patchIfChanged(ctx, c, base, &fresh, true); err != nil {
		return err
	}
	*app = fresh
	return nil
}

// patchIfChanged merge-patches app from orig, skipping the call when
// nothing changed, and takes app's metadata (resourceVersion) from the
// answer. With lock, the patch carries orig's resourceVersion, so it fails
// with a conflict when the Application changed meanwhile.
func patchIfChanged(ctx context.Context, c client.Client, orig, app *v1alpha1.Application, lock bool) error {
	before, err := json.Marshal(orig)
	if err != nil {
		return fmt.Errorf("compute application patch: %w", err)
	}
	after, err := json.Marshal(app)
	if err != nil {
		return fmt.Errorf("compute application patch: %w", err)
	}
	patch, err := mergePatch(before, after, applicationPatchDepth)
	if err != nil {
		return fmt.Errorf("compute application patch: %w", err)
	}
	if patch == nil {
		return nil
	}
	if lock {
		if patch, err = withResourceVersion(patch, orig.ResourceVersion); err != nil {
			return fmt.Errorf("compute application patch: %w", err)
		}
	}
	// The answer is read as metadata only: decoding the whole Application
	// back (its status lists every resource) costs more than the patch,
	// and app already holds the status just written.
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(v1alpha1.ApplicationGroupVersionKind)
	meta.SetNamespace(app.Namespace)
	meta.SetName(app.Name)
	if err := c.Patch(ctx, meta, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("patch application %s: %w", app.Name, err)
	}
	app.ObjectMeta = meta.ObjectMeta
	return nil
}

// applicationPatchDepth is how many object levels mergePatch compares
// field by field before it diffs whole values: the Application's top
// level, then metadata, spec and status fields. A resync usually changes a
// timestamp or two of the status, while the status lists every resource
// and the sync history; comparing raw fields skips those without decoding
// them.
const applicationPatchDepth = 2

// mergePatch returns the JSON merge patch (RFC 7386) that turns document a
// into b, or nil when they are equal. Objects are compared key by key for
// depth levels, each key's raw value compared as bytes (both documents come
// from encoding/json, which writes a value the same way every time), and
// only values that differ are diffed in depth.
func mergePatch(a, b []byte, depth int) ([]byte, error) {
	if bytes.Equal(a, b) {
		return nil, nil
	}
	if !json.Valid(a) || !json.Valid(b) {
		return b, nil // as a failed decoding: the patch is the new value
	}
	am, aok := members(a)
	bm, bok := members(b)
	if !aok || !bok {
		return b, nil // not both objects: the patch is the new value
	}
	if depth == 0 {
		return jsonpatch.CreateMergePatch(a, b)
	}
	patch := map[string]json.RawMessage{}
	for k := range am {
		if _, ok := bm[k]; !ok {
			patch[k] = json.RawMessage("null")
		}
	}
	for k, bv := range bm {
		av, ok := am[k]
		if !ok {
			patch[k] = bv
			continue
		}
		p, err := mergePatch(av, bv, depth-1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if p != nil {
			patch[k] = p
		}
	}
	if len(patch) == 0 {
		return nil, nil
	}
	return json.Marshal(patch)
}

// members returns the members of the JSON object doc with their values as
// slices of doc: decoding into map[string]json.RawMessage would copy every
// value, the whole document at each level mergePatch compares, on every
// status write. ok is false when doc is not an object. doc must be valid
// JSON.
func members(doc []byte) (m map[string]json.RawMessage, ok bool) {
	i := skipSpace(doc, 0)
	if i == len(doc) || doc[i] != '{' {
		return nil, false
	}
	m = map[string]json.RawMessage{}
	if i = skipSpace(doc, i+1); doc[i] == '}' {
		return m, true
	}
	for {
		end := skipString(doc, i)
		key := string(doc[i+1 : end-1])
		if bytes.IndexByte(doc[i:end], '\\') >= 0 {
			if err := json.Unmarshal(doc[i:end], &key); err != nil {
				return nil, false
			}
		}
		start := skipSpace(doc, skipSpace(doc, end)+1) // past the colon
		end = skipValue(doc, start)
		m[key] = doc[start:end]
		i = skipSpace(doc, end)
		if doc[i] == '}' {
			return m, true
		}
		i = skipSpace(doc, i+1) // past the comma
	}
}

// skipValue returns the end of the valid JSON value that starts at i.
func skipValue(doc []byte, i int) int {
	switch doc[i] {
	case '"':
		return skipString(doc, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch doc[i] {
			case '"':
				i = skipString(doc, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	// A number, true, false or null: up to the next delimiter.
	for ; i < len(doc); i++ {
		switch doc[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return i
}

// skipString returns the end of the valid JSON string that starts at i,
// past its closing quote.
func skipString(doc []byte, i int) int {
	for i++; doc[i] != '"'; i++ {
		if doc[i] == '\\' {
			i++
		}
	}
	return i + 1
}

func skipSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\r' || doc[i] == '\n') {
		i++
	}
	return i
}

// withResourceVersion adds metadata.resourceVersion to a merge patch, as an
// optimistic lock.
func withResourceVersion(patch []byte, version string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return nil, err
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		m["metadata"] = md
	}
	md["resourceVersion"] = version
	return json.Marshal(m)
}

// clearRefresh removes the refresh annotation from app with a merge patch
// guarded by its resourceVersion; app is updated from the answer.
func clearRefresh(ctx context.Context, c client.Client, app *v1alpha1.Application) error {
	patch := map[string]any{"metadata": map[string]any{
		"resourceVersion": app.ResourceVersion,
		"annotations":     map[string]any{v1alpha1.AnnotationKeyRefresh: nil},
	}}
	data, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("encode refresh patch: %w", err)
	}
	if err := c.Patch(ctx, app, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("clear refresh annotation of application %s: %w", app.Name, err)
	}
	return nil
}
