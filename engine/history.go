package engine

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/reposerver"
	"github.com/tollgate-dev/tollgate/engine/source"
)

// HistoryCommits reads the commits of app's deployment history through
// commits (a repo-server), as Argo CD's UI reads revision metadata: for
// each deployment, the commit of each Git source, keyed by deployment id
// and source index. The credentials are those a sync of app uses, from the
// Argo CD Secrets of namespace read with c. A commit that cannot be read
// (a chart source, a repository gone) is left out; the error of the first
// is returned beside what was read.
func HistoryCommits(ctx context.Context, c client.Reader, namespace string, commits reposerver.CommitReader, app *v1alpha1.Application) (map[int64][]*source.Commit, error) {
	secrets, err := listArgoSecrets(ctx, c, namespace)
	if err != nil {
		return nil, err
	}
	project := projectOf(app)
	var knownHosts []byte
	out := map[int64][]*source.Commit{}
	var first error
	for _, h := range app.Status.History {
		srcs, revs := h.SourcesAndRevisions()
		row := make([]*source.Commit, len(srcs))
		for i, s := range srcs {
			if s.Chart != "" || s.RepoURL == "" || i >= len(revs) || revs[i] == "" {
				continue
			}
			if knownHosts == nil && isSSH(s.RepoURL) {
				if knownHosts, err = readKnownHosts(ctx, c, namespace); err != nil {
					return out, err
				}
			}
			req := &reposerver.CommitRequest{RepoURL: s.RepoURL, Revision: revs[i], Credentials: source.MatchCredentials(s.RepoURL, project, secrets, knownHosts)}
			commit, err := commits.Commit(ctx, req)
			if err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			row[i] = commit
		}
		out[h.ID] = row
	}
	return out, first
}
