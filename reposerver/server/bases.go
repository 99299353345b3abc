package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/chart"
	"github.com/tollgate-dev/tollgate/reposerver/render"
	"github.com/tollgate-dev/tollgate/reposerver/source"
)

// Bounds of the remote Kustomize bases of one source.
const (
	// MaxRemoteBases is how many remote bases (distinct entries, those of
	// remote bases included) one source may fetch.
	MaxRemoteBases = 32
	// MaxRemoteBaseDepth is how deep remote bases inside remote bases are
	// followed.
	MaxRemoteBaseDepth = 5
	// MaxRemoteFiles is how many files named by URL one source may
	// download.
	MaxRemoteFiles = 32
	// MaxKustomizeCharts is how many charts of helmCharts (distinct
	// repository, name and version) one source may pull.
	MaxKustomizeCharts = 32
)

// UnservedBaseError is a remote Kustomize base whose repository the base
// Fetcher does not serve (*NotServedError), or a chart or remote file of a
// kustomization a Service without a chart cache does not fetch: tollgate
// test without --allow-network. Render leaves the source out and says so
// (SourceRender.RemoteBase); Generate fails with it.
type UnservedBaseError struct {
	// Entry is the base as its kustomization writes it; File that
	// kustomization, relative to its checkout's root, and Line the
	// entry's line (0 for a component the Application adds).
	Entry, File string
	Line        int
	// Chart is set for a chart of helmCharts (Entry is its name) from
	// the Helm repository or OCI registry Chart, which the Service
	// pulls no chart from (Options.Charts is nil); RemoteFile for a file
	// of resources named by URL (Entry), which it downloads with the
	// chart client.
	Chart      string
	RemoteFile bool
}

func (e *UnservedBaseError) Error() string {
	return fmt.Sprintf("%s: %s is not fetched here", e.File, e.What())
}

// What names the base, chart or file: `remote base "<entry>"`,
// `helmCharts chart "<name>" of <repository>` or `remote file "<url>"`.
func (e *UnservedBaseError) What() string {
	switch {
	case e.Chart != "":
		return fmt.Sprintf("helmCharts chart %q of %s", e.Entry, reposerver.RedactURL(e.Chart))
	case e.RemoteFile:
		return fmt.Sprintf("remote file %q", reposerver.RedactURL(e.Entry))
	}
	return fmt.Sprintf("remote base %q", e.Entry)
}

// baseFetch is how the remote bases of one source are fetched.
type baseFetch struct {
	// field names the source in messages ("spec.source"), empty for a
	// directory tollgate test walks.
	field string
	// permit reports whether the project permits a base's repository;
	// nil permits every repository (no project names the render).
	permit func(ctx context.Context, repoURL string) (bool, error)
	// charts are the options charts of helmCharts are pulled with, their
	// Permitted judging each repository (nil: any).
	charts chart.FetchOptions
	// maxAge is how old a remote file downloaded before may be.
	maxAge  time.Duration
	project string
	// repos are the credentials to match (reposerver.MatchGitRepository).
	repos []reposerver.GitRepository
	opts  []source.FetchOption
}

// requestBases is how the remote bases of source field of req are
// fetched: from the repositories the project's sourceRepos permit, with
// the credentials the request carries, listings as old as its sources'.
func requestBases(req *reposerver.Request, field string) baseFetch {
	return baseFetch{
		field: field, project: req.Project, repos: req.GitRepositories,
		charts: chartOptions(req, v1alpha1.ApplicationSource{}), maxAge: req.ListingMaxAge,
		opts: []source.FetchOption{source.ListingMaxAge(req.ListingMaxAge)},
		permit: func(ctx context.Context, repoURL string) (bool, error) {
			return reposerver.RepositoryPermitted(ctx, req.SourceRepos, repoURL, false)
		},
	}
}

// fetchedBase is one remote base or chart fetched for a source: what its
// render key holds of it.
type fetchedBase struct {
	entry, repoURL, revision string
}

// kustomizeRemote is what was fetched for the kustomization graph of one
// source: what the render reads, and what its key holds.
type kustomizeRemote struct {
	bases   map[string]render.RemoteBase
	files   map[string][]byte
	charts  []render.KustomizeChart
	fetched []fetchedBase
}

// pendingBases is a checkout whose kustomization graph is still to be
// searched for remote bases.
type pendingBases struct {
	root, dir string
	opts      render.Options
	depth     int
	// via is the remote base the checkout was fetched for, "" for the
	// source itself.
	via string
}

// remoteBases fetches what the kustomization graph of the application
// directory dir of the checkout at root needs (render.FindRemote): its
// remote Kustomize bases, and those of the bases, with the Service's base
// Fetcher: each repository permitted by b, with the credentials b matches
// for its URL (anonymous when none does), at the entry's ref, through the
// same cache and limits as sources; the files its resources name by URL
// (remoteFile); and, when opts' kustomize build options enable Helm, the
// charts of helmCharts its kustomizations do not hold, with the Service's chart cache, from the repositories b permits,
// with the credentials of the project's Helm repositories. Commit
// signatures are not verified: a signature check covers the
// Application's sources.
func (s *Service) remoteBases(ctx context.Context, b baseFetch, root, dir string, opts render.Options) (kustomizeRemote, error) {
	out := kustomizeRemote{bases: map[string]render.RemoteBase{}}
	helm := render.HelmEnabled(opts.KustomizeBuildOptions)
	queue := []pendingBases{{root: root, dir: dir, opts: opts}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		found, err := s.findBases(p.root, p.dir, p.opts)
		if err != nil {
			return kustomizeRemote{}, b.error(p.via, err)
		}
		for _, e := range found.Bases {
			if _, ok := out.bases[e.Entry]; ok {
				continue
			}
			where := b.where(p.via, e.File, e.Line, fmt.Sprintf("remote base %q", e.Entry))
			switch {
			case p.depth >= MaxRemoteBaseDepth:
				return kustomizeRemote{}, &reposerver.Error{Code: reposerver.CodeLimit, Message: fmt.Sprintf("%s: remote bases nested more than %d deep", where, MaxRemoteBaseDepth)}
			case len(out.bases) >= MaxRemoteBases:
				return kustomizeRemote{}, &reposerver.Error{Code: reposerver.CodeLimit, Message: fmt.Sprintf("%s: more than %d remote bases", where, MaxRemoteBases)}
			}
			if err := b.check(ctx, where, e.Spec.RepoURL, b.permit); err != nil {
				return kustomizeRemote{}, err
			}
			creds := reposerver.MatchGitRepository(e.Spec.RepoURL, b.repos)
			co, err := s.bases().Fetch(ctx, e.Spec.RepoURL, e.Spec.Ref, creds, b.opts...)
			var ns *NotServedError
			if errors.As(err, &ns) {
				return kustomizeRemote{}, &UnservedBaseError{Entry: e.Entry, File: e.File, Line: e.Line}
			}
			if err != nil {
				return kustomizeRemote{}, fmt.Errorf("%s: %w", where, err)
			}
			out.bases[e.Entry] = render.RemoteBase{Root: co.Dir, Path: e.Spec.Path, RepoURL: e.Spec.RepoURL, Ref: e.Spec.Ref}
			out.fetched = append(out.fetched, fetchedBase{entry: e.Entry, repoURL: reposerver.NormalizeURL(e.Spec.RepoURL), revision: co.Revision})
			queue = append(queue, pendingBases{root: co.Dir, dir: e.Spec.Path, depth: p.depth + 1, via: e.Entry})
		}
		for _, f := range found.Files {
			if err := s.remoteFile(ctx, b, p.via, f, &out); err != nil {
				return kustomizeRemote{}, err
			}
		}
		if !helm {
			continue
		}
		for _, c := range found.Charts {
			if err := s.pullChart(ctx, b, p.via, c, &out); err != nil {
				return kustomizeRemote{}, err
			}
		}
	}
	return out, nil
}

// remoteFile downloads remote file f of the kustomization graph of the
// source (via "") or of remote base via into out, as kustomize would:
// from a URL b permits, anonymously, with the chart client's limits, at
// most the render's file size; a download younger than b's listing age is
// used again.
func (s *Service) remoteFile(ctx context.Context, b baseFetch, via string, f render.RemoteFile, out *kustomizeRemote) error {
	if _, ok := out.files[f.URL]; ok {
		return nil
	}
	where := b.where(via, f.File, f.Line, fmt.Sprintf("remote file %q", f.URL))
	if len(out.files) >= MaxRemoteFiles {
		return &reposerver.Error{Code: reposerver.CodeLimit, Message: fmt.Sprintf("%s: more than %d remote files", where, MaxRemoteFiles)}
	}
	if err := b.check(ctx, where, f.URL, b.permit); err != nil {
		return err
	}
	if s.opts.Charts == nil {
		return &UnservedBaseError{Entry: f.URL, File: f.File, Line: f.Line, RemoteFile: true}
	}
	got, ok := s.files.Get(f.URL)
	if !ok || time.Since(got.at) > b.maxAge {
		data, err := s.opts.Charts.FetchFile(ctx, f.URL, s.opts.RenderLimits.MaxFileBytes)
		if err != nil {
			return chartError(where, err)
		}
		sum := sha256.Sum256(data)
		got = downloaded{data: data, sum: hex.EncodeToString(sum[:]), at: time.Now()}
		s.files.Add(f.URL, got)
	}
	if out.files == nil {
		out.files = map[string][]byte{}
	}
	out.files[f.URL] = got.data
	out.fetched = append(out.fetched, fetchedBase{entry: "file", repoURL: f.URL, revision: got.sum})
	return nil
}

// filesCacheSize bounds the bytes of remote files kept per Service.
const filesCacheSize = 32 << 20

// downloaded is a remote file as downloaded.
type downloaded struct {
	data []byte
	sum  string
	at   time.Time
}

// size is what a download costs its cache.
func (d downloaded) size() int64 { return int64(len(d.data)+len(d.sum)) + 64 }

// pullChart pulls chart c of helmCharts, found in the kustomization graph
// of the source (via "") or of remote base via, into out, as kustomize's
// `helm pull` would: from a repository b permits, at c's version (the
// latest, pre-releases too with devel, when it names none).
func (s *Service) pullChart(ctx context.Context, b baseFetch, via string, c render.RemoteChart, out *kustomizeRemote) error {
	if slices.ContainsFunc(out.charts, func(k render.KustomizeChart) bool {
		return k.Repo == c.Repo && k.Name == c.Name && k.Version == c.Version
	}) {
		return nil
	}
	where := b.where(via, c.File, c.Line, fmt.Sprintf("helmCharts chart %q", c.Name))
	if len(out.charts) >= MaxKustomizeCharts {
		return &reposerver.Error{Code: reposerver.CodeLimit, Message: fmt.Sprintf("%s: more than %d charts", where, MaxKustomizeCharts)}
	}
	var permit func(context.Context, string) (bool, error)
	if p := b.charts.Permitted; p != nil {
		permit = func(ctx context.Context, repoURL string) (bool, error) {
			return p(ctx, repoURL, reposerver.IsOCI(repoURL, b.charts.Repositories))
		}
	}
	if err := b.check(ctx, where, c.Repo, permit); err != nil {
		return err
	}
	if s.opts.Charts == nil {
		return &UnservedBaseError{Entry: c.Name, File: c.File, Line: c.Line, Chart: c.Repo}
	}
	version := c.Version
	if version == "" && c.Devel {
		version = ">0.0.0-0"
	}
	ch, err := s.opts.Charts.Fetch(ctx, c.Repo, c.Name, version, b.charts)
	if err != nil {
		return chartError(where, err)
	}
	out.charts = append(out.charts, render.KustomizeChart{Repo: c.Repo, Name: c.Name, Version: c.Version, Dir: ch.Dir})
	out.fetched = append(out.fetched, fetchedBase{entry: "chart " + c.Name + " " + c.Version, repoURL: reposerver.NormalizeHelmURL(c.Repo), revision: ch.Version + " " + ch.Digest})
	return nil
}

// foundCacheSize bounds the bytes of remote bases found kept per Service.
const foundCacheSize = 8 << 20

// findBases is render.FindRemote, remembered per checkout directory and
// options: a checkout holds one commit's files and is never modified, so
// an idle comparison reads no kustomization again.
func (s *Service) findBases(root, dir string, opts render.Options) (render.Remote, error) {
	key := root + "\x00" + dir
	if k := opts.Kustomize; k != nil {
		key += fmt.Sprintf("\x00%t\x00%s", k.IgnoreMissingComponents, strings.Join(k.Components, "\x00"))
	}
	if found, ok := s.found.Get(key); ok {
		return found, nil
	}
	found, err := render.FindRemote(root, dir, opts, s.opts.RenderLimits)
	if err == nil {
		s.found.Add(key, found)
	}
	return found, err
}

// foundCost is what a result of findBases costs its cache.
func foundCost(found render.Remote) int64 {
	n := int64(128)
	for _, e := range found.Bases {
		n += int64(len(e.Entry)+len(e.File)+len(e.Spec.RepoURL)+len(e.Spec.Path)+len(e.Spec.Ref)) + 64
	}
	for _, c := range found.Charts {
		n += int64(len(c.Repo)+len(c.Name)+len(c.Version)+len(c.File)) + 64
	}
	return n
}

// bases is the Fetcher of remote bases.
func (s *Service) bases() Fetcher {
	if s.opts.Bases != nil {
		return s.opts.Bases
	}
	return s.sources
}

// check refuses a remote base, file or chart whose repository (URL)
// permit does not permit; a nil permit permits every repository.
func (b baseFetch) check(ctx context.Context, where, repoURL string, permit func(context.Context, string) (bool, error)) error {
	if permit == nil {
		return nil
	}
	ok, err := permit(ctx, repoURL)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	return &reposerver.Error{Code: reposerver.CodeInvalid, Message: fmt.Sprintf(
		"project-source-denied: %s: repository %s is not permitted in project %q: add it to the project's spec.sourceRepos",
		where, reposerver.RedactURL(repoURL), b.project)}
}

// where names what a kustomization file names at line in messages: the
// source, the kustomization (in the remote base via, when it is one) and
// line, and what.
func (b baseFetch) where(via, file string, line int, what string) string {
	s := file
	if line > 0 {
		s = fmt.Sprintf("%s line %d", s, line)
	}
	if via != "" {
		s = fmt.Sprintf("%s of remote base %q", s, via)
	}
	s = fmt.Sprintf("%s: %s", s, what)
	if b.field != "" {
		s = b.field + ": " + s
	}
	return s
}

// error is a failed search of the kustomization graph of the source (via
// "") or of remote base via.
func (b baseFetch) error(via string, err error) error {
	msg := err.Error()
	if via != "" {
		msg = fmt.Sprintf("remote base %q: %s", via, msg)
	}
	if b.field != "" {
		msg = b.field + ": " + msg
	}
	code := reposerver.CodeInvalid
	if errors.Is(err, render.ErrKustomizationGraph) {
		code = reposerver.CodeLimit
	}
	return &reposerver.Error{Code: code, Message: msg}
}

// FetchRemote returns opts with what the kustomization at dir of the
// checkout at root needs (remoteBases): its remote bases, fetched with the
// base Fetcher (Options.Bases), and the charts of its helmCharts, pulled
// with the chart cache (Options.Charts), from any repository,
// anonymously, as tollgate test does for a directory it walks, which no
// Application or project names. A base the Fetcher does not serve, or a
// chart without a chart cache, is an *UnservedBaseError.
func (s *Service) FetchRemote(ctx context.Context, root, dir string, opts render.Options) (render.Options, error) {
	r, err := s.remoteBases(ctx, baseFetch{charts: chart.FetchOptions{Permitted: anyRepository}}, root, dir, opts)
	if err != nil {
		return opts, err
	}
	if len(r.bases) > 0 {
		opts.RemoteBases = r.bases
	}
	opts.RemoteFiles, opts.KustomizeCharts = r.files, r.charts
	return opts, nil
}

// anyRepository permits every repository.
func anyRepository(context.Context, string, bool) (bool, error) { return true, nil }
