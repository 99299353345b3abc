package envtest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/webhook"
)

// WebhookCache starts the informer cache the webhook handler reads, as
// `tollgate webhook` has it: typed Applications indexed by project,
// AppProjects watched (opts.Scheme must register v1alpha1). It returns once
// the cache has synced; the cache stops with ctx.
func WebhookCache(ctx context.Context, cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("create cache: %w", err)
	}
	if err := webhook.IndexApplications(ctx, c); err != nil {
		return nil, err
	}
	if _, err := c.GetInformer(ctx, &v1alpha1.AppProject{}); err != nil {
		return nil, fmt.Errorf("watch AppProjects: %w", err)
	}
	go func() { _ = c.Start(ctx) }()
	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !c.WaitForCacheSync(syncCtx) {
		return nil, errors.New("webhook cache did not sync")
	}
	return c, nil
}
