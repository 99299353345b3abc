package ui

import (
	"context"
	"sync"
	"time"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/engine/reposerver"
	"github.com/tollgate-dev/tollgate/engine/source"
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
	return engine.Diff(ctx, engine.DiffDependencies{Client: s.own, Config: p.cfg, Scheme: s.opts.Scheme, Manifests: s.opts.Repos}, opts, app)
}

// maxCachedCommits bounds commitCache; past it, it starts over.
const maxCachedCommits = 10000

// commitCache remembers commits by project, repository and SHA (commits
// never change), so pages that update live ask repo-servers once.
type commitCache struct {
	repos reposerver.CommitReader
	mu    sync.Mutex
	m     map[string]*source.Commit
}

func newCommitCache(r reposerver.CommitReader) *commitCache {
	return &commitCache{repos: r, m: map[string]*source.Commit{}}
}

// Commit reads req's commit, from the cache when its revision is a SHA
// read before for the same project.
func (c *commitCache) Commit(ctx context.Context, req *reposerver.CommitRequest) (*source.Commit, error) {
	key := req.Credentials.Project + "\x00" + source.NormalizeURL(req.RepoURL) + "\x00" + req.Revision
	c.mu.Lock()
	got, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return got, nil
	}
	got, err := c.repos.Commit(ctx, req)
	if err != nil {
		return nil, err
	}
	if got.SHA == req.Revision {
		c.mu.Lock()
		if len(c.m) >= maxCachedCommits {
			clear(c.m)
		}
		c.m[key] = got
		c.mu.Unlock()
	}
	return got, nil
}

// historyCommits reads the commits of app's history, within a few
// seconds: a page does not wait long for them.
func (s *Server) historyCommits(ctx context.Context, app *v1alpha1.Application) map[int64][]*source.Commit {
	if s.commits == nil || len(app.Status.History) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := engine.HistoryCommits(ctx, s.own, s.opts.Namespace, s.commits, app)
	if err != nil {
		s.opts.Log.V(1).Info("Reading the history's commits failed", "application", app.Namespace+"/"+app.Name, "error", err.Error())
	}
	return out
}
