package ui

import (
	"context"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
)

// diff compares app as `tollgate app diff` does. The repository and
// cluster credentials of the control-plane namespace are read with the
// UI's own identity (as Argo CD's API server shows any Application's diff
// to whoever may get it); the in-cluster live objects are read and dry-run
// as p.
func (s *Server) diff(ctx context.Context, p *person, app *v1alpha1.Application) (*engine.AppDiff, error) {
	opts := engine.DefaultOptions()
	opts.Namespace = s.opts.Namespace
	if s.opts.TrackingMethod != "" {
		opts.TrackingMethod = s.opts.TrackingMethod
	}
	return engine.Diff(ctx, engine.DiffDependencies{Client: s.own, Config: p.cfg, Scheme: s.opts.Scheme, Manifests: s.opts.Manifests}, opts, app)
}
