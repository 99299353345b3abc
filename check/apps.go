package check

import (
	"context"
	"fmt"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/chart"
	"github.com/tollgate-dev/tollgate/reposerver/render"
	"github.com/tollgate-dev/tollgate/reposerver/server"
	"github.com/tollgate-dev/tollgate/reposerver/source"
)

// checkout serves the repository under test from its checkout: it is the
// Fetcher of the repo-server service tollgate test renders Applications
// with. Every other repository is not served (*server.NotServedError):
// tollgate test fetches no source. With network set, it is the Fetcher of
// remote Kustomize bases too, which fetches the other repositories
// (--allow-network).
type checkout struct {
	root repoRoot
	// repoURL is the repository under test as reposerver.NormalizeURL
	// gives it; "" serves nothing.
	repoURL string
	// network fetches the repositories other than the one under test;
	// nil serves none of them.
	network server.Fetcher
}

// Fetch returns the checkout when repoURL is the repository under test,
// whatever the revision asked for, and fetches other repositories with
// c.network.
func (c checkout) Fetch(ctx context.Context, repoURL, revision string, creds reposerver.Credentials, opts ...source.FetchOption) (source.Checkout, error) {
	if c.repoURL != "" && reposerver.NormalizeURL(repoURL) == c.repoURL {
		return source.Checkout{Dir: c.root.given, Revision: c.root.revision}, nil
	}
	if c.network != nil {
		return c.network.Fetch(ctx, repoURL, revision, creds, opts...)
	}
	return source.Checkout{}, &server.NotServedError{RepoURL: repoURL}
}

// newAppService returns the repo-server service that renders
// Applications' sources from the checkout of the repository under test
// (see checkout) with renderer, each source within lim, fetching remote
// Kustomize bases with bases (nil: co), running plugins as local commands
// (localPlugins). It fetches no Helm repository charts.
func newAppService(co checkout, bases server.Fetcher, charts *chart.Cache, renderer server.Renderer, plugins localPlugins, lim render.Limits) (*server.Service, error) {
	opts := server.DefaultOptions()
	opts.Renderer, opts.RenderLimits, opts.Bases, opts.Charts, opts.Plugins = renderer, lim, bases, charts, plugins
	return server.New(co, opts)
}

// baseNote is the note for a remote Kustomize base or a chart of
// helmCharts tollgate test does not fetch, named in the kustomization file
// when it is not the note's.
func baseNote(ub *server.UnservedBaseError, file string) string {
	if file != "" {
		return fmt.Sprintf("%s of %s is not fetched by tollgate test; pass --allow-network to fetch it", ub.What(), file)
	}
	return fmt.Sprintf("%s is not fetched by tollgate test; pass --allow-network to fetch it", ub.What())
}

// appRender is what rendering one Application gave.
type appRender struct {
	// Sources are the sources rendered, or that failed to render, in
	// source order.
	Sources []server.SourceRender
	// Skipped explains, one message each, the sources that are not
	// rendered.
	Skipped []string
	// Claimed are the directories of sources left out for a remote base
	// that is not fetched: their walked copies would say the same.
	Claimed []string
}

// renderApplication renders the Application document obj with svc, the
// way the controller asks the repo-server for its manifests
// (reposerver.NewRequest, Argo CD running in controlNS, with caps standing
// in for the destination cluster's capabilities): the repo-server resolves
// each source's Argo CD override files and options, and its `ref` sources
// for "$ref/path" value files, exactly as for the controller. An
// Application outside controlNS is the instance "<namespace>_<name>" for
// its build variables and override file.
//
// Sources the service does not serve (other repositories, Helm repository
// charts, value files from another repository's ref, remote Kustomize
// bases without --allow-network) and ref-only sources are skipped with a
// message. The request carries the sourceRepos of the Application's
// project when known (remote bases are judged by them), else "*". A
// field of the wrong type is an error naming
// the field, and a source with a field tollgate does not honour is the
// engine's *render.UnsupportedError: the engine refuses such an
// Application rather than render it differently from Argo CD.
func renderApplication(ctx context.Context, svc *server.Service, obj map[string]any, controlNS string, caps render.Capabilities, known appSetProjects) (appRender, error) {
	app, err := decodeApplication(obj)
	if err != nil {
		return appRender{}, err
	}
	if field, why := app.Spec.UnsupportedField(); field != "" {
		return appRender{}, &render.UnsupportedError{Field: field, Why: why}
	}
	srcs := render.ApplicationSources(app.Spec)
	if len(srcs) == 0 {
		return appRender{Skipped: []string{"has no spec.source or spec.sources; nothing to render"}}, nil
	}
	req := reposerver.NewRequest(&app, controlNS)
	req.KubeVersion, req.APIVersions = caps.KubeVersion, caps.APIVersions
	req.SourceRepos = known.sourceRepos(app.ProjectName())
	for _, s := range srcs {
		req.Sources = append(req.Sources, reposerver.Source{Source: s.Source})
	}
	res, err := svc.Render(ctx, req)
	if err != nil {
		return appRender{}, err
	}
	var out appRender
	for i, r := range res {
		if why := skipped(r, srcs[i].Source); why != "" {
			out.Skipped = append(out.Skipped, r.Field+": "+why)
			if r.RemoteBase != nil {
				out.Claimed = append(out.Claimed, r.Dir)
			}
			continue
		}
		out.Sources = append(out.Sources, r)
	}
	return out, nil
}

// skipped says why the service did not render source src (r), "" when it
// rendered it or tried to.
func skipped(r server.SourceRender, src v1alpha1.ApplicationSource) string {
	switch {
	case r.NotServed && src.RepoURL == "":
		return "has no repoURL; not rendered"
	case r.NotServed && src.Chart != "":
		return fmt.Sprintf("Helm chart %q from repository %s is not rendered (only sources from the repository under test are)", src.Chart, src.RepoURL)
	case r.NotServed:
		return fmt.Sprintf("repository %s is not the repository under test; not rendered", src.RepoURL)
	case r.RefOnly:
		return fmt.Sprintf("ref %q only provides value files; not rendered on its own", src.Ref)
	case r.ValueFile != "":
		return fmt.Sprintf("value file %q comes from a source that is not the repository under test; not rendered", r.ValueFile)
	case r.RemoteBase != nil:
		return baseNote(r.RemoteBase, r.RemoteBase.File)
	case r.Plugin != nil:
		return pluginNote(r.Plugin)
	}
	return ""
}
