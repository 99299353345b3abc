package notification

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/engine/desired"
	"github.com/tollgate-dev/tollgate/engine/notify"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// repoTimeout bounds one repo.GetCommitMetadata or repo.GetAppDetails.
const repoTimeout = 30 * time.Second

// RepoServer is what the repo functions of templates ask a repo-server.
type RepoServer interface {
	reposerver.CommitReader
	reposerver.AppDetailsReader
}

// repoCalls answers one Application's repo.GetCommitMetadata and
// repo.GetAppDetails, as Argo CD does: through a repo-server, with the
// credentials a sync of the Application uses.
//
// The Application is the tenant's: a template may name any revision, but
// only of spec.source.repoURL, and details are of the Application's own
// sources at their target revisions; either only when the Application's
// AppProject permits every repository read by its sourceRepos, as the
// history page reads commits (application.HistoryCommits).
type repoCalls struct {
	ctx       context.Context
	reader    client.Reader
	namespace string
	server    RepoServer
	app       *v1alpha1.Application
	project   *v1alpha1.AppProject
	// kustomizeBuildOptions and listingMaxAge are the controller's, so
	// that details are of the render the controller makes and can share
	// its cached render and reference listings.
	kustomizeBuildOptions string
	listingMaxAge         time.Duration
	// read and details are what this evaluation asked already, failures
	// included: a template that calls a function several times, or with
	// a revision that is not there, waits for the repo-server once.
	read       map[string]commitRead
	details    *notify.AppDetail
	detailsErr error
}

// commitRead is one repo.GetCommitMetadata's answer.
type commitRead struct {
	m   notify.CommitMetadata
	err error
}

// errNotPermitted refuses a repository the project does not permit.
var errNotPermitted = errors.New("repository not permitted by the project")

// permitted returns an error naming fn unless the Application's project
// permits repoURL.
func (c *repoCalls) permitted(fn, repoURL string) error {
	if c.server == nil {
		return fmt.Errorf("%s: no repo-server", fn)
	}
	if c.project == nil {
		return fmt.Errorf("%s %s: %w", fn, reposerver.RedactURL(repoURL), errNotPermitted)
	}
	ok, err := policies.SourcePermitted(c.ctx, c.project.Spec.SourceRepos, repoURL)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s %s: %w", fn, reposerver.RedactURL(repoURL), errNotPermitted)
	}
	return nil
}

// CommitMetadata reads commit sha of the Application's source repository,
// once per evaluation.
func (c *repoCalls) CommitMetadata(sha string) (notify.CommitMetadata, error) {
	if r, ok := c.read[sha]; ok {
		return r.m, r.err
	}
	m, err := c.commitMetadata(sha)
	if c.read == nil {
		c.read = map[string]commitRead{}
	}
	c.read[sha] = commitRead{m, err}
	return m, err
}

func (c *repoCalls) commitMetadata(sha string) (notify.CommitMetadata, error) {
	src := c.app.Spec.Source
	if src == nil || src.RepoURL == "" {
		return notify.CommitMetadata{}, errors.New("repo.GetCommitMetadata: the application has no spec.source.repoURL")
	}
	if err := c.permitted("repo.GetCommitMetadata", src.RepoURL); err != nil {
		return notify.CommitMetadata{}, err
	}
	ctx, cancel := context.WithTimeout(c.ctx, repoTimeout)
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
	return notify.CommitMetadata{Message: commit.Message, Author: commit.Author, Date: commit.Date, Tags: commit.Tags}, nil
}

// AppDetails tells what the Application's first source is at its target
// revision, once per evaluation. The other sources go with the request,
// as the first may read value files from them.
func (c *repoCalls) AppDetails() (notify.AppDetail, error) {
	if c.details == nil && c.detailsErr == nil {
		d, err := c.appDetails()
		c.details, c.detailsErr = &d, err
	}
	return *c.details, c.detailsErr
}

func (c *repoCalls) appDetails() (notify.AppDetail, error) {
	sources := c.app.Sources()
	if len(sources) == 0 {
		return notify.AppDetail{}, errors.New("repo.GetAppDetails: the application has no source")
	}
	for _, s := range sources {
		if err := c.permitted("repo.GetAppDetails", s.RepoURL); err != nil {
			return notify.AppDetail{}, err
		}
	}
	ctx, cancel := context.WithTimeout(c.ctx, repoTimeout)
	defer cancel()
	secrets, err := argocd.ListSecrets(ctx, c.reader, c.namespace)
	if err != nil {
		return notify.AppDetail{}, err
	}
	b := desired.Builder{Namespace: c.namespace, Reader: c.reader}
	req, err := b.Request(ctx, desired.Target{App: c.app, Sources: sources, Project: c.project, Secrets: secrets,
		KustomizeBuildOptions: c.kustomizeBuildOptions, ListingMaxAge: c.listingMaxAge})
	if err != nil {
		return notify.AppDetail{}, fmt.Errorf("repo.GetAppDetails: %w", err)
	}
	d, err := c.server.AppDetails(ctx, req)
	if err != nil {
		return notify.AppDetail{}, fmt.Errorf("repo.GetAppDetails: %w", err)
	}
	return appDetail(d, sources[0]), nil
}

// appDetail is d, the repo-server's answer for source, as Argo CD's
// notifications see it: a Helm source's own parameters and file
// parameters go with the chart's.
func appDetail(d *reposerver.AppDetails, source v1alpha1.ApplicationSource) notify.AppDetail {
	out := notify.AppDetail{Type: string(d.Type)}
	if d.Kustomize != nil {
		out.Kustomize = &notify.KustomizeAppSpec{Images: d.Kustomize.Images}
	}
	if d.Helm == nil {
		return out
	}
	h := &notify.CustomHelmAppSpec{HelmAppSpec: notify.HelmAppSpec{ValueFiles: d.Helm.ValueFiles, Values: d.Helm.Values}}
	for _, name := range slices.Sorted(maps.Keys(d.Helm.Parameters)) {
		h.HelmAppSpec.Parameters = append(h.HelmAppSpec.Parameters, &notify.HelmParameter{Name: name, Value: d.Helm.Parameters[name]})
	}
	if source.Helm != nil {
		for _, p := range source.Helm.Parameters {
			h.HelmParameterOverrides = append(h.HelmParameterOverrides, notify.HelmParameter{Name: p.Name, Value: p.Value, ForceString: p.ForceString})
		}
		for _, p := range source.Helm.FileParameters {
			h.HelmAppSpec.FileParameters = append(h.HelmAppSpec.FileParameters, &notify.HelmFileParameter{Name: p.Name, Path: p.Path})
		}
	}
	out.Helm = h
	return out
}
