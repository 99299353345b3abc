package reposerver

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/appset"
	"github.com/tollgate-dev/tollgate/engine/source"
)

// ApplicationSetsPath is where a repo-server answers GenerateApplications
// requests.
const ApplicationSetsPath = "/v1/applicationsets"

// AppSetRequest asks for the Applications of one ApplicationSet. Its git
// generators read tenant repositories and its templates are tenant input:
// both are parsed here, never in the controller, as Argo CD's
// ApplicationSet controller asks its repo-server for a repository's
// directories and files.
type AppSetRequest struct {
	ApplicationSet v1alpha1.ApplicationSet `json:"applicationSet"`
	// Clusters are the Argo CD cluster Secrets of the control namespace
	// for clusters generators, with nothing of their data but the name,
	// server and project (appset.ClusterSecretsForGeneration).
	Clusters []corev1.Secret `json:"clusters,omitempty"`
	// Credentials of the git generators' repositories, by
	// source.NormalizeURL of their URL: only those of repositories Access
	// permits, matched for its project.
	Credentials map[string]source.Credentials `json:"credentials,omitempty"`
	// Access is what the git generators may read, decided by the
	// controller (appset.NewGitAccess); every repository is checked with
	// it again before it is read, a repoURL rendered from parameters
	// included. Without it no git generator reads anything.
	Access *appset.GitAccess `json:"access,omitempty"`
	// ListingMaxAge is how old a repository's reference listing may be to
	// resolve a revision; zero asks the Git server every time (a refresh).
	ListingMaxAge time.Duration `json:"listingMaxAge,omitempty"`
}

// AppSetResponse is what an ApplicationSet generated.
type AppSetResponse struct {
	Applications []appset.Generated `json:"applications"`
}

// AppSetGenerator generates the Applications of ApplicationSets; Service
// and Client implement it.
type AppSetGenerator interface {
	GenerateApplications(ctx context.Context, req *AppSetRequest) (*AppSetResponse, error)
}

// GenerateApplications generates the Applications of req's ApplicationSet
// (appset.Generate) through the Service's Renderer (a child process under
// limits, whose templates and parsed files cost only itself), its git
// generators reading through the Service's repository cache with the
// request's credentials, each repository judged with req.Access in this
// process first. A generation error is an *Error whose Reason is the
// ApplicationSet condition's; one stopped by a limit has Code CodeLimit.
func (s *Service) GenerateApplications(ctx context.Context, req *AppSetRequest) (*AppSetResponse, error) {
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
	gen, err := s.renderer.Generate(ctx, &req.ApplicationSet, src)
	if err != nil {
		return nil, generationError(err)
	}
	return &AppSetResponse{Applications: gen}, nil
}

// generationError is the wire form of an error of appset.Generate.
func generationError(err error) *Error {
	we := wireError(err)
	we.Reason = appset.ReasonOf(err)
	return we
}

// gitReader serves git generators from the Service's repository cache.
type gitReader struct {
	s      *Service
	creds  map[string]source.Credentials
	maxAge time.Duration
}

// Checkout implements appset.GitReader.
func (g gitReader) Checkout(ctx context.Context, repoURL, revision string) (string, error) {
	co, err := g.s.sources.Fetch(ctx, repoURL, revision, g.creds[source.NormalizeURL(repoURL)], source.ListingMaxAge(g.maxAge))
	if err != nil {
		return "", err
	}
	return co.Dir, nil
}
