package check

import (
	"context"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/appset"

	"github.com/tollgate-dev/tollgate/reposerver/render"
)

// Renderer evaluates tenant input: it renders one application source,
// with render.Build's signature, and generates an ApplicationSet's
// Applications, with appset.Generate's. *server.Runner is one: it
// evaluates in a child process under a time and memory limit, so a
// hostile chart or template in a pull request cannot hang or exhaust the
// CI runner.
type Renderer interface {
	Build(ctx context.Context, root, dir string, opts render.Options, lim render.Limits) (render.Result, error)
	Generate(ctx context.Context, set *v1alpha1.ApplicationSet, src appset.Sources) ([]reposerver.Generated, error)
}

// generateFunc generates with appset.Generate's signature.
type generateFunc func(ctx context.Context, set *v1alpha1.ApplicationSet, src appset.Sources) ([]reposerver.Generated, error)

// generator is how ApplicationSets are generated with renderer: in its
// child processes, or with appset.Generate in process when it is nil.
func generator(renderer Renderer) generateFunc {
	if renderer == nil {
		return appset.Generate
	}
	return renderer.Generate
}

// buildFunc renders one application source, with render.Build's signature.
type buildFunc func(ctx context.Context, root, dir string, opts render.Options, lim render.Limits) (render.Result, error)

// localRenderer renders with r, render.Build in process when r is nil; a
// plain directory of manifests, which is only decoded (under the
// decoder's own limits), always in process. It generates ApplicationSets
// with r. It is the renderer of a check's repo-server service.
type localRenderer struct {
	r Renderer
	// buildOptions are argocd-cm's kustomize.buildOptions for every
	// Kustomize render (--kustomize-build-options).
	buildOptions string
}

// Build renders the source at dir of the checkout at root.
func (l localRenderer) Build(ctx context.Context, root, dir string, opts render.Options, lim render.Limits) (render.Result, error) {
	kind, err := render.DetectKind(root, dir, opts)
	if err != nil {
		return render.Result{}, err
	}
	if kind == render.KindKustomize {
		opts.KustomizeBuildOptions = l.buildOptions
	}
	if l.r == nil || (kind == render.KindDirectory && !render.HasJsonnet(root, dir, opts)) {
		return render.Build(ctx, root, dir, opts, lim)
	}
	return l.r.Build(ctx, root, dir, opts, lim)
}

// Generate generates set's Applications (see generator).
func (l localRenderer) Generate(ctx context.Context, set *v1alpha1.ApplicationSet, src appset.Sources) ([]reposerver.Generated, error) {
	return generator(l.r)(ctx, set, src)
}

// builder is how a check renders the directories it walks: with
// localRenderer, Helm charts seeing o.Capabilities in place of the
// destination cluster's.
func (o Options) builder() buildFunc {
	return func(ctx context.Context, root, dir string, opts render.Options, lim render.Limits) (render.Result, error) {
		opts.Capabilities = o.capabilities(opts.Capabilities)
		return localRenderer{r: o.Renderer, buildOptions: o.KustomizeBuildOptions}.Build(ctx, root, dir, opts, lim)
	}
}

// capabilities returns a source's capabilities (its overrides) completed
// with o.Capabilities, which stand in for the destination cluster's.
func (o Options) capabilities(src *render.Capabilities) *render.Capabilities {
	c := o.Capabilities
	if src != nil {
		if src.KubeVersion != "" {
			c.KubeVersion = src.KubeVersion
		}
		if len(src.APIVersions) > 0 {
			c.APIVersions = src.APIVersions
		}
	}
	if c.KubeVersion == "" && len(c.APIVersions) == 0 {
		return nil
	}
	return &c
}
