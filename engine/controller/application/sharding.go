package application

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// followShard queues every Application for the status processors when the
// members change, so that each replica takes the Applications it now owns
// (and forgets the others), and keeps the shard metrics current. It runs
// until ctx ends.
func (r *Reconciler) followShard(ctx context.Context, c cache.Cache) error {
	if !c.WaitForCacheSync(ctx) {
		return nil
	}
	tick := time.NewTicker(r.shard.RenewInterval())
	defer tick.Stop()
	for {
		changed := false
		select {
		case <-ctx.Done():
			return nil
		case <-r.shard.Changes():
			changed = true
		case <-tick.C:
		}
		if err := r.shardPass(ctx, changed); err != nil && ctx.Err() == nil {
			ctrl.LoggerFrom(ctx).Error(err, "Follow shard membership")
		}
	}
}

// shardPass counts the Applications this replica owns and, after a change
// of the members, queues them all.
func (r *Reconciler) shardPass(ctx context.Context, changed bool) error {
	apps, err := r.servedApplications(ctx)
	if err != nil {
		return err
	}
	owned := 0
	for i := range apps {
		key := types.NamespacedName{Namespace: apps[i].Namespace, Name: apps[i].Name}
		if r.shard.Owns(key.String()) {
			owned++
		}
		if changed {
			r.statusQueue.add(key)
		}
	}
	r.metrics.SetShard(r.shard.Members(), owned)
	if changed {
		ctrl.LoggerFrom(ctx).Info("Shard members changed", "members", r.shard.Members(), "applications", owned)
	}
	return nil
}
