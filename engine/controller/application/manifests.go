package application

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// manifestRequest is the request for the manifests of the Application of
// tg: its sources at their targetRevisions (an operation's revisions are
// already in the sources, see requestedApplication, so what is rendered is
// what the gate judged), each with the credentials of the control-plane
// namespace's Argo CD Secrets that match it for the Application's project.
// Branch and tag names may be resolved from a listing up to listingMaxAge
// old (none when not positive). When the project sets signatureKeys, the
// request asks for the commits to be verified (signatureCheck). The
// project's sourceRepos go with the request: chart dependencies are
// fetched only from the repositories they permit, and only the Helm
// repository Secrets of those are sent (reposerver.PermittedRepositories);
// without a project, none.
func (r *Reconciler) manifestRequest(ctx context.Context, tg *target, listingMaxAge time.Duration) (*reposerver.Request, error) {
	req := &reposerver.Request{
		AppName: tg.app.InstanceName(r.opts.Namespace), Namespace: tg.app.Spec.Destination.Namespace, Project: tg.app.ProjectName(),
		MultipleSources: tg.app.Spec.HasMultipleSources(), ListingMaxAge: listingMaxAge, NoCache: tg.hard,
	}
	if tg.cluster != nil {
		var err error
		if req.KubeVersion, req.APIVersions, err = tg.cluster.capabilities(ctx, r.opts.Now()); err != nil {
			return nil, err
		}
	}
	creds := &argocd.Credentials{Reader: r.apiReader, Namespace: r.opts.Namespace, Secrets: tg.secrets}
	for _, s := range tg.sources {
		if s.Chart != "" {
			req.Sources = append(req.Sources, reposerver.Source{Source: s})
			continue
		}
		c, err := creds.For(ctx, s.RepoURL, tg.app.ProjectName())
		if err != nil {
			return nil, err
		}
		req.Sources = append(req.Sources, reposerver.Source{Source: s, Credentials: c})
	}
	// Chart dependencies come only from repositories the project's
	// sourceRepos permit, and only their credentials are sent.
	if tg.project != nil {
		req.SourceRepos = tg.project.Spec.SourceRepos
	}
	repos, err := reposerver.PermittedRepositories(ctx, helmRepositories(tg.secrets, tg.app.ProjectName()), req.SourceRepos)
	if err != nil {
		return nil, err
	}
	req.HelmRepositories = repos
	check, err := r.signatureCheck(ctx, tg.project)
	if err != nil {
		return nil, err
	}
	req.SignatureCheck = check
	return req, nil
}

// helmRepositories are the Argo CD repository and repo-creds Secrets of
// type helm that an Application of project may use: those without a
// project key and those of project. They give chart sources and chart
// dependencies their credentials (reposerver.MatchHelmRepository).
func helmRepositories(secrets []corev1.Secret, project string) []reposerver.HelmRepository {
	var out []reposerver.HelmRepository
	for i := range secrets {
		s := &secrets[i]
		value := func(k string) string { return argocd.SecretValue(s, k) }
		kind := s.Labels[argocd.SecretTypeLabel]
		if !strings.EqualFold(value("type"), "helm") || kind != argocd.SecretTypeRepository && kind != argocd.SecretTypeRepoCreds {
			continue
		}
		if p := value("project"); p != "" && p != project {
			continue
		}
		out = append(out, reposerver.HelmRepository{
			URL: value("url"), Username: value("username"), Password: value("password"),
			TLSClientCertData: value("tlsClientCertData"), TLSClientCertKey: value("tlsClientCertKey"),
			Insecure: argocd.SecretFlag(s, "insecure"), EnableOCI: argocd.SecretFlag(s, "enableOCI"),
			Template: kind == argocd.SecretTypeRepoCreds, Project: value("project"),
		})
	}
	return out
}

// argoSecrets lists the Argo CD Secrets (repository, repo-creds, cluster)
// of the control-plane namespace from the cache.
func (r *Reconciler) argoSecrets(ctx context.Context) ([]corev1.Secret, error) {
	return argocd.ListSecrets(ctx, r.client, r.opts.Namespace)
}
