package argocd

import (
	"strconv"
	"strings"

	"github.com/tollgate-dev/tollgate/reposerver"
	corev1 "k8s.io/api/core/v1"
)

// Argo CD repository Secret conventions.
const (
	// SecretTypeRepository is a Secret for one repository, matched by URL.
	SecretTypeRepository = "repository"
	// SecretTypeRepoCreds is a credential template matched by URL prefix.
	SecretTypeRepoCreds = "repo-creds"
)

// MatchCredentials picks the credentials for repoURL, fetched for an
// Application of AppProject project, from Argo CD repository Secrets, the
// way Argo CD does: a Secret labelled
// argocd.argoproj.io/secret-type=repository whose url normalizes to the
// same URL wins; if it carries no credentials (or none matches), the
// repo-creds Secret with the longest url that prefixes repoURL supplies
// them. Unlike a bare string prefix, a template never matches another host
// (https://github.com does not match https://github.com.evil.example).
//
// A Secret with a project key serves only the Applications of that project
// and, for the same URL, wins over one without (Argo CD's project-scoped
// repositories); other projects fall back to the Secrets without a project
// key. Argo CD ignores the key on repo-creds templates; here it scopes
// them too, so a template meant for one project never serves another. The
// result's Project is set when a scoped Secret contributed.
//
// Secrets of type "helm" (the "type" key) are ignored. knownHosts is the
// ssh_known_hosts content of argocd-ssh-known-hosts-cm; it is used for ssh
// URLs. Secret data is read from Data, falling back to StringData for
// Secrets that have not been through the API server.
func MatchCredentials(repoURL, project string, secrets []corev1.Secret, knownHosts []byte) reposerver.Credentials {
	c := reposerver.MatchGitRepository(repoURL, GitRepositories(secrets, project))
	if len(knownHosts) > 0 {
		c.SSHKnownHosts = knownHosts
	}
	return c
}

// GitRepositories are the Argo CD repository and repo-creds Secrets not of
// type helm that an Application of project may use: those without a
// project key and those of project, each with its credentials
// (Credentials.Project set for a scoped one). reposerver.MatchGitRepository
// picks among them as MatchCredentials does.
func GitRepositories(secrets []corev1.Secret, project string) []reposerver.GitRepository {
	var out []reposerver.GitRepository
	for i := range secrets {
		s := &secrets[i]
		kind := s.Labels[SecretTypeLabel]
		if strings.EqualFold(reposerver.SecretValue(s, "type"), "helm") || kind != SecretTypeRepository && kind != SecretTypeRepoCreds {
			continue
		}
		scope := reposerver.SecretValue(s, "project")
		if scope != "" && scope != project {
			continue
		}
		c := credentialsFromSecret(s)
		c.Project = scope
		out = append(out, reposerver.GitRepository{URL: reposerver.SecretValue(s, "url"), Template: kind == SecretTypeRepoCreds, Credentials: c})
	}
	return out
}

func credentialsFromSecret(s *corev1.Secret) reposerver.Credentials {
	insecure := SecretFlag(s, "insecure") || SecretFlag(s, "insecureIgnoreHostKey")
	c := reposerver.Credentials{
		Username:    reposerver.SecretValue(s, "username"),
		Password:    reposerver.SecretValue(s, "password"),
		BearerToken: reposerver.SecretValue(s, "bearerToken"),
		Insecure:    insecure,
	}
	if k := reposerver.SecretValue(s, "sshPrivateKey"); k != "" {
		c.SSHPrivateKey = []byte(k)
	}
	return c
}

// SecretFlag reports whether key of a repository Secret holds a true
// boolean ("true", "1"...).
func SecretFlag(s *corev1.Secret, key string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(reposerver.SecretValue(s, key)))
	return err == nil && b
}

// HelmRepositories are the Argo CD repository and repo-creds Secrets of
// type helm that an Application of project may use: those without a
// project key and those of project. They give chart sources and chart
// dependencies their credentials (reposerver.MatchHelmRepository).
func HelmRepositories(secrets []corev1.Secret, project string) []reposerver.HelmRepository {
	var out []reposerver.HelmRepository
	for i := range secrets {
		s := &secrets[i]
		value := func(k string) string { return reposerver.SecretValue(s, k) }
		kind := s.Labels[SecretTypeLabel]
		if !strings.EqualFold(value("type"), "helm") || kind != SecretTypeRepository && kind != SecretTypeRepoCreds {
			continue
		}
		if p := value("project"); p != "" && p != project {
			continue
		}
		out = append(out, reposerver.HelmRepository{
			URL: value("url"), Username: value("username"), Password: value("password"),
			TLSClientCertData: value("tlsClientCertData"), TLSClientCertKey: value("tlsClientCertKey"),
			Insecure: SecretFlag(s, "insecure"), EnableOCI: SecretFlag(s, "enableOCI"),
			Template: kind == SecretTypeRepoCreds, Project: value("project"),
		})
	}
	return out
}
