package appset

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/gosimple/slug"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver/scm"
)

// SCMLister lists what SCM generators read from a provider's API: in the
// repo-server, with the tokens the controller handed over.
type SCMLister interface {
	// PullRequests lists the pull requests of the pull request generator
	// gen at field (e.g. spec.generators[0].pullRequest), unfiltered.
	PullRequests(ctx context.Context, field string, gen *v1alpha1.PullRequestGenerator) ([]scm.PullRequest, error)
	// Repositories lists the repositories of the SCM provider generator
	// gen at field, one per branch, filtered (scm.ListRepositories).
	Repositories(ctx context.Context, field string, gen *v1alpha1.SCMProviderGenerator) ([]scm.Repository, error)
}

// pullRequest returns one parameter set per pull request of the generator
// raw that one of its filters matches, with Argo CD's parameters: number,
// title, branch, branch_slug, target_branch, target_branch_slug, head_sha,
// head_short_sha (8 characters), head_short_sha_7, author, labels (with
// goTemplate only) and values.
func (g *generator) pullRequest(ctx context.Context, field string, raw any) ([]map[string]any, error) {
	var pr v1alpha1.PullRequestGenerator
	if err := fromMap(field, raw, &pr); err != nil {
		return nil, err
	}
	for _, other := range []struct {
		name string
		set  bool
	}{{"bitbucketServer", pr.BitbucketServer != nil}, {"bitbucket", pr.Bitbucket != nil}, {"azuredevops", pr.AzureDevOps != nil}} {
		if other.set {
			return nil, &UnsupportedError{Field: field + "." + other.name, Why: "tollgate's pull request generator serves GitHub, GitLab and Gitea"}
		}
	}
	if pr.Github != nil && pr.Github.AppSecretName != "" {
		return nil, &UnsupportedError{Field: field + ".github.appSecretName", Why: "GitHub App credentials are not implemented; use tokenRef"}
	}
	if _, err := pr.Provider(); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	filters, err := compilePullRequestFilters(field, pr.Filters)
	if err != nil {
		return nil, err
	}
	if g.src.SCM == nil {
		return nil, fmt.Errorf("%s: %w: the pull request generator asks the SCM provider's API, which only the controller's repo-server calls", field, ErrNotGeneratedHere)
	}
	pulls, err := g.src.SCM.PullRequests(ctx, field, &pr)
	if err != nil {
		if pr.ContinueOnRepoNotFoundError && errors.Is(err, scm.ErrRepositoryNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	var out []map[string]any
	for _, p := range pulls {
		if !matchPullRequest(p, filters) {
			continue
		}
		params := map[string]any{
			"number":             strconv.FormatInt(p.Number, 10),
			"title":              p.Title,
			"branch":             p.Branch,
			"branch_slug":        pullRequestSlug(p.Branch),
			"target_branch":      p.TargetBranch,
			"target_branch_slug": pullRequestSlug(p.TargetBranch),
			"head_sha":           p.HeadSHA,
			"head_short_sha":     p.HeadSHA[:min(len(p.HeadSHA), 8)],
			"head_short_sha_7":   p.HeadSHA[:min(len(p.HeadSHA), 7)],
			"author":             p.Author,
		}
		if g.r.goTemplate {
			labels := make([]any, len(p.Labels))
			for i, l := range p.Labels {
				labels[i] = l
			}
			params["labels"] = labels
		}
		if err := g.addValues(field, params, pr.Values); err != nil {
			return nil, err
		}
		out = append(out, params)
	}
	return out, nil
}

// pullRequestFilter is a compiled PullRequestGeneratorFilter.
type pullRequestFilter struct {
	branch, target, title *regexp.Regexp
}

func compilePullRequestFilters(field string, filters []v1alpha1.PullRequestGeneratorFilter) ([]pullRequestFilter, error) {
	out := make([]pullRequestFilter, len(filters))
	for i, f := range filters {
		for _, p := range []struct {
			name string
			expr *string
			into **regexp.Regexp
		}{{"branchMatch", f.BranchMatch, &out[i].branch}, {"targetBranchMatch", f.TargetBranchMatch, &out[i].target}, {"titleMatch", f.TitleMatch, &out[i].title}} {
			if p.expr == nil {
				continue
			}
			re, err := regexp.Compile(*p.expr)
			if err != nil {
				return nil, fmt.Errorf("%s.filters[%d].%s: %w", field, i, p.name, err)
			}
			*p.into = re
		}
	}
	return out, nil
}

// matchPullRequest reports whether one of filters matches p (every
// pattern it has); no filters match everything.
func matchPullRequest(p scm.PullRequest, filters []pullRequestFilter) bool {
	if len(filters) == 0 {
		return true
	}
	for _, f := range filters {
		if (f.branch == nil || f.branch.MatchString(p.Branch)) &&
			(f.target == nil || f.target.MatchString(p.TargetBranch)) &&
			(f.title == nil || f.title.MatchString(p.Title)) {
			return true
		}
	}
	return false
}

// pullRequestSlug is Argo CD's branch_slug: gosimple/slug with at most 50
// characters (room for a suffix in a DNS label) and _ made -.
func pullRequestSlug(s string) string {
	slugMu.Lock()
	defer slugMu.Unlock()
	slug.MaxLength, slug.EnableSmartTruncate = 50, true
	slug.CustomSub = map[string]string{"_": "-"}
	defer func() { slug.CustomSub = nil }()
	return slug.Make(s)
}
