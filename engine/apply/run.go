package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tollgate-dev/tollgate/engine/apply/plan"
)

// Run applies the PreSync, Sync and PostSync waves of a plan in order,
// stopping at the first wave that fails; later waves are not started. When
// a wave failed, the SyncFail waves run next (their own failures are joined
// to the error). PostDelete waves are left to the caller, which runs them
// with ApplyWave when the Application is deleted. Pruning is separate (see
// Prune), and runs after a successful Run.
//
// As in Argo CD (gitops-engine), health gates the next wave, not the end
// of the sync: every wave but the last waits until its objects are healthy,
// and the last waits for its hooks only, and for its other objects too when
// it has hooks and the sync has several waves. A sync without waves and
// hooks is a kubectl apply, done once its objects are applied, even if
// they degrade or never become healthy (a LoadBalancer Service without a
// load balancer).
func (a *Applier) Run(ctx context.Context, waves []plan.Wave, opts WaveOptions) ([]WaveResult, error) {
	if opts.SyncID == "" {
		opts.SyncID = fmt.Sprint(a.opts.Now().Unix()) // one name suffix for every hook of the sync
	}
	var results []WaveResult
	steps := plan.Select(waves, plan.PhasePreSync, plan.PhaseSync, plan.PhasePostSync)
	for i, w := range steps {
		waitAll := i < len(steps)-1 || (len(steps) > 1 && slices.ContainsFunc(w.Tasks, func(t plan.Task) bool { return t.Hook }))
		res, err := a.applyWave(ctx, w, opts, waitAll)
		results = append(results, res)
		if err == nil {
			continue
		}
		var werr *WaveError
		if !errors.As(err, &werr) {
			return results, err
		}
		for _, fw := range plan.Select(waves, plan.PhaseSyncFail) {
			fres, ferr := a.ApplyWave(ctx, fw, opts)
			results = append(results, fres)
			if ferr != nil {
				err = errors.Join(err, ferr)
				break
			}
		}
		return results, err
	}
	return results, nil
}
