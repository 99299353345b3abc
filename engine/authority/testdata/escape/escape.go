// Package escape writes to a destination past the authority, in each way
// TestOneDoorOut must catch.
package escape

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/engine/apply"
)

type holder struct {
	applier *apply.Applier
}

func escape(ctx context.Context, cfg *rest.Config, c client.Client, h holder) error {
	if _, err := client.New(cfg, client.Options{}); err != nil {
		return err
	}
	_ = h.applier
	return c.Delete(ctx, &appsv1.Deployment{})
}
