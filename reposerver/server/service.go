package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
	// Bases fetches the repositories of remote Kustomize bases; nil
	// fetches them with the Service's Fetcher, as the repo-server does.
	// tollgate test serves the checkout under test, or the network with
	// --allow-network.
	Bases Fetcher
	// Charts fetches charts from Helm repositories and OCI registries,
	// and the dependencies charts do not vendor; nil refuses chart
	// sources and leaves dependencies missing.
	Charts *chart.Cache
	// Plugins renders the sources of config management plugins; nil
	// fails them.
	Plugins Plugins
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
	sources Fetcher
	opts    Options
	renders *lru[string, rendered]
	// found remembers what the kustomizations of checkouts fetch
	// (findBases); files the remote files downloaded (remoteFile).
	found *lru[string, render.Remote]
	files *lru[string, downloaded]
	// helmDetails keeps the Helm details AppDetails read, by render key.
	helmDetails *lru[string, *reposerver.HelmDetails]
	slots       chan struct{}
	renderer    Renderer
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
	s := &Service{sources: sources, opts: opts, renders: newLRU[string](opts.RenderCacheSize, rendered.size),
		found: newLRU[string](foundCacheSize, foundCost), files: newLRU[string](filesCacheSize, downloaded.size), helmDetails: newLRU[string](helmDetailsCacheSize, helmDetailsSize),
		renderer: opts.Renderer}
	if s.renderer == nil {
		s.renderer = InProcess{}
	}
	if opts.Parallelism > 0 {
		s.slots = make(chan struct{}, opts.Parallelism)
	}
	return s, nil
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
	srcs, err := s.fetch(ctx, req, false)
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
	jobs, err := s.resolve(ctx, req, srcs, false)
	if err != nil {
		return nil, err
	}
	resp := &reposerver.Response{Signatures: sigs, SourceTypes: make([]v1alpha1.ApplicationSourceType, len(srcs))}
	keys := sha256.New()
	for _, j := range jobs {
		resp.Revisions = append(resp.Revisions, j.checkout.Revision)
		if j.renders() {
			keys.Write([]byte(j.key))
		}
	}
	resp.Key = hex.EncodeToString(keys.Sum(nil))
	if req.KnownKey == resp.Key && !req.NoCache {
		// The caller holds these objects; the source types are in the
		// render cache unless it was evicted, in which case render again.
		resp.Unchanged = true
		for i, j := range jobs {
			if !j.renders() {
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
		if !j.renders() {
			continue
		}
		out, ok := s.renders.Get(j.key)
		if ok && !req.NoCache {
			resp.Cached++
		} else {
			if out, err = s.render(ctx, j); err != nil {
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

// render renders one source for Generate: its objects as compact JSON.
func (s *Service) render(ctx context.Context, j *job) (rendered, error) {
	res, err := s.build(ctx, j)
	if err != nil {
		return rendered{}, fmt.Errorf("%s (%s at %s): %w", j.field, reposerver.RedactURL(j.source.RepoURL), v1alpha1.ShortRevision(j.checkout.Revision), err)
	}
	out := rendered{kind: res.Kind, objects: make([]json.RawMessage, len(res.Documents))}
	for i, d := range res.Documents {
		if out.objects[i], err = json.Marshal(d.Object); err != nil {
			return rendered{}, fmt.Errorf("%s: %s document %d: %w", j.field, d.File, d.Index+1, err)
		}
	}
	return out, nil
}

// build renders one source, waiting for a slot when Parallelism is set.
func (s *Service) build(ctx context.Context, j *job) (render.Result, error) {
	if s.slots != nil {
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
		case <-ctx.Done():
			return render.Result{}, fmt.Errorf("wait for a render slot: %w", ctx.Err())
		}
	}
	if j.opts.Type == render.KindPlugin {
		return s.plugin(ctx, j)
	}
	return s.renderer.Build(ctx, j.checkout.Dir, j.dir(), j.opts, s.opts.RenderLimits)
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
	case render.KindPlugin:
		return v1alpha1.ApplicationSourceTypePlugin
	}
	return v1alpha1.ApplicationSourceTypeDirectory
}
