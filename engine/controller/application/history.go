package application

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// HistoryCommit is what the history shows of one Git source of a
// deployment: its commit, or why it was not read.
type HistoryCommit struct {
	// Commit is the deployed commit; nil when it was not read.
	Commit *reposerver.Commit
	// Unread says why the commit was not asked for (HistoryNotPermitted);
	// "" when it was, even if the repo-server could not read it.
	Unread string
}

// HistoryNotPermitted is HistoryCommit.Unread of a source whose
// repository the Application's project does not permit.
const HistoryNotPermitted = "repository not permitted by the project"

// HistoryCommits reads the commits of app's deployment history through
// commits (a repo-server), as Argo CD's UI reads revision metadata: for
// each deployment, the commit of each Git source, keyed by deployment id
// and source index.
//
// The history is untrusted: the Application CRD has no status subresource,
// so whoever may update the Application may write entries naming any
// repository. A commit is therefore asked for only when project, app's
// AppProject (nil when it does not exist: nothing is permitted), permits
// the entry's repository by its sourceRepos, as the rule
// project-source-denied judges a source (policies.SourcePermitted); the
// others are never fetched and say HistoryNotPermitted. The credentials
// are those a sync of app uses, from the Argo CD Secrets of namespace read
// with c, matched for project. A commit that cannot be read (a chart
// source, a repository gone) is left out; the error of the first is
// returned beside what was read.
func HistoryCommits(ctx context.Context, c client.Reader, namespace string, commits reposerver.CommitReader, app *v1alpha1.Application, project *v1alpha1.AppProject) (map[int64][]HistoryCommit, error) {
	permitted := map[string]bool{}
	permits := func(repoURL string) (bool, error) {
		if project == nil {
			return false, nil
		}
		ok, seen := permitted[repoURL]
		if !seen {
			var err error
			if ok, err = policies.SourcePermitted(ctx, project.Spec.SourceRepos, repoURL); err != nil {
				return false, err
			}
			permitted[repoURL] = ok
		}
		return ok, nil
	}
	var creds *argocd.Credentials
	out := map[int64][]HistoryCommit{}
	var first error
	for _, h := range app.Status.History {
		srcs, revs := h.SourcesAndRevisions()
		row := make([]HistoryCommit, len(srcs))
		out[h.ID] = row
		for i, s := range srcs {
			if s.Chart != "" || s.RepoURL == "" || i >= len(revs) || revs[i] == "" {
				continue
			}
			ok, err := permits(s.RepoURL)
			if err != nil {
				return out, err
			}
			if !ok {
				row[i].Unread = HistoryNotPermitted
				continue
			}
			if creds == nil {
				secrets, err := argocd.ListSecrets(ctx, c, namespace)
				if err != nil {
					return out, err
				}
				creds = &argocd.Credentials{Reader: c, Namespace: namespace, Secrets: secrets}
			}
			cred, err := creds.For(ctx, s.RepoURL, project.Name)
			if err != nil {
				return out, err
			}
			req := &reposerver.CommitRequest{RepoURL: s.RepoURL, Revision: revs[i], Credentials: cred}
			commit, err := commits.Commit(ctx, req)
			if err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			row[i].Commit = commit
		}
	}
	return out, first
}
