package notification

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/engine/notify"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// commitTimeout bounds one repo.GetCommitMetadata.
const commitTimeout = 30 * time.Second

// commits reads the commits of one Application's source repository for
// repo.GetCommitMetadata, as Argo CD reads revision metadata: through a
// repo-server, with the credentials a sync of the Application uses.
//
// The Application is the tenant's: a template may name any revision, but
// only of spec.source.repoURL, and only when the Application's AppProject
// permits that repository by its sourceRepos, as the history page reads
// commits (application.HistoryCommits).
type commits struct {
	ctx       context.Context
	reader    client.Reader
	namespace string
	server    reposerver.CommitReader
	app       *v1alpha1.Application
	project   *v1alpha1.AppProject
	read      map[string]notify.CommitMetadata
}

// errNotPermitted refuses a repository the project does not permit.
var errNotPermitted = errors.New("repository not permitted by the project")

// CommitMetadata reads commit sha of the Application's source repository,
// once per evaluation.
func (c *commits) CommitMetadata(sha string) (notify.CommitMetadata, error) {
	if m, ok := c.read[sha]; ok {
		return m, nil
	}
	if c.server == nil {
		return notify.CommitMetadata{}, errors.New("repo.GetCommitMetadata: no repo-server")
	}
	src := c.app.Spec.Source
	if src == nil || src.RepoURL == "" {
		return notify.CommitMetadata{}, errors.New("repo.GetCommitMetadata: the application has no spec.source.repoURL")
	}
	if c.project == nil {
		return notify.CommitMetadata{}, fmt.Errorf("repo.GetCommitMetadata %s: %w", reposerver.RedactURL(src.RepoURL), errNotPermitted)
	}
	ok, err := policies.SourcePermitted(c.ctx, c.project.Spec.SourceRepos, src.RepoURL)
	if err != nil {
		return notify.CommitMetadata{}, err
	}
	if !ok {
		return notify.CommitMetadata{}, fmt.Errorf("repo.GetCommitMetadata %s: %w", reposerver.RedactURL(src.RepoURL), errNotPermitted)
	}
	ctx, cancel := context.WithTimeout(c.ctx, commitTimeout)
	defer cancel()
	secrets, err := argocd.ListSecrets(ctx, c.reader, c.namespace)
	if err != nil {
		return notify.CommitMetadata{}, err
	}
	creds := &argocd.Credentials{Reader: c.reader, Namespace: c.namespace, Secrets: secrets}
	cred, err := creds.For(ctx, src.RepoURL, c.project.Name)
	if err != nil {
		return notify.CommitMetadata{}, err
	}
	commit, err := c.server.Commit(ctx, &reposerver.CommitRequest{RepoURL: src.RepoURL, Revision: sha, Credentials: cred})
	if err != nil {
		return notify.CommitMetadata{}, fmt.Errorf("repo.GetCommitMetadata: %w", err)
	}
	m := notify.CommitMetadata{Message: commit.Message, Author: commit.Author, Date: commit.Date, Tags: commit.Tags}
	if c.read == nil {
		c.read = map[string]notify.CommitMetadata{}
	}
	c.read[sha] = m
	return m, nil
}
