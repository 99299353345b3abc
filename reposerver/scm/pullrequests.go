package scm

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// PullRequest is one pull (or merge) request as a provider lists it.
type PullRequest struct {
	Number       int64    `json:"number"`
	Title        string   `json:"title"`
	Branch       string   `json:"branch"`
	TargetBranch string   `json:"targetBranch"`
	HeadSHA      string   `json:"headSHA"`
	Labels       []string `json:"labels,omitempty"`
	Author       string   `json:"author"`
}

// ListPullRequests lists the pull requests of gen's repository from its
// provider, those without every one of its labels left out, as Argo CD's
// services list them: GitHub's and Gitea's open ones, GitLab's of
// pullRequestState (all when empty).
func ListPullRequests(ctx context.Context, gen *v1alpha1.PullRequestGenerator, auth Auth) ([]PullRequest, error) {
	p, err := gen.Provider()
	if err != nil {
		return nil, err
	}
	switch p.Name {
	case GitHub:
		return githubPulls(ctx, gen.Github, auth)
	case GitLab:
		return gitlabMergeRequests(ctx, gen.GitLab, auth)
	}
	return giteaPulls(ctx, gen.Gitea, auth)
}

// hostedPull is what a pull request of GitHub's and Gitea's REST APIs
// (the same JSON) holds that we read.
type hostedPull struct {
	Number int64  `json:"number"`
	Title  string `json:"title"`
	Head   struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
}

func githubPulls(ctx context.Context, g *v1alpha1.PullRequestGeneratorGithub, auth Auth) ([]PullRequest, error) {
	c, err := newClient(githubBase(g.API), auth, githubHeader)
	if err != nil {
		return nil, err
	}
	pulls, err := listAll[hostedPull](ctx, c, "repos/"+url.PathEscape(g.Owner)+"/"+url.PathEscape(g.Repo)+"/pulls?per_page=100")
	if err != nil {
		return nil, fmt.Errorf("error listing pull requests for %s/%s: %w", g.Owner, g.Repo, err)
	}
	return withLabels(pulls, g.Labels), nil
}

// withLabels are the pulls that carry every one of labels, as Argo CD's
// GitHub and Gitea services keep them.
func withLabels(pulls []hostedPull, labels []string) []PullRequest {
	out := make([]PullRequest, 0, len(pulls))
	for _, p := range pulls {
		names := make([]string, len(p.Labels))
		for i, l := range p.Labels {
			names[i] = l.Name
		}
		if !containsAll(names, labels) {
			continue
		}
		out = append(out, PullRequest{Number: p.Number, Title: p.Title, Branch: p.Head.Ref, TargetBranch: p.Base.Ref,
			HeadSHA: p.Head.SHA, Labels: names, Author: p.User.Login})
	}
	return out
}

// githubBase is the REST base URL of api, as go-github's
// WithEnterpriseURLs makes it: GitHub Enterprise serves the API under
// /api/v3/ unless its host is an api. host.
func githubBase(api string) string {
	if api == "" {
		return GitHubPublicAPI + "/"
	}
	u, err := url.Parse(api)
	if err == nil && (strings.HasPrefix(u.Host, "api.") || strings.Contains(u.Host, ".api.")) {
		return strings.TrimRight(api, "/") + "/"
	}
	return apiBase(api, "api/v3/")
}

// gitlabBase is the REST base URL of a GitLab api ("" is gitlab.com).
func gitlabBase(api string) string {
	if api == "" {
		api = GitLabPublicAPI
	}
	return apiBase(api, "api/v4/")
}

// The providers' token headers.
func githubHeader(h http.Header, token string) {
	h.Set("Accept", "application/vnd.github+json")
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
}

func gitlabHeader(h http.Header, token string) {
	if token != "" {
		h.Set("PRIVATE-TOKEN", token)
	}
}

func giteaHeader(h http.Header, token string) {
	if token != "" {
		h.Set("Authorization", "token "+token)
	}
}

// gitlabMergeRequest is what a merge request of GitLab's REST API holds
// that we read.
type gitlabMergeRequest struct {
	IID          int64    `json:"iid"`
	Title        string   `json:"title"`
	SourceBranch string   `json:"source_branch"`
	TargetBranch string   `json:"target_branch"`
	SHA          string   `json:"sha"`
	Labels       []string `json:"labels"`
	Author       struct {
		Username string `json:"username"`
	} `json:"author"`
}

func gitlabMergeRequests(ctx context.Context, g *v1alpha1.PullRequestGeneratorGitLab, auth Auth) ([]PullRequest, error) {
	c, err := newClient(gitlabBase(g.API), auth, gitlabHeader)
	if err != nil {
		return nil, err
	}
	q := url.Values{"per_page": {"100"}}
	if len(g.Labels) > 0 {
		q.Set("labels", strings.Join(g.Labels, ","))
	}
	if g.PullRequestState != "" {
		q.Set("state", g.PullRequestState)
	}
	mrs, err := listAll[gitlabMergeRequest](ctx, c, "projects/"+url.PathEscape(g.Project)+"/merge_requests?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("error listing merge requests for project '%s': %w", g.Project, err)
	}
	out := make([]PullRequest, 0, len(mrs))
	for _, m := range mrs {
		out = append(out, PullRequest{Number: m.IID, Title: m.Title, Branch: m.SourceBranch, TargetBranch: m.TargetBranch,
			HeadSHA: m.SHA, Labels: m.Labels, Author: m.Author.Username})
	}
	return out, nil
}

func giteaPulls(ctx context.Context, g *v1alpha1.PullRequestGeneratorGitea, auth Auth) ([]PullRequest, error) {
	if g.API == "" {
		return nil, fmt.Errorf("gitea.api is required: Gitea has no public API")
	}
	c, err := newClient(apiBase(g.API, "api/v1/"), auth, giteaHeader)
	if err != nil {
		return nil, err
	}
	pulls, err := listAll[hostedPull](ctx, c, "repos/"+url.PathEscape(g.Owner)+"/"+url.PathEscape(g.Repo)+"/pulls?state=open&limit=50")
	if err != nil {
		return nil, fmt.Errorf("error listing pull requests for %s/%s: %w", g.Owner, g.Repo, err)
	}
	return withLabels(pulls, g.Labels), nil
}

// containsAll reports whether got holds every one of want.
func containsAll(got, want []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}
