package reposerver

import (
	"context"
	"strings"

	"github.com/tollgate-dev/tollgate/policies"
)

// RepositoryPermitted reports whether sourceRepos, an AppProject's
// spec.sourceRepos, permit the Helm repository or OCI registry repoURL, as
// the rule project-source-denied judges a source (policies.SourcePermitted).
//
// An OCI registry (oci) is known by two names: oci://host/path, and
// host/path, which is how Argo CD's Helm repository Secrets (enableOCI)
// and most projects' sourceRepos name it, and how Argo CD matches a
// dependency against them. Either name may be the permitted one, and a "!"
// pattern that rejects either rejects the registry.
func RepositoryPermitted(ctx context.Context, sourceRepos []string, repoURL string, oci bool) (bool, error) {
	names := []string{repoURL}
	if oci {
		s := strings.TrimSpace(repoURL)
		if len(s) >= len("oci://") && strings.EqualFold(s[:len("oci://")], "oci://") {
			names = append(names, s[len("oci://"):])
		} else {
			names = append(names, "oci://"+s)
		}
	}
	allowed := false
	for _, n := range names {
		ok, err := policies.SourcePermitted(ctx, sourceRepos, n)
		if err != nil {
			return false, err
		}
		allowed = allowed || ok
	}
	if !allowed || len(names) == 1 {
		return allowed, nil
	}
	// Permitted by one name: no "!" pattern may reject the other. With
	// "*" as the only allow pattern, a name is permitted exactly when no
	// "!" pattern rejects it.
	guard := []string{"*"}
	for _, p := range sourceRepos {
		if strings.HasPrefix(p, "!") {
			guard = append(guard, p)
		}
	}
	if len(guard) == 1 {
		return true, nil
	}
	for _, n := range names {
		ok, err := policies.SourcePermitted(ctx, guard, n)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// PermittedRepositories returns the Helm repositories and OCI registries
// of repos (repository and repo-creds Secrets of type helm) whose
// credentials a render for a project with sourceRepos may be sent: a
// repository whose URL (with or without a trailing "/") the project
// permits (RepositoryPermitted), and a repo-creds template whose URL the
// project permits or under which one of its allow patterns names
// repositories (https://charts.example.com serves the pattern
// https://charts.example.com/team-a/*). The repo-server still fetches only
// from permitted repositories; this keeps the others' credentials out of
// the request.
func PermittedRepositories(ctx context.Context, repos []HelmRepository, sourceRepos []string) ([]HelmRepository, error) {
	var out []HelmRepository
	for _, r := range repos {
		ok, err := permittedURL(ctx, sourceRepos, r.URL, r.Template, r.EnableOCI || IsOCI(r.URL, nil))
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// permittedURL reports whether the credentials of the repository (or, with
// template, the repo-creds template) at u may be sent for a project with
// sourceRepos: the project permits u (with or without a trailing "/"), or
// u is a template under which an allow pattern names repositories.
func permittedURL(ctx context.Context, sourceRepos []string, u string, template, oci bool) (bool, error) {
	ok, err := RepositoryPermitted(ctx, sourceRepos, u, oci)
	if err == nil && !ok && strings.HasSuffix(u, "/") {
		ok, err = RepositoryPermitted(ctx, sourceRepos, strings.TrimRight(u, "/"), oci)
	}
	if err != nil {
		return false, err
	}
	return ok || template && servesPattern(u, sourceRepos), nil
}

// servesPattern reports whether an allow pattern of sourceRepos names
// repositories under the template URL tmpl: it starts with tmpl and "/"
// (compared in lower case, without oci://).
func servesPattern(tmpl string, sourceRepos []string) bool {
	bare := func(s string) string {
		s = strings.ToLower(strings.TrimSpace(s))
		return strings.TrimPrefix(s, "oci://")
	}
	prefix := strings.TrimRight(bare(tmpl), "/") + "/"
	if prefix == "/" {
		return false
	}
	for _, p := range sourceRepos {
		if !strings.HasPrefix(p, "!") && strings.HasPrefix(bare(p), prefix) {
			return true
		}
	}
	return false
}
