package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/go-logr/logr"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/chart"
	"github.com/tollgate-dev/tollgate/reposerver/render"
	"github.com/tollgate-dev/tollgate/reposerver/source"
)

// Defaults of Options.
const (
	// DefaultRenderCacheSize is how many bytes of rendered sources are
	// kept in memory: the renders of thousands of small Applications, or
	// a few large charts. Argo CD keeps every render in Redis for a day.
	DefaultRenderCacheSize = 256 << 20
	// DefaultCheckoutMaxIdle is how long an unused checkout is kept.
	DefaultCheckoutMaxIdle = time.Hour
)

// Fetcher checks out Git revisions; *source.Cache implements it.
type Fetcher interface {
	Fetch(ctx context.Context, repoURL, revision string, creds reposerver.Credentials, opts ...source.FetchOption) (source.Checkout, error)
}

// treeRemover is a Fetcher that can remove the checkouts it has not
// returned for a while (source.Cache).
type treeRemover interface {
	RemoveUnused(ctx context.Context, maxIdle time.Duration) (int, error)
}

// Options configure a Service.
type Options struct {
	// Renderer renders each source; nil renders in this process
	// (InProcess). Servers pass a Runner.
	Renderer Renderer
	// RenderLimits bound what one source may render (file sizes, objects).
	RenderLimits render.Limits
	// RenderCacheSize bounds the bytes of rendered sources kept in memory;
	// the least recently used go first. It must hold the renders of every
	// Application in flight: a cache smaller than that renders each one
	// again at every comparison.
	RenderCacheSize int64
	// CheckoutMaxIdle is how long a checkout no request used stays on
	// disk (see Run); negative keeps them.
	CheckoutMaxIdle time.Duration
	// Parallelism is how many renders run at once; more wait. Zero or
	// less: no limit.
	Parallelism int
	// Charts fetches charts from Helm repositories and OCI registries,
	// and the dependencies charts do not vendor; nil refuses chart
	// sources and leaves dependencies missing.
	Charts *chart.Cache
}

// DefaultOptions are a Service's defaults.
func DefaultOptions() Options {
	return Options{
		RenderLimits:    render.DefaultLimits(),
		RenderCacheSize: DefaultRenderCacheSize,
		CheckoutMaxIdle: DefaultCheckoutMaxIdle,
	}
}

// rendered is the cached output of one source at one revision, shared
// between requests and never modified. Objects are kept as compact JSON.
type rendered struct {
	objects []json.RawMessage
	kind    string
}

// size is what a rendered source costs the cache: its objects' bytes and
// their slice headers.
func (r rendered) size() int64 {
	n := int64(len(r.kind)) + 64
	for _, o := range r.objects {
		n += int64(len(o)) + 24
	}
	return n
}

// Service fetches and renders Applications' sources. It is safe for
// concurrent use.
type Service struct {
	sources  Fetcher
	opts     Options
	renders  *lru[string, rendered]
	slots    chan struct{}
	renderer Renderer
}

// New returns a Service that fetches through sources.
func New(sources Fetcher, opts Options) (*Service, error) {
	if sources == nil {
		return nil, errors.New("new repo service: no source cache")
	}
	d := DefaultOptions()
	if opts.RenderCacheSize <= 0 {
		opts.RenderCacheSize = d.RenderCacheSize
	}
	if opts.CheckoutMaxIdle == 0 {
		opts.CheckoutMaxIdle = d.CheckoutMaxIdle
	}
	if opts.RenderLimits == (render.Limits{}) {
		opts.RenderLimits = d.RenderLimits
	}
	s := &Service{sources: sources, opts: opts, renders: newLRU[string](opts.RenderCacheSize, rendered.size), renderer: opts.Renderer}
	if s.renderer == nil {
		s.renderer = InProcess{}
	}
	if opts.Parallelism > 0 {
		s.slots = make(chan struct{}, opts.Parallelism)
	}
	return s, nil
}

// fetched is one source of a request at one commit, or one chart
// version.
type fetched struct {
	source   v1alpha1.ApplicationSource
	field    string
	checkout source.Checkout
	// chart is set for a Helm repository source: checkout.Dir is the
	// unpacked chart, checkout.Revision its version.
	chart bool
}

// dir is the source's directory in its checkout: a chart source's path is
// not used, as in Argo CD.
func (f fetched) dir() string {
	if f.chart || f.source.Path == "" {
		return "."
	}
	return f.source.Path
}

// Generate fetches every source of req at its revision and renders every
// source that is not only a reference (a source with ref, among several,
// provides value files to the others), in source order. Rendered output is
// cached; NoCache renders again anyway.
//
// With a reposerver.SignatureCheck, every Git source's commit is verified as it is
// fetched, on every request: a render served from the cache, or a response
// Unchanged, is never one whose commit went unverified, and the outcome
// depends on the commit and the keys of the request only. When one is not
// signed with an allowed key, nothing is rendered (Unverified).
func (s *Service) Generate(ctx context.Context, req *reposerver.Request) (*reposerver.Response, error) {
	if len(req.Sources) == 0 {
		return nil, &reposerver.Error{Code: reposerver.CodeInvalid, Message: "spec.source or spec.sources must be set"}
	}
	srcs, err := s.fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	sigs, allowed := signatures(req, srcs)
	if !allowed {
		resp := &reposerver.Response{Signatures: sigs, Unverified: true, SourceTypes: make([]v1alpha1.ApplicationSourceType, len(srcs))}
		for _, f := range srcs {
			resp.Revisions = append(resp.Revisions, f.checkout.Revision)
		}
		return resp, nil
	}
	refs := map[string]string{}
	for _, f := range srcs {
		if f.source.Ref != "" {
			refs[f.source.Ref] = f.checkout.Dir
		}
	}
	type job struct {
		fetched
		opts render.Options
		key  string
	}
	resp := &reposerver.Response{Signatures: sigs}
	jobs := make([]*job, len(srcs))
	keys := sha256.New()
	for i, f := range srcs {
		resp.Revisions = append(resp.Revisions, f.checkout.Revision)
		as := render.AppSource{Field: f.field, Source: f.source}
		if as.RefOnly(len(srcs)) {
			continue
		}
		// Override files are read from the source's directory: a chart
		// source's is the chart's, whatever its path says.
		info := render.AppInfo{Name: req.AppName, Namespace: req.Namespace, Project: req.Project, KubeVersion: req.KubeVersion, APIVersions: req.APIVersions}
		as, opts, err := render.SourceOptions(info, as, f.checkout.Dir, f.dir(), f.checkout.Revision, refs)
		if err != nil {
			return nil, err
		}
		// The cluster's capabilities change Helm renders only: other
		// sources keep their render key (and the engine its idle
		// comparisons) when the cluster's API versions change.
		kind, kindErr := render.DetectKind(f.checkout.Dir, f.dir(), opts)
		if kindErr == nil && kind != render.KindHelm {
			opts.Capabilities = nil
		}
		if kindErr == nil && kind == render.KindHelm && s.opts.Charts != nil {
			if opts.ChartDependencies, err = s.dependencies(ctx, f, chartOptions(req, as.Source)); err != nil {
				return nil, err
			}
		}
		key, err := renderKey(f, opts, srcs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.field, err)
		}
		keys.Write([]byte(key))
		jobs[i] = &job{fetched: f, opts: opts, key: key}
	}
	resp.Key = hex.EncodeToString(keys.Sum(nil))
	resp.SourceTypes = make([]v1alpha1.ApplicationSourceType, len(srcs))
	if req.KnownKey == resp.Key && !req.NoCache {
		// The caller holds these objects; the source types are in the
		// render cache unless it was evicted, in which case render again.
		resp.Unchanged = true
		for i, j := range jobs {
			if j == nil {
				continue
			}
			out, ok := s.renders.Get(j.key)
			if !ok {
				resp.Unchanged = false
				break
			}
			resp.SourceTypes[i] = sourceType(out.kind)
			resp.Cached++
		}
		if resp.Unchanged {
			return resp, nil
		}
		resp.Cached = 0
	}
	for i, j := range jobs {
		if j == nil {
			continue
		}
		out, ok := s.renders.Get(j.key)
		if ok && !req.NoCache {
			resp.Cached++
		} else {
			if out, err = s.render(ctx, j.fetched, j.opts); err != nil {
				return nil, err
			}
			s.renders.Add(j.key, out)
			resp.Rendered++
		}
		resp.SourceTypes[i] = sourceType(out.kind)
		resp.Objects = append(resp.Objects, out.objects...)
	}
	return resp, nil
}

// fetch resolves and checks out every source of req at its targetRevision,
// verifying the commits of Git sources when req has a reposerver.SignatureCheck.
func (s *Service) fetch(ctx context.Context, req *reposerver.Request) ([]fetched, error) {
	opts := []source.FetchOption{source.ListingMaxAge(req.ListingMaxAge)}
	if req.SignatureCheck != nil {
		kr, err := source.NewKeyring(req.SignatureCheck.Keys)
		if err != nil {
			return nil, &reposerver.Error{Code: reposerver.CodeInvalid, Message: "verify commit signatures: " + err.Error()}
		}
		opts = append(opts, source.VerifySignature(kr))
	}
	out := make([]fetched, len(req.Sources))
	for i, rs := range req.Sources {
		src, field := rs.Source, req.SourceField(i)
		if src.RepoURL == "" {
			return nil, &reposerver.Error{Code: reposerver.CodeInvalid, Message: field + ".repoURL is empty"}
		}
		if src.Chart != "" {
			f, err := s.fetchChart(ctx, src, field, chartOptions(req, src))
			if err != nil {
				return nil, err
			}
			out[i] = f
			continue
		}
		co, err := s.sources.Fetch(ctx, src.RepoURL, src.TargetRevision, rs.Credentials, opts...)
		if err != nil {
			return nil, err
		}
		out[i] = fetched{source: src, field: field, checkout: co}
	}
	return out, nil
}

// signatures returns, when req has a reposerver.SignatureCheck, the signatures of
// srcs (one per source, the zero reposerver.Signature for a chart source) and whether
// every Git source's commit is signed with an allowed key; without one,
// nil and true.
func signatures(req *reposerver.Request, srcs []fetched) ([]reposerver.Signature, bool) {
	if req.SignatureCheck == nil {
		return nil, true
	}
	sigs := make([]reposerver.Signature, len(srcs))
	allowed := true
	for i, f := range srcs {
		if f.chart {
			continue // a Helm repository or OCI source: not verified
		}
		if f.checkout.Signature == nil {
			// A Fetcher that did not verify: nothing is known.
			sigs[i] = reposerver.Signature{Status: reposerver.SignatureUnknown, Reason: "the commit was not verified"}
		} else {
			sigs[i] = *f.checkout.Signature
		}
		allowed = allowed && sigs[i].SignedBy(req.SignatureCheck.Allowed)
	}
	return sigs, allowed
}

// fetchChart fetches the chart of a Helm repository source at its
// targetRevision (a version or a constraint).
func (s *Service) fetchChart(ctx context.Context, src v1alpha1.ApplicationSource, field string, o chart.FetchOptions) (fetched, error) {
	if s.opts.Charts == nil {
		return fetched{}, &reposerver.Error{Code: reposerver.CodeInvalid, Message: fmt.Sprintf("%s.chart is not supported: this repo-server fetches no Helm repository sources (chart %q from %s)", field, src.Chart, reposerver.RedactURL(src.RepoURL))}
	}
	ch, err := s.opts.Charts.Fetch(ctx, src.RepoURL, src.Chart, src.TargetRevision, o)
	if err != nil {
		return fetched{}, chartError(fmt.Sprintf("%s: fetch chart %s", field, src.Chart), err)
	}
	return fetched{source: src, field: field, chart: true, checkout: source.Checkout{Dir: ch.Dir, Revision: ch.Version}}, nil
}

// dependencies fetches what the chart of f declares but does not vendor.
func (s *Service) dependencies(ctx context.Context, f fetched, o chart.FetchOptions) ([]render.ChartDependency, error) {
	deps, err := s.opts.Charts.Dependencies(ctx, f.checkout.Dir, f.dir(), o)
	if err != nil {
		return nil, chartError(f.field, err)
	}
	var out []render.ChartDependency
	for _, d := range deps {
		out = append(out, render.ChartDependency{Name: d.Name, Archive: d.Archive, Dir: d.Dir})
	}
	return out, nil
}

// chartOptions are the chart fetch options of source src of r: the
// project's Helm repositories, dependencies only from repositories its
// sourceRepos permit, the source's helm.passCredentials, and indexes as
// old as Git listings may be.
func chartOptions(r *reposerver.Request, src v1alpha1.ApplicationSource) chart.FetchOptions {
	return chart.FetchOptions{
		Repositories:    r.HelmRepositories,
		PassCredentials: src.Helm != nil && src.Helm.PassCredentials,
		IndexMaxAge:     r.ListingMaxAge,
		Permitted: func(ctx context.Context, repoURL string, oci bool) (bool, error) {
			return reposerver.RepositoryPermitted(ctx, r.SourceRepos, repoURL, oci)
		},
		Project: r.Project,
	}
}

// chartError is a failed chart fetch as the wire carries it: a repository
// that could not be reached is retried like an unreachable Git server.
func chartError(what string, err error) *reposerver.Error {
	code := reposerver.CodeInvalid
	switch {
	case errors.Is(err, chart.ErrUnreachable):
		code = reposerver.CodeUnreachable
	case errors.Is(err, chart.ErrTooLarge):
		code = reposerver.CodeLimit
	}
	return &reposerver.Error{Code: code, Message: what + ": " + err.Error()}
}

// render renders one source, waiting for a slot when Parallelism is set.
func (s *Service) render(ctx context.Context, f fetched, opts render.Options) (rendered, error) {
	if s.slots != nil {
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
		case <-ctx.Done():
			return rendered{}, fmt.Errorf("%s: wait for a render slot: %w", f.field, ctx.Err())
		}
	}
	res, err := s.renderer.Build(ctx, f.checkout.Dir, f.dir(), opts, s.opts.RenderLimits)
	if err != nil {
		return rendered{}, fmt.Errorf("%s (%s at %s): %w", f.field, reposerver.RedactURL(f.source.RepoURL), shortSHA(f.checkout.Revision), err)
	}
	out := rendered{kind: res.Kind, objects: make([]json.RawMessage, len(res.Documents))}
	for j, d := range res.Documents {
		if out.objects[j], err = json.Marshal(d.Object); err != nil {
			return rendered{}, fmt.Errorf("%s: %s document %d: %w", f.field, d.File, d.Index+1, err)
		}
	}
	return out, nil
}

// renderKey identifies a render: repository, commit, path and options, and
// the repository and commit of every ref source (their files may be read
// as value files) in place of their checkout directories.
func renderKey(f fetched, opts render.Options, srcs []fetched) (string, error) {
	opts.Refs = nil
	data, err := json.Marshal(opts)
	if err != nil {
		return "", fmt.Errorf("encode render options: %w", err)
	}
	h := sha256.New()
	for _, s := range []string{reposerver.NormalizeURL(f.source.RepoURL), f.source.Chart, f.checkout.Revision, path.Clean("/" + f.dir())} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(data)
	if opts.Helm != nil {
		for _, ref := range srcs {
			if ref.source.Ref != "" {
				fmt.Fprintf(h, "\x00%s\x00%s\x00%s", ref.source.Ref, reposerver.NormalizeURL(ref.source.RepoURL), ref.checkout.Revision)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Run removes, every quarter of CheckoutMaxIdle until ctx ends, the
// checkouts no request used for CheckoutMaxIdle: the revisions no
// Application renders any more. It returns at once when the Fetcher cannot
// remove checkouts or CheckoutMaxIdle is negative.
func (s *Service) Run(ctx context.Context) error {
	tr, ok := s.sources.(treeRemover)
	if !ok || s.opts.CheckoutMaxIdle < 0 {
		return nil
	}
	log := logr.FromContextOrDiscard(ctx).WithName("checkouts")
	t := time.NewTicker(s.opts.CheckoutMaxIdle / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		n, err := tr.RemoveUnused(ctx, s.opts.CheckoutMaxIdle)
		if err != nil {
			log.Error(err, "Remove unused checkouts")
		}
		if n > 0 {
			log.V(1).Info("Removed unused checkouts", "count", n, "maxIdle", s.opts.CheckoutMaxIdle.String())
		}
	}
}

// sourceType maps a render kind to Argo CD's source type.
func sourceType(kind string) v1alpha1.ApplicationSourceType {
	switch kind {
	case render.KindHelm:
		return v1alpha1.ApplicationSourceTypeHelm
	case render.KindKustomize:
		return v1alpha1.ApplicationSourceTypeKustomize
	}
	return v1alpha1.ApplicationSourceTypeDirectory
}

// shortSHA abbreviates a commit SHA for messages.
func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
