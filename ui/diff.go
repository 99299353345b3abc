package ui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
)

// diff compares app as `tollgate app diff` does. The repository and
// cluster credentials of the control-plane namespace are read with the
// UI's own identity (as Argo CD's API server shows any Application's diff
// to whoever may get it); the in-cluster live objects are read and dry-run
// as p, a remote cluster's with its Secret's credentials. Either way only
// what app's project permits is read (application.Diff's door): a refusal is a
// *authority.RefusedError, which the page answers with 403. Each person
// keeps one application.Differ, so the clusters' discovery is read once,
// not on every diff page.
func (s *Server) diff(ctx context.Context, p *person, app *v1alpha1.Application) (*application.AppDiff, error) {
	d, err := p.differ(func() (*application.Differ, error) {
		opts := application.DefaultOptions()
		opts.Namespace = s.opts.Namespace
		opts.ImplicitDefaultProject = s.opts.ImplicitDefaultProject
		if s.opts.TrackingMethod != "" {
			opts.TrackingMethod = s.opts.TrackingMethod
		}
		return application.NewDiffer(application.DiffDependencies{
			Client: s.own, Config: p.cfg, Scheme: s.opts.Scheme, Manifests: s.opts.Repos, Evaluator: s.opts.Evaluator,
		}, opts)
	})
	if err != nil {
		return nil, err
	}
	return d.Diff(ctx, app)
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
// and the project version that judged and read them (historyKey).
type cachedHistory struct {
	key     string
	commits map[int64][]application.HistoryCommit
}

// historyKey names app's history: each deployment's id, repositories and
// revisions, and the project (its name and resourceVersion, "" when it
// does not exist): a change of sourceRepos or of the entries' repositories
// reads them again.
func historyKey(app *v1alpha1.Application, project *v1alpha1.AppProject) string {
	var b strings.Builder
	b.WriteString(app.Spec.Project)
	if project != nil {
		b.WriteString("\x00" + project.ResourceVersion)
	}
	for _, h := range app.Status.History {
		srcs, revs := h.SourcesAndRevisions()
		fmt.Fprintf(&b, "\x00%d:%s", h.ID, strings.Join(revs, ","))
		for _, s := range srcs {
			b.WriteString("\x00" + s.RepoURL)
		}
	}
	return b.String()
}

// historyCommits reads the commits of app's history, within a few
// seconds (a page does not wait long for them), or remembers them from the
// last time the same history was read in full. Only the repositories app's
// AppProject permits are read (application.HistoryCommits): the history is
// written by whoever may update the Application.
func (s *Server) historyCommits(ctx context.Context, app *v1alpha1.Application) map[int64][]application.HistoryCommit {
	if s.opts.Repos == nil || len(app.Status.History) == 0 {
		return nil
	}
	name := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
	project, err := s.appProject(ctx, app)
	if err != nil {
		s.opts.Log.V(1).Info("Reading the history's project failed", "application", name.String(), "error", err.Error())
		return nil
	}
	key := historyKey(app, project)
	s.histories.mu.Lock()
	c, ok := s.histories.m[name]
	s.histories.mu.Unlock()
	if ok && c.key == key {
		return c.commits
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := application.HistoryCommits(ctx, s.own, s.opts.Namespace, s.opts.Repos, app, project)
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

// appProject reads app's AppProject with the UI's own identity, nil when
// it does not exist.
func (s *Server) appProject(ctx context.Context, app *v1alpha1.Application) (*v1alpha1.AppProject, error) {
	return argocd.Project(ctx, s.opts.Namespace, app.ProjectName(), []client.Reader{s.own})
}
