package reposerver

import (
	"context"
	"strings"
)

// GitRepository is a Git repository, or a credential template, and its
// credentials: an Argo CD repository or repo-creds Secret that is not of
// type helm. A Request carries those the Application's project may use
// for the repositories a render reaches by itself, the remote bases of a
// kustomization; the sources' own credentials travel with each Source.
type GitRepository struct {
	// URL is the repository's URL, or a template's prefix.
	URL string `json:"url"`
	// Template is true for a repo-creds Secret: it serves every
	// repository whose URL it prefixes on the same scheme and host.
	Template bool `json:"template,omitempty"`
	// Credentials are the Secret's; Credentials.Project is set for a
	// project-scoped Secret.
	Credentials Credentials `json:"credentials"`
}

// MatchGitRepository picks the credentials of repoURL among repos the way
// Argo CD matches repository Secrets: a repository with the same URL
// (compared as NormalizeURL gives them; a project-scoped one first); if it
// carries no credentials, or none matches, the template with the longest
// URL that prefixes repoURL supplies them, and a template never serves
// another scheme or host (https://github.com does not serve
// https://github.com.evil.example). Nothing matching is anonymous access:
// the zero Credentials.
func MatchGitRepository(repoURL string, repos []GitRepository) Credentials {
	want := NormalizeURL(repoURL)
	if want == "" {
		return Credentials{}
	}
	var repo, tmpl *GitRepository
	longest := -1
	for i := range repos {
		r := &repos[i]
		u := NormalizeURL(r.URL)
		if u == "" {
			continue
		}
		scoped := r.Credentials.Project != ""
		switch {
		case !r.Template:
			if u == want && (repo == nil || scoped && repo.Credentials.Project == "") {
				repo = r
			}
		case strings.HasPrefix(want, u) && urlAuthority(want) == urlAuthority(u):
			if len(u) > longest || len(u) == longest && scoped && tmpl.Credentials.Project == "" {
				tmpl, longest = r, len(u)
			}
		}
	}
	var c Credentials
	if repo != nil {
		c = repo.Credentials
	}
	if !c.HasAuth() && tmpl != nil {
		t := tmpl.Credentials
		c.Username, c.Password, c.BearerToken, c.SSHPrivateKey = t.Username, t.Password, t.BearerToken, t.SSHPrivateKey
		if repo == nil {
			c.Insecure = t.Insecure
		}
		if len(c.SSHKnownHosts) == 0 {
			c.SSHKnownHosts = t.SSHKnownHosts
		}
		if t.Project != "" {
			c.Project = t.Project
		}
	}
	return c
}

// urlAuthority is the scheme, user and host of a normalized URL.
func urlAuthority(normalized string) string {
	i := strings.Index(normalized, "://")
	if i < 0 {
		return normalized
	}
	rest := normalized[i+3:]
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		rest = rest[:j]
	}
	return normalized[:i+3] + rest
}

// PermittedGitRepositories returns the Git repositories of repos whose
// credentials a render for a project with sourceRepos may be sent, as
// PermittedRepositories does for Helm repositories: a repository whose URL
// the project permits, and a template whose URL it permits or under which
// one of its allow patterns names repositories. The repo-server still
// fetches only from permitted repositories; this keeps the others'
// credentials out of the request.
func PermittedGitRepositories(ctx context.Context, repos []GitRepository, sourceRepos []string) ([]GitRepository, error) {
	var out []GitRepository
	for _, r := range repos {
		ok, err := permittedURL(ctx, sourceRepos, r.URL, r.Template, false)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}
