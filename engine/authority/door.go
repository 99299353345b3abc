package authority

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
)

// Door is the Authority bound to one Application and its AppProject: every
// write the engine makes for that Application, and every diff shown for
// it. Build one with Authority.For per reconcile; it is safe for
// concurrent use.
type Door struct {
	a     *Authority
	judge *bound
	// writer writes: the controller's applier, or one impersonating a
	// service account.
	writer *apply.Applier
	// writerErr is why there is no writer (no service account matched).
	writerErr error
}

// Judge evaluates the Application and objs with every rule (the sync
// gate), and remembers for later writes which objects the boundary rules
// permit.
func (d *Door) Judge(ctx context.Context, objs []*unstructured.Unstructured) (Verdict, error) {
	v, _, err := d.judge.judge(ctx, objs)
	return v, err
}

// Admit records objs as permitted without judging them again: the caller
// holds a gate verdict that allowed them for the same Application, project
// version and render (a comparison it reuses). Later writes of other
// objects, live ones included, are still judged.
func (d *Door) Admit(objs []*unstructured.Unstructured) { d.judge.admit(objs) }

// Permit returns a *RefusedError naming every object of objs the project
// does not permit (boundary rules), or nil; it writes nothing.
func (d *Door) Permit(ctx context.Context, verb string, objs []*unstructured.Unstructured) error {
	return d.judge.permit(ctx, verb, objs, false)
}

// Diff compares desired objects with live ones by server-side dry run, as
// apply.Applier.Diff, with the controller's rights (as Argo CD compares).
func (d *Door) Diff(ctx context.Context, desired []*unstructured.Unstructured, ignore []apply.IgnoreDifference) ([]apply.ResourceDiff, error) {
	return d.a.controller.Diff(ctx, desired, ignore)
}

// DiffDetailed judges the Application and desired by the boundary rules
// and, only when the project permits all of them, compares desired with
// the live objects by server-side dry run with the controller's rights,
// as apply.Applier.DiffDetailed: a diff shown to a person (tollgate app
// diff, the UI), never followed by a write. A refusal is a *RefusedError
// (VerbDiff) naming each object and rule, before any live object is read:
// the destination's credentials never read for a person what the project
// would not let the Application write.
func (d *Door) DiffDetailed(ctx context.Context, desired []*unstructured.Unstructured, ignore []apply.IgnoreDifference) ([]apply.DetailedDiff, error) {
	if err := d.judge.permit(ctx, VerbDiff, desired, true); err != nil {
		return nil, err
	}
	return d.a.controller.DiffDetailed(ctx, desired, ignore)
}

// Sync is one sync's writes, in order: the namespace, the waves, the prune.
type Sync struct {
	// Namespace, when set, is created if missing (CreateNamespace=true)
	// and given Labels and Annotations (managedNamespaceMetadata).
	Namespace *Namespace
	Waves     []plan.Wave
	Options   apply.WaveOptions
	// Prune, when set, deletes Owned objects Desired does not hold after
	// the waves succeeded.
	Prune *Prune
}

// Namespace is the destination namespace a sync creates or labels.
type Namespace struct {
	Name        string
	Labels      map[string]string
	Annotations map[string]string
}

// Object is the Namespace as the project judges it.
func (n *Namespace) Object() *unstructured.Unstructured {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(n.Name)
	ns.SetLabels(n.Labels)
	ns.SetAnnotations(n.Annotations)
	return ns
}

// Prune is the pruning of a sync.
type Prune struct {
	// Owned are the live objects the Application tracks (ListOwned).
	Owned []*unstructured.Unstructured
	// Desired are every object wanted, shared ones included.
	Desired []*unstructured.Unstructured
	Options apply.PruneOptions
}

// candidates are the owned objects a prune may delete.
func (p *Prune) candidates() []*unstructured.Unstructured {
	want := make(map[objectKey]bool, len(p.Desired))
	for _, o := range p.Desired {
		want[keyOf(o)] = true
	}
	var out []*unstructured.Unstructured
	for _, o := range p.Owned {
		if !want[keyOf(o)] && !plan.IsHook(o) {
			out = append(out, o)
		}
	}
	return out
}

// SyncResult is what a Sync did.
type SyncResult struct {
	Waves  []apply.WaveResult
	Pruned []apply.ResourceResult
}

// Sync judges every object s touches (namespace, wave objects, prune
// candidates) and, only when the project permits all of them, writes
// them: the namespace, then the waves (apply.Applier.Run), then the prune
// when the waves succeeded. A refusal is a *RefusedError, before anything
// is written.
func (d *Door) Sync(ctx context.Context, s Sync) (SyncResult, error) {
	var objs []*unstructured.Unstructured
	if s.Namespace != nil {
		objs = append(objs, s.Namespace.Object())
	}
	if s.Options.SyncID == "" {
		s.Options.SyncID = fmt.Sprint(time.Now().Unix()) // the hooks' names are judged
	}
	for _, w := range s.Waves {
		objs = append(objs, written(w, s.Options.SyncID)...)
	}
	if s.Prune != nil {
		objs = append(objs, s.Prune.candidates()...)
	}
	w, err := d.writable(ctx, "sync", objs)
	if err != nil {
		return SyncResult{}, err
	}
	if n := s.Namespace; n != nil {
		if err := w.EnsureNamespace(ctx, s.Options.App, n.Name, n.Labels, n.Annotations); err != nil {
			return SyncResult{}, err
		}
	}
	var res SyncResult
	res.Waves, err = w.Run(ctx, s.Waves, s.Options)
	if err != nil || s.Prune == nil {
		return res, err
	}
	res.Pruned, err = w.Prune(ctx, s.Prune.Owned, s.Prune.Desired, s.Prune.Options)
	return res, err
}

// ApplyWave judges the objects of one wave and applies it, as
// apply.Applier.ApplyWave (delete hooks).
func (d *Door) ApplyWave(ctx context.Context, wave plan.Wave, opts apply.WaveOptions) (apply.WaveResult, error) {
	if opts.SyncID == "" {
		opts.SyncID = fmt.Sprint(time.Now().Unix())
	}
	w, err := d.writable(ctx, "apply", written(wave, opts.SyncID))
	if err != nil {
		return apply.WaveResult{}, err
	}
	return w.ApplyWave(ctx, wave, opts)
}

// written are wave's objects as a sync with syncID writes them: a hook
// with only generateName under the name it gets (apply.GeneratedName), so
// that a rule about names judges the name written, not an empty one.
func written(wave plan.Wave, syncID string) []*unstructured.Unstructured {
	objs := make([]*unstructured.Unstructured, 0, len(wave.Tasks))
	for _, t := range wave.Tasks {
		o := t.Object
		if n := apply.GeneratedName(t, syncID); n != "" {
			o = o.DeepCopy()
			o.SetName(n)
		}
		objs = append(objs, o)
	}
	return objs
}

// Delete judges objs (live objects, e.g. from ListOwned) and, only when the
// project permits all of them, deletes each one not already being deleted,
// with policy and a precondition on its UID. Objects already gone are not
// an error.
func (d *Door) Delete(ctx context.Context, objs []*unstructured.Unstructured, policy metav1.DeletionPropagation) error {
	w, err := d.writable(ctx, "delete", objs)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		if o.GetDeletionTimestamp() != nil {
			continue
		}
		uid := o.GetUID()
		err := w.Client().Delete(ctx, o, client.PropagationPolicy(policy), client.Preconditions{UID: &uid})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s: %w", apply.RefOf(o), err))
		}
	}
	return errors.Join(errs...)
}

// writable judges objs for verb and returns the applier to write them with:
// none when one of them is outside the cluster's scope (apply.Scope: a
// namespaced-mode cluster Secret) or the project does not permit it.
func (d *Door) writable(ctx context.Context, verb string, objs []*unstructured.Unstructured) (*apply.Applier, error) {
	if d.writerErr != nil {
		return nil, fmt.Errorf("%s: %w", verb, d.writerErr)
	}
	if msg := d.a.opts.Apply.Scope.Unmanaged(objs); msg != "" {
		return nil, fmt.Errorf("%s: %s", verb, msg)
	}
	if err := d.Permit(ctx, verb, objs); err != nil {
		return nil, err
	}
	return d.writer, nil
}
