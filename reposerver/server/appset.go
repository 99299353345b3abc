package server

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/appset"
	"github.com/tollgate-dev/tollgate/reposerver/scm"
	"github.com/tollgate-dev/tollgate/reposerver/source"
)

// GenerateApplications generates the Applications of req's ApplicationSet
// (appset.Generate) through the Service's Renderer (a child process under
// limits, whose templates and parsed files cost only itself), its git
// generators reading through the Service's repository cache with the
// request's credentials, each repository judged with req.Access in this
// process first. A generation error is an *reposerver.Error whose Reason is the
// ApplicationSet condition's; one stopped by a limit has Code reposerver.CodeLimit.
func (s *Service) GenerateApplications(ctx context.Context, req *reposerver.AppSetRequest) (*reposerver.AppSetResponse, error) {
	clusters := req.Clusters
	access := req.Access
	src := appset.Sources{
		Git:      gitReader{s: s, creds: req.Credentials, maxAge: req.ListingMaxAge},
		Clusters: func(context.Context) ([]corev1.Secret, error) { return clusters, nil },
		Permit: func(ctx context.Context, field, repoURL string) error {
			if access == nil {
				return fmt.Errorf("%s: not read: the request grants no repository (no access)", field)
			}
			return access.Check(ctx, field, repoURL)
		},
	}
	if req.SCM != nil {
		src.SCM = scmLister{access: req.SCM}
	}
	if len(req.Plugins) > 0 {
		src.Plugins = pluginCaller(req.Plugins)
	}
	src.Decisions = req.Decisions
	gen, err := s.renderer.Generate(ctx, &req.ApplicationSet, src)
	if err != nil {
		return nil, generationError(err)
	}
	return &reposerver.AppSetResponse{Applications: gen}, nil
}

// generationError is the wire form of an error of appset.Generate.
func generationError(err error) *reposerver.Error {
	we := wireError(err)
	we.Reason = appset.ReasonOf(err)
	return we
}

// gitReader serves git generators from the Service's repository cache.
type gitReader struct {
	s      *Service
	creds  map[string]reposerver.Credentials
	maxAge time.Duration
}

// Checkout implements appset.GitReader.
func (g gitReader) Checkout(ctx context.Context, repoURL, revision string) (string, error) {
	co, err := g.s.sources.Fetch(ctx, repoURL, revision, g.creds[reposerver.NormalizeURL(repoURL)], source.ListingMaxAge(g.maxAge))
	if err != nil {
		return "", err
	}
	return co.Dir, nil
}

// scmLister serves pull request and SCM provider generators with the
// tokens of an SCMAccess, each request checked with it first.
type scmLister struct{ access *reposerver.SCMAccess }

// PullRequests implements appset.SCMLister.
func (l scmLister) PullRequests(ctx context.Context, field string, gen *v1alpha1.PullRequestGenerator) ([]scm.PullRequest, error) {
	p, err := gen.Provider()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	auth, err := scmAuth(l.access, field, p)
	if err != nil {
		return nil, err
	}
	return scm.ListPullRequests(ctx, gen, auth)
}

// Repositories implements appset.SCMLister.
func (l scmLister) Repositories(ctx context.Context, field string, gen *v1alpha1.SCMProviderGenerator) ([]scm.Repository, error) {
	p, err := gen.Provider()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	auth, err := scmAuth(l.access, field, p)
	if err != nil {
		return nil, err
	}
	return scm.ListRepositories(ctx, gen, auth)
}
