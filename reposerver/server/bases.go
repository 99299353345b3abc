package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/reposerver"
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
)

// UnservedBaseError is a remote Kustomize base whose repository the base
// Fetcher does not serve (*NotServedError): tollgate test without
// --allow-network. Render leaves the source out and says so
// (SourceRender.RemoteBase); Generate fails with it.
type UnservedBaseError struct {
	// Entry is the base as its kustomization writes it; File that
	// kustomization, relative to its checkout's root, and Line the
	// entry's line (0 for a component the Application adds).
	Entry, File string
	Line        int
}

func (e *UnservedBaseError) Error() string {
	return fmt.Sprintf("%s: remote base %q is not fetched here", e.File, e.Entry)
}

// baseFetch is how the remote bases of one source are fetched.
type baseFetch struct {
	// field names the source in messages ("spec.source"), empty for a
	// directory tollgate test walks.
	field string
	// permit reports whether the project permits a base's repository;
	// nil permits every repository (no project names the render).
	permit  func(ctx context.Context, repoURL string) (bool, error)
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
		opts: []source.FetchOption{source.ListingMaxAge(req.ListingMaxAge)},
		permit: func(ctx context.Context, repoURL string) (bool, error) {
			return reposerver.RepositoryPermitted(ctx, req.SourceRepos, repoURL, false)
		},
	}
}

// fetchedBase is one remote base fetched for a source: what its render
// key holds of it.
type fetchedBase struct {
	entry, repoURL, revision string
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

// remoteBases fetches the remote Kustomize bases of the application
// directory dir of the checkout at root (render.FindRemoteBases), and those
// of the bases, with the Service's base Fetcher: each repository permitted
// by b, with the credentials b matches for its URL (anonymous when none
// does), at the entry's ref, through the same cache and limits as
// sources. Commit signatures are not verified: a signature check covers
// the Application's sources. It returns the bases to render with
// (render.Options.RemoteBases) and what was fetched, in the order found.
func (s *Service) remoteBases(ctx context.Context, b baseFetch, root, dir string, opts render.Options) (map[string]render.RemoteBase, []fetchedBase, error) {
	bases := map[string]render.RemoteBase{}
	var fetched []fetchedBase
	queue := []pendingBases{{root: root, dir: dir, opts: opts}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		found, err := s.findBases(p.root, p.dir, p.opts)
		if err != nil {
			return nil, nil, b.error(p.via, err)
		}
		for _, e := range found {
			if _, ok := bases[e.Entry]; ok {
				continue
			}
			where := b.where(p.via, e)
			switch {
			case p.depth >= MaxRemoteBaseDepth:
				return nil, nil, &reposerver.Error{Code: reposerver.CodeLimit, Message: fmt.Sprintf("%s: remote bases nested more than %d deep", where, MaxRemoteBaseDepth)}
			case len(bases) >= MaxRemoteBases:
				return nil, nil, &reposerver.Error{Code: reposerver.CodeLimit, Message: fmt.Sprintf("%s: more than %d remote bases", where, MaxRemoteBases)}
			}
			if err := b.check(ctx, where, e); err != nil {
				return nil, nil, err
			}
			creds := reposerver.MatchGitRepository(e.Spec.RepoURL, b.repos)
			co, err := s.bases().Fetch(ctx, e.Spec.RepoURL, e.Spec.Ref, creds, b.opts...)
			var ns *NotServedError
			if errors.As(err, &ns) {
				return nil, nil, &UnservedBaseError{Entry: e.Entry, File: e.File, Line: e.Line}
			}
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", where, err)
			}
			bases[e.Entry] = render.RemoteBase{Root: co.Dir, Path: e.Spec.Path, RepoURL: e.Spec.RepoURL, Ref: e.Spec.Ref}
			fetched = append(fetched, fetchedBase{entry: e.Entry, repoURL: reposerver.NormalizeURL(e.Spec.RepoURL), revision: co.Revision})
			queue = append(queue, pendingBases{root: co.Dir, dir: e.Spec.Path, depth: p.depth + 1, via: e.Entry})
		}
	}
	return bases, fetched, nil
}

// foundCacheSize bounds the bytes of remote bases found kept per Service.
const foundCacheSize = 8 << 20

// findBases is render.FindRemoteBases, remembered per checkout directory
// and options: a checkout holds one commit's files and is never modified,
// so an idle comparison reads no kustomization again.
func (s *Service) findBases(root, dir string, opts render.Options) ([]render.RemoteEntry, error) {
	key := root + "\x00" + dir
	if k := opts.Kustomize; k != nil {
		key += fmt.Sprintf("\x00%t\x00%s", k.IgnoreMissingComponents, strings.Join(k.Components, "\x00"))
	}
	if found, ok := s.found.Get(key); ok {
		return found, nil
	}
	found, err := render.FindRemoteBases(root, dir, opts, s.opts.RenderLimits)
	if err == nil {
		s.found.Add(key, found)
	}
	return found, err
}

// foundCost is what a result of findBases costs its cache.
func foundCost(found []render.RemoteEntry) int64 {
	n := int64(128)
	for _, e := range found {
		n += int64(len(e.Entry)+len(e.File)+len(e.Spec.RepoURL)+len(e.Spec.Path)+len(e.Spec.Ref)) + 64
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

// check refuses a remote base whose repository the project does not
// permit.
func (b baseFetch) check(ctx context.Context, where string, e render.RemoteEntry) error {
	if b.permit == nil {
		return nil
	}
	ok, err := b.permit(ctx, e.Spec.RepoURL)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	return &reposerver.Error{Code: reposerver.CodeInvalid, Message: fmt.Sprintf(
		"project-source-denied: %s: repository %s is not permitted in project %q: add it to the project's spec.sourceRepos",
		where, reposerver.RedactURL(e.Spec.RepoURL), b.project)}
}

// where names remote base e in messages: the source, the kustomization
// (in the remote base via, when it is one) and line, and the entry.
func (b baseFetch) where(via string, e render.RemoteEntry) string {
	s := e.File
	if e.Line > 0 {
		s = fmt.Sprintf("%s line %d", s, e.Line)
	}
	if via != "" {
		s = fmt.Sprintf("%s of remote base %q", s, via)
	}
	s = fmt.Sprintf("%s: remote base %q", s, e.Entry)
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

// FetchBases fetches the remote Kustomize bases of the kustomization at
// dir of the checkout at root, and those of the bases, with the base
// Fetcher (Options.Bases): from any repository, anonymously, as tollgate
// test does for a directory it walks, which no Application or project
// names. It returns the bases to render dir with
// (render.Options.RemoteBases), nil when there are none; a base the
// Fetcher does not serve is an *UnservedBaseError.
func (s *Service) FetchBases(ctx context.Context, root, dir string, opts render.Options) (map[string]render.RemoteBase, error) {
	bases, _, err := s.remoteBases(ctx, baseFetch{}, root, dir, opts)
	if err != nil || len(bases) == 0 {
		return nil, err
	}
	return bases, nil
}
