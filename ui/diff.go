package ui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
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

// maxCachedHistories bounds historyCache; past it, it starts over.
const maxCachedHistories = 10000

// historyCache remembers the commits of each Application's history while
// the history stays the same. Live updates render a page again on every
// status change of its Application, and reading the commits lists the
// repository Secrets and asks the repo-servers; the history changes only
// with a sync.
type historyCache struct {
	mu sync.Mutex
	m  map[types.NamespacedName]cachedHistory
}

// cachedHistory is the commits of one history, named by its deployments
// and the project whose credentials read them (historyKey).
type cachedHistory struct {
	key     string
	commits map[int64][]*source.Commit
}

// historyKey names app's history: each deployment's id and revisions, and
// the project.
func historyKey(app *v1alpha1.Application) string {
	var b strings.Builder
	b.WriteString(app.Spec.Project)
	for _, h := range app.Status.History {
		_, revs := h.SourcesAndRevisions()
		fmt.Fprintf(&b, "\x00%d:%s", h.ID, strings.Join(revs, ","))
	}
	return b.String()
}

// historyCommits reads the commits of app's history, within a few
// seconds (a page does not wait long for them), or remembers them from the
// last time the same history was read in full.
func (s *Server) historyCommits(ctx context.Context, app *v1alpha1.Application) map[int64][]*source.Commit {
	if s.opts.Repos == nil || len(app.Status.History) == 0 {
		return nil
	}
	name, key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, historyKey(app)
	s.histories.mu.Lock()
	c, ok := s.histories.m[name]
	s.histories.mu.Unlock()
	if ok && c.key == key {
		return c.commits
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := engine.HistoryCommits(ctx, s.own, s.opts.Namespace, s.opts.Repos, app)
	if err != nil {
		s.opts.Log.V(1).Info("Reading the history's commits failed", "application", name.String(), "error", err.Error())
		return out
	}
	s.histories.mu.Lock()
	defer s.histories.mu.Unlock()
	if len(s.histories.m) >= maxCachedHistories {
		clear(s.histories.m)
	}
	s.histories.m[name] = cachedHistory{key: key, commits: out}
	return out
}
