package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/tollgate-dev/tollgate/engine/apply/plan"
)

// Run applies the PreSync, Sync and PostSync waves of a plan in order,
// stopping at the first wave that fails; later waves are not started. When
// a wave failed, the SyncFail waves run next (their own failures are joined
// to the error). PostDelete waves are left to the caller, which runs them
// with ApplyWave when the Application is deleted. Pruning is separate (see
// Prune), and runs after a successful Run.
func (a *Applier) Run(ctx context.Context, waves []plan.Wave, opts WaveOptions) ([]WaveResult, error) {
	if opts.SyncID == "" {
		opts.SyncID = fmt.Sprint(a.opts.Now().Unix()) // one name suffix for every hook of the sync
	}
	var results []WaveResult
	for _, w := range plan.Select(waves, plan.PhasePreSync, plan.PhaseSync, plan.PhasePostSync) {
		res, err := a.ApplyWave(ctx, w, opts)
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
