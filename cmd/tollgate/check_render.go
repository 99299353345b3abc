package main

import (
	"cmp"
	"context"

	"github.com/tollgate-dev/tollgate/engine/render"
	"github.com/tollgate-dev/tollgate/engine/render/sandbox"
)

// buildFunc renders one application source, with render.Build's signature.
type buildFunc func(ctx context.Context, root, dir string, opts render.Options, lim render.Limits) (render.Result, error)

// newRenderer is how tollgate test renders: Kustomize overlays and Helm
// charts in a child process under --render-timeout and --render-memory, as
// the controller does, so a hostile chart in a pull request cannot hang or
// exhaust the CI runner; a plain directory, which is only decoded (under
// the decoder's own limits), in process. Zero options take the defaults.
func newRenderer(o testOptions) (buildFunc, error) {
	lim, err := sandboxLimits(cmp.Or(o.RenderTimeout, sandbox.DefaultLimits().Timeout), cmp.Or(o.RenderMemory, defaultRenderMemory))
	if err != nil {
		return nil, err
	}
	runner, err := newSandbox(lim)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, root, dir string, opts render.Options, lim render.Limits) (render.Result, error) {
		kind, err := render.DetectKind(root, dir, opts)
		if err != nil {
			return render.Result{}, err
		}
		if kind == render.KindDirectory {
			return render.Build(ctx, root, dir, opts, lim)
		}
		return runner.Build(ctx, root, dir, opts, lim)
	}, nil
}
