package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
	"github.com/tollgate-dev/tollgate/internal/jsonvalue"
)

// WaveOptions configure ApplyWave and Run for one sync of one Application.
type WaveOptions struct {
	// App is the application instance name (v1alpha1.Application.InstanceName). Objects
	// get its tracking metadata (Options.Tracking), and only objects already
	// tracked by it are applied with force. Leave it empty only for objects
	// no Application owns.
	App string
	// MigrationManager is the field manager whose fields move to tollgate's
	// before an object is applied (ClientSideApplyMigration, see
	// migrateFields): the Application's
	// argocd.argoproj.io/client-side-apply-migration-manager annotation;
	// default DefaultMigrationManager.
	MigrationManager string
	// SyncID names hooks that only have metadata.generateName:
	// `<generateName><syncID>-<phase>`. Default: the Unix time of the
	// Applier's clock.
	SyncID string
	// Diffs are the results of Diff for this sync. With
	// ApplyOutOfSyncOnly=true, an object whose diff is Synced is not
	// applied (it is still waited on).
	Diffs []ResourceDiff
	// Ignore are the Application's ignoreDifferences. With
	// RespectIgnoreDifferences=true, ignored fields keep their live value.
	Ignore []IgnoreDifference
	// Progress, when set, is told a wave's results so far: once its
	// objects are applied, then each time the health of those still
	// waited on is looked at (pending lists them, hooks first). It is
	// called on the sync's goroutine and must not block for long.
	Progress func(res WaveResult, pending []Ref)
}

// ResourceResult is what happened to one object.
type ResourceResult struct {
	Ref   Ref
	Phase plan.Phase
	Wave  int
	Hook  bool
	// Status is Synced or SyncFailed for applied objects, Pruned or
	// PruneSkipped for pruned ones.
	Status  ResultCode
	Message string
	// HookPhase is set for hooks: Running, Succeeded or Failed.
	HookPhase HookPhase
	// Health is the last health status seen, when waited on.
	Health string
}

// WaveResult is the outcome of one wave. Results hold the objects the wave
// reached: when it failed before applying anything, only the objects that
// made it fail.
type WaveResult struct {
	Phase   plan.Phase
	Wave    int
	Results []ResourceResult
}

// Failed reports whether any result is SyncFailed.
func (r WaveResult) Failed() bool {
	for _, res := range r.Results {
		if res.Status == ResultSyncFailed {
			return true
		}
	}
	return false
}

// WaveError is returned when a wave failed: an object was rejected, did not
// become healthy in time, became Degraded, or a hook failed. Later waves
// must not run.
type WaveError struct {
	Phase plan.Phase
	Wave  int
	// Failures are the messages of the failed objects.
	Failures []string
}

// Error lists the failures.
func (e *WaveError) Error() string {
	return fmt.Sprintf("wave %s/%d failed: %s", e.Phase, e.Wave, strings.Join(e.Failures, "; "))
}

// item is one task being applied.
type item struct {
	task plan.Task
	// obj is the object to apply: a copy of the task's, named and tracked.
	obj         *unstructured.Unstructured
	ref         Ref
	live        *unstructured.Unstructured
	unknownKind bool
	force       bool
	skipApply   bool
	skipDryRun  bool
	// probed is set once unknown fields were dropped (Validate=false).
	probed bool
	notes  []string
	// healthMsg is the last health message, for timeouts.
	healthMsg string
	res       ResourceResult
}

func (it *item) fail(format string, args ...any) {
	it.res.Status = ResultSyncFailed
	it.res.Message = fmt.Sprintf(format, args...)
	if it.task.Hook {
		it.res.HookPhase = HookFailed
	}
}

// ApplyWave applies one wave and waits for it. It first reads the live
// objects and dry-runs every object, so that a rejected manifest, a conflict
// with another field manager or a resource shared with another Application
// fails the wave before anything is applied. It then applies the objects in
// order (deleting hooks with BeforeHookCreation first), stopping at the
// first failure, and waits until every object is healthy and every hook
// completed, or one is Degraded or failed, or Options.WaitTimeout passed
// or ctx ended (the results of the applied objects are returned then too).
// Hooks are deleted afterwards according to their delete policies.
//
// A failed wave returns its results and a *WaveError; other errors mean the
// API server could not be reached or ctx ended.
func (a *Applier) ApplyWave(ctx context.Context, wave plan.Wave, opts WaveOptions) (WaveResult, error) {
	return a.applyWave(ctx, wave, opts, true)
}

// applyWave is ApplyWave; without waitAll it waits for the wave's hooks
// only (the last wave of a sync, see Run).
func (a *Applier) applyWave(ctx context.Context, wave plan.Wave, opts WaveOptions, waitAll bool) (WaveResult, error) {
	wr := WaveResult{Phase: wave.Phase, Wave: wave.Wave}
	if a.opts.Health == nil {
		return wr, errors.New("apply wave: Options.Health is not set")
	}
	rules, err := compileIgnore(opts.Ignore)
	if err != nil {
		return wr, fmt.Errorf("apply wave %s/%d: %w", wave.Phase, wave.Wave, err)
	}
	log := logr.FromContextOrDiscard(ctx).WithValues("phase", wave.Phase, "wave", wave.Wave)
	ctx = logr.NewContext(ctx, log)
	items := a.prepare(wave, opts)
	if err := a.readLive(ctx, items); err != nil {
		return wr, fmt.Errorf("apply wave %s/%d: %w", wave.Phase, wave.Wave, err)
	}
	log.V(1).Info("Checking wave", "objects", len(items))
	if err := a.check(ctx, wave, items, opts, rules); err != nil {
		return wr, fmt.Errorf("apply wave %s/%d: %w", wave.Phase, wave.Wave, err)
	}
	if failed := failedItems(items); len(failed) > 0 {
		return a.waveFailed(wr, failed, failed)
	}
	for _, it := range items {
		if err := a.applyItem(ctx, it, opts); err != nil {
			return wr, fmt.Errorf("apply wave %s/%d: %w", wave.Phase, wave.Wave, err)
		}
		if it.res.Status == ResultSyncFailed {
			return a.waveFailed(wr, reached(items), []*item{it})
		}
	}
	log.V(1).Info("Applied wave, waiting for health", "objects", len(items))
	report := func(pending []*item) {
		if opts.Progress == nil {
			return
		}
		res := WaveResult{Phase: wr.Phase, Wave: wr.Wave}
		for _, it := range reached(items) {
			res.Results = append(res.Results, it.res)
		}
		refs := make([]Ref, len(pending))
		for i, it := range pending {
			refs[i] = it.ref
		}
		opts.Progress(res, refs)
	}
	if err := a.wait(ctx, items, waitAll, report); err != nil {
		for _, it := range reached(items) {
			wr.Results = append(wr.Results, it.res)
		}
		return wr, fmt.Errorf("apply wave %s/%d: %w", wave.Phase, wave.Wave, err)
	}
	a.finishHooks(ctx, items)
	if failed := failedItems(items); len(failed) > 0 {
		return a.waveFailed(wr, items, failed)
	}
	for _, it := range items {
		wr.Results = append(wr.Results, it.res)
	}
	return wr, nil
}

func (a *Applier) waveFailed(wr WaveResult, report, failed []*item) (WaveResult, error) {
	werr := &WaveError{Phase: wr.Phase, Wave: wr.Wave}
	for _, it := range report {
		wr.Results = append(wr.Results, it.res)
	}
	for _, it := range failed {
		werr.Failures = append(werr.Failures, it.ref.String()+": "+it.res.Message)
	}
	return wr, werr
}

func failedItems(items []*item) []*item {
	var out []*item
	for _, it := range items {
		if it.res.Status == ResultSyncFailed {
			out = append(out, it)
		}
	}
	return out
}

// reached returns the items that have a result.
func reached(items []*item) []*item {
	var out []*item
	for _, it := range items {
		if it.res.Status != "" {
			out = append(out, it)
		}
	}
	return out
}

// GeneratedName is the name a sync with syncID gives t's object when it
// has only metadata.generateName (a hook): <generateName><syncID>-<phase>;
// "" for an object with a name. The authority judges a hook by this name,
// the one it is written with.
func GeneratedName(t plan.Task, syncID string) string {
	if t.Object.GetName() != "" || t.Object.GetGenerateName() == "" {
		return ""
	}
	return t.Object.GetGenerateName() + strings.ToLower(syncID+"-"+string(t.Phase))
}

// prepare copies each task's object, names generateName hooks and sets the
// tracking metadata.
func (a *Applier) prepare(wave plan.Wave, opts WaveOptions) []*item {
	syncID := opts.SyncID
	if syncID == "" {
		syncID = fmt.Sprint(a.opts.Now().Unix())
	}
	items := make([]*item, 0, len(wave.Tasks))
	for _, t := range wave.Tasks {
		obj := t.Object.DeepCopy()
		if n := GeneratedName(t, syncID); n != "" {
			obj.SetName(n)
		}
		if opts.App != "" {
			v1alpha1.SetTracking(obj, opts.App, a.opts.Tracking)
		}
		ref := RefOf(obj)
		items = append(items, &item{
			task: t, obj: obj, ref: ref,
			res: ResourceResult{Ref: ref, Phase: t.Phase, Wave: t.Wave, Hook: t.Hook},
		})
	}
	return items
}

func (a *Applier) readLive(ctx context.Context, items []*item) error {
	refs := make([]Ref, len(items))
	for i, it := range items {
		refs[i] = it.ref
	}
	live, err := a.fetch(ctx, refs)
	if err != nil {
		return err
	}
	for i, it := range items {
		it.live, it.unknownKind = live[i].obj, live[i].unknownKind
	}
	return nil
}

// check decides ownership and dry-runs each item, marking failures. It
// returns an error only when the API server could not be reached.
func (a *Applier) check(ctx context.Context, wave plan.Wave, items []*item, opts WaveOptions, rules []ignoreRule) error {
	crds, namespaces := servedKinds(wave), createdNamespaces(wave)
	for _, it := range items {
		a.decideOwnership(it, opts.App)
		if it.res.Status == ResultSyncFailed {
			continue
		}
		if it.task.SyncOptions.RespectIgnoreDifferences && it.live != nil {
			keepIgnored(ctx, it.obj, it.live, rules)
		}
		if it.task.SyncOptions.ApplyOutOfSyncOnly && !it.task.Hook && it.live != nil && inSync(opts.Diffs, it.ref) {
			it.skipApply = true
			continue
		}
		if it.task.Hook && it.live != nil && it.task.HasDeletePolicy(plan.BeforeHookCreation) {
			it.skipDryRun = true // it is deleted and created anew
			continue
		}
		if it.unknownKind {
			gk := it.ref.GroupVersionKind().GroupKind()
			if it.task.SyncOptions.SkipDryRunOnMissingResource || crds[gk] {
				it.skipDryRun = true
				continue
			}
			it.fail("kind %s is not served by the API server (add its CustomResourceDefinition to an earlier wave, or set SkipDryRunOnMissingResource=true)", gk)
			continue
		}
		if err := a.probeUnvalidated(ctx, it); err != nil {
			return err
		}
		err := a.dryRun(ctx, it, opts.App)
		if err == nil {
			continue
		}
		if !rejected(err) {
			return fmt.Errorf("dry run %s: %w", it.ref, err)
		}
		if apierrors.IsNotFound(err) && namespaces[it.ref.Namespace] {
			it.skipDryRun = true // its namespace is created earlier in this wave
			continue
		}
		if it.mode().recreates() && (apierrors.IsInvalid(err) || apierrors.IsConflict(err)) {
			continue // what Force=true deletes and re-creates the object for
		}
		it.fail("dry run: %s%s", err.Error(), rejectHint(err, it))
	}
	return nil
}

// decideOwnership sets force: objects tracked by this Application are ours.
// Whatever would delete, replace or force the live object (a hook, the sync
// options Replace=true and Force=true) fails when that object is not ours:
// it would take over another Application's or a person's object.
func (a *Applier) decideOwnership(it *item, app string) {
	if it.task.Hook && it.live != nil {
		if msg := takeoverMessage(it.live, app, a.opts.Tracking); msg != "" {
			it.fail("%s", msg)
			return
		}
	}
	if replaces := it.task.SyncOptions.Replace || it.task.SyncOptions.Force; replaces && it.live != nil {
		if msg := notOursMessage(it.live, app, a.opts.Tracking, replaceRule); msg != "" {
			it.fail("%s", msg)
			return
		}
	}
	if it.live != nil {
		it.force = v1alpha1.OwnedBy(it.live, app, a.opts.Tracking)
		owner, _ := v1alpha1.OwnerOf(it.live, a.opts.Tracking, v1alpha1.OwnerOptions{})
		switch {
		case owner == "" || app == "" || it.force || owner == app:
		case it.task.SyncOptions.FailOnSharedResource:
			it.fail("already tracked by application %q (FailOnSharedResource=true)", owner)
			return
		default:
			// The comparison left out the objects another Application
			// tracked; this one became that Application's since. Every
			// Application applies under one field manager, so applying
			// would take it over.
			it.fail("part of application %q since the comparison; not taken over", owner)
			return
		}
	}
}

// applyItem applies one item of opts.App and records its result. It returns
// an error only when the API server could not be reached.
func (a *Applier) applyItem(ctx context.Context, it *item, opts WaveOptions) error {
	app := opts.App
	log := logr.FromContextOrDiscard(ctx)
	if it.skipApply {
		it.res.Status, it.res.Message = ResultSynced, "in sync, not applied (ApplyOutOfSyncOnly=true)"
		return nil
	}
	if it.task.Hook && it.live != nil && it.task.HasDeletePolicy(plan.BeforeHookCreation) {
		log.V(1).Info("Deleting hook before creation", "object", it.ref.String())
		if _, err := a.deleteLive(ctx, it.live, app, hookRule); err != nil {
			it.fail("delete existing hook (BeforeHookCreation): %v", err)
			return nil
		}
		it.live = nil
	}
	if it.unknownKind {
		if err := a.waitForKind(ctx, it.ref.GroupVersionKind()); err != nil {
			it.fail("%v", err)
			return nil
		}
	}
	if err := a.probeUnvalidated(ctx, it); err != nil {
		return err
	}
	if err := a.migrateFields(ctx, it, opts); err != nil {
		return err
	}
	applied, verb, err := a.write(ctx, it, app)
	if err != nil || applied == nil {
		return err
	}
	log.V(1).Info("Applied", "object", it.ref.String(), "result", verb)
	it.res.Status = ResultSynced
	it.res.Message = strings.Join(append([]string{verb}, it.notes...), "; ")
	if it.task.Hook {
		it.res.HookPhase = HookRunning
	}
	it.obj = applied
	return nil
}

// servedKinds returns the kinds the CRDs of a wave serve.
func servedKinds(wave plan.Wave) map[schema.GroupKind]bool {
	out := map[schema.GroupKind]bool{}
	for _, t := range wave.Tasks {
		if t.Object.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
			continue
		}
		group, _, _ := unstructured.NestedString(t.Object.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(t.Object.Object, "spec", "names", "kind")
		out[schema.GroupKind{Group: group, Kind: kind}] = true
	}
	return out
}

// createdNamespaces returns the namespaces a wave creates.
func createdNamespaces(wave plan.Wave) map[string]bool {
	out := map[string]bool{}
	for _, t := range wave.Tasks {
		if t.Object.GroupVersionKind().GroupKind() == (schema.GroupKind{Kind: "Namespace"}) {
			out[t.Object.GetName()] = true
		}
	}
	return out
}

func inSync(diffs []ResourceDiff, ref Ref) bool {
	for _, d := range diffs {
		if d.Ref.key() == ref.key() {
			return d.Status == StatusSynced && !d.Missing
		}
	}
	return false
}

// keepIgnored copies the live value of every ignored path into obj, and
// drops ignored paths live does not have, so applying obj leaves them alone.
func keepIgnored(ctx context.Context, obj, live *unstructured.Unstructured, rules []ignoreRule) {
	for _, p := range ignoredPaths(ctx, rules, live.Object, live) {
		if v, ok := getPath(live.Object, p); ok {
			setPath(obj.Object, p, jsonvalue.Copy(v))
		}
	}
	var drop []fieldPath
	for _, p := range ignoredPaths(ctx, rules, obj.Object, live) {
		if _, ok := getPath(live.Object, p); !ok {
			drop = append(drop, p)
		}
	}
	removePaths(obj.Object, drop)
}
