package appset

import (
	"context"
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver/scm"
)

// scmProvider returns one parameter set per repository branch the SCM
// provider generator raw lists, with Argo CD's parameters: organization,
// repository, repository_id, url, branch, branchNormalized, sha,
// short_sha (8 characters), short_sha_7, labels (comma-separated) and
// values.
func (g *generator) scmProvider(ctx context.Context, field string, raw any) ([]map[string]any, error) {
	var sp v1alpha1.SCMProviderGenerator
	if err := fromMap(field, raw, &sp); err != nil {
		return nil, err
	}
	for _, other := range []struct {
		name string
		set  bool
	}{{"bitbucket", sp.Bitbucket != nil}, {"bitbucketServer", sp.BitbucketServer != nil}, {"azureDevOps", sp.AzureDevOps != nil}, {"awsCodeCommit", sp.AWSCodeCommit != nil}} {
		if other.set {
			return nil, &UnsupportedError{Field: field + "." + other.name, Why: "tollgate's SCM provider generator serves GitHub, GitLab and Gitea"}
		}
	}
	if sp.Github != nil && sp.Github.AppSecretName != "" {
		return nil, &UnsupportedError{Field: field + ".github.appSecretName", Why: "GitHub App credentials are not implemented; use tokenRef"}
	}
	if _, err := sp.Provider(); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if _, err := scm.CompileRepositoryFilters(field, sp.Filters); err != nil {
		return nil, err
	}
	if p := sp.CloneProtocol; p != "" && p != "ssh" && p != "https" {
		return nil, fmt.Errorf("%s.cloneProtocol: unknown clone protocol %q (want ssh or https)", field, p)
	}
	if g.src.SCM == nil {
		return nil, fmt.Errorf("%s: %w: the SCM provider generator asks the SCM provider's API, which only the controller's repo-server calls", field, ErrNotGeneratedHere)
	}
	repos, err := g.src.SCM.Repositories(ctx, field, &sp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	out := make([]map[string]any, 0, len(repos))
	for _, r := range repos {
		params := map[string]any{
			"organization":     r.Organization,
			"repository":       r.Repository,
			"repository_id":    r.RepositoryID,
			"url":              r.URL,
			"branch":           r.Branch,
			"branchNormalized": SanitizeName(r.Branch),
			"sha":              r.SHA,
			"short_sha":        r.SHA[:min(len(r.SHA), 8)],
			"short_sha_7":      r.SHA[:min(len(r.SHA), 7)],
			"labels":           strings.Join(r.Labels, ","),
		}
		if err := g.addValues(field, params, sp.Values); err != nil {
			return nil, err
		}
		out = append(out, params)
	}
	return out, nil
}
