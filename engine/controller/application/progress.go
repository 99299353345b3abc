package application

import (
	"context"
	"fmt"
	"slices"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
)

// progressInterval is how often, at most, a wave waiting for health writes
// its progress; the start of each wave is always written.
const progressInterval = 3 * time.Second

// syncProgress shows a running sync on the Application as it goes, as
// Argo CD does: the operation's results so far, what it waits for
// ("waiting for healthy state of apps/Deployment/web and 2 more
// resources"), and the sync and health of the objects already applied in
// status.resources, which the comparison before the sync showed Missing or
// OutOfSync. The pass's last write replaces all of it.
type syncProgress struct {
	ctx context.Context
	r   *Reconciler
	p   *pass
	// done are the results of the waves before the current one.
	done []v1alpha1.ResourceResult
	// wave is the current wave; written when it was last written.
	wave    [2]any
	current []v1alpha1.ResourceResult
	written time.Time
	// owned: status.resources is this sync's copy, not the comparison's
	// (which an idle resync reuses).
	owned bool
}

// report is apply.WaveOptions.Progress.
func (sp *syncProgress) report(res apply.WaveResult, pending []apply.Ref) {
	wave := [2]any{res.Phase, res.Wave}
	first := wave != sp.wave
	if first {
		sp.done = append(sp.done, sp.current...)
		sp.wave = wave
	}
	sp.current = sp.current[:0]
	for _, rr := range res.Results {
		sp.current = append(sp.current, resourceResult(rr))
	}
	now := sp.r.opts.Now()
	if !first && now.Sub(sp.written) < progressInterval {
		return
	}
	app := sp.p.app
	st := app.Status.OperationState
	if st == nil {
		return
	}
	if st.SyncResult == nil {
		st.SyncResult = &v1alpha1.SyncOperationResult{}
	}
	st.SyncResult.Resources = append(append([]v1alpha1.ResourceResult(nil), sp.done...), sp.current...)
	st.Message = waitingMessage(res, pending)
	if !sp.owned {
		app.Status.Resources, sp.owned = slices.Clone(app.Status.Resources), true
	}
	for _, rr := range res.Results {
		markApplied(app.Status.Resources, rr)
	}
	sp.written = now
	if err := patchIfChanged(sp.ctx, sp.r.client, sp.p.orig, app, sp.r.shard != nil); err != nil {
		// The pass's last write says it all; a progress write is never
		// worth failing or fencing out the sync.
		ctrl.LoggerFrom(sp.ctx).V(1).Info("Progress of the sync not written", "error", err.Error())
		return
	}
	sp.p.orig = app.DeepCopy()
}

// waitingMessage says what a wave waits for, as Argo CD words it.
func waitingMessage(res apply.WaveResult, pending []apply.Ref) string {
	if len(pending) == 0 {
		return "one or more tasks are running"
	}
	hooks := 0
	for _, rr := range res.Results {
		if rr.Hook && slices.Contains(pending, rr.Ref) {
			hooks++
		}
	}
	// pending has its hooks first.
	reason, what := "completion of hook", "resources"
	if hooks == 0 {
		reason = "healthy state of"
	}
	if hooks == len(pending) {
		what = "hooks"
	}
	first := pending[0]
	msg := fmt.Sprintf("waiting for %s %s/%s/%s", reason, first.Group, first.Kind, first.Name)
	if n := len(pending) - 1; n > 0 {
		msg += fmt.Sprintf(" and %d more %s", n, what)
	}
	return msg
}

// markApplied shows an applied object as Synced in resources, with the
// health its wave last saw.
func markApplied(resources []v1alpha1.ResourceStatus, rr apply.ResourceResult) {
	if rr.Hook || rr.Status != apply.ResultSynced {
		return
	}
	for i := range resources {
		rs := &resources[i]
		if refKey(resourceRef(*rs)) != refKey(rr.Ref) {
			continue
		}
		rs.Status = v1alpha1.SyncStatusCodeSynced
		if rr.Health != "" {
			rs.Health = &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusCode(rr.Health)}
		}
		return
	}
}
