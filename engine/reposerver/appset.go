package reposerver

import (
	"context"
	"errors"
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
	// server and project (ClusterSecretsForGeneration).
	Clusters []corev1.Secret `json:"clusters,omitempty"`
	// Credentials of the git generators' repositories, by
	// source.NormalizeURL of their URL.
	Credentials map[string]source.Credentials `json:"credentials,omitempty"`
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

// clusterKeys are the data keys of a cluster Secret a clusters generator
// reads; the rest (its credentials) never leaves the controller.
var clusterKeys = []string{"name", "server", "project"}

// ClusterSecretsForGeneration returns the Argo CD cluster Secrets among
// secrets with their labels, annotations and the data clusters generators
// read, and nothing else.
func ClusterSecretsForGeneration(secrets []corev1.Secret) []corev1.Secret {
	var out []corev1.Secret
	for _, s := range secrets {
		if s.Labels[appset.SecretTypeLabel] != appset.SecretTypeCluster {
			continue
		}
		c := corev1.Secret{}
		c.Name, c.Namespace, c.Labels, c.Annotations = s.Name, s.Namespace, s.Labels, s.Annotations
		c.Data = map[string][]byte{}
		for _, k := range clusterKeys {
			if v, ok := s.Data[k]; ok {
				c.Data[k] = v
			} else if v, ok := s.StringData[k]; ok {
				c.Data[k] = []byte(v)
			}
		}
		out = append(out, c)
	}
	return out
}

// GenerateApplications generates the Applications of req's ApplicationSet
// (appset.Generate), its git generators reading through the Service's
// repository cache with the request's credentials. A generation error is
// an *Error whose Reason is the ApplicationSet condition's.
func (s *Service) GenerateApplications(ctx context.Context, req *AppSetRequest) (*AppSetResponse, error) {
	clusters := req.Clusters
	src := appset.Sources{
		Git:      gitReader{s: s, creds: req.Credentials, maxAge: req.ListingMaxAge},
		Clusters: func(context.Context) ([]corev1.Secret, error) { return clusters, nil },
	}
	gen, err := appset.Generate(ctx, &req.ApplicationSet, src)
	if err != nil {
		return nil, generationError(err)
	}
	return &AppSetResponse{Applications: gen}, nil
}

// generationError is the wire form of an error of appset.Generate.
func generationError(err error) *Error {
	we := wireError(err)
	var ge *appset.Error
	var ue *appset.UnsupportedError
	switch {
	case errors.As(err, &ge):
		we.Reason = ge.Reason
	case errors.As(err, &ue):
		we.Reason = v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError
	}
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
