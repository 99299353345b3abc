package scm

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// Repository is one branch of a repository as an SCM provider generator
// lists it.
type Repository struct {
	Organization string   `json:"organization"`
	Repository   string   `json:"repository"`
	URL          string   `json:"url"`
	Branch       string   `json:"branch"`
	SHA          string   `json:"sha"`
	Labels       []string `json:"labels,omitempty"`
	RepositoryID int64    `json:"repositoryId"`
}

// repoProvider is one provider's side of ListRepositories.
type repoProvider interface {
	// repos lists the repositories, each on its default branch.
	repos(ctx context.Context) ([]Repository, error)
	// branches lists repo's branches: its default one, or every one.
	branches(ctx context.Context, repo Repository) ([]Repository, error)
	// hasPath reports whether repo holds path (a file or a directory) on
	// its branch.
	hasPath(ctx context.Context, repo Repository, path string) (bool, error)
}

// RepositoryFilter is a compiled SCMProviderGeneratorFilter.
type RepositoryFilter struct {
	repository, label, branch   *regexp.Regexp
	pathsExist, pathsDoNotExist []string
}

// CompileRepositoryFilters compiles filters; an error names the field
// under field (e.g. spec.generators[0].scmProvider).
func CompileRepositoryFilters(field string, filters []v1alpha1.SCMProviderGeneratorFilter) ([]RepositoryFilter, error) {
	out := make([]RepositoryFilter, len(filters))
	for i, f := range filters {
		for _, p := range []struct {
			name string
			expr *string
			into **regexp.Regexp
		}{{"repositoryMatch", f.RepositoryMatch, &out[i].repository}, {"labelMatch", f.LabelMatch, &out[i].label}, {"branchMatch", f.BranchMatch, &out[i].branch}} {
			if p.expr == nil {
				continue
			}
			re, err := regexp.Compile(*p.expr)
			if err != nil {
				return nil, fmt.Errorf("%s.filters[%d].%s: %w", field, i, p.name, err)
			}
			*p.into = re
		}
		out[i].pathsExist, out[i].pathsDoNotExist = f.PathsExist, f.PathsDoNotExist
	}
	return out, nil
}

// onBranch reports whether the filter looks at branches (branchMatch or
// paths), which Argo CD applies after listing them.
func (f RepositoryFilter) onBranch() bool {
	return f.branch != nil || f.pathsExist != nil || f.pathsDoNotExist != nil
}

// ListRepositories lists the repositories of gen, one entry per branch,
// filtered as Argo CD's ListRepos does: the filters without branchMatch
// or paths keep repositories (one of them matching, all its conditions),
// then every repository's branches are listed, and the others keep
// branches.
func ListRepositories(ctx context.Context, gen *v1alpha1.SCMProviderGenerator, auth Auth) ([]Repository, error) {
	filters, err := CompileRepositoryFilters("filters", gen.Filters)
	if err != nil {
		return nil, err
	}
	p, err := newRepoProvider(gen, auth)
	if err != nil {
		return nil, err
	}
	repos, err := p.repos(ctx)
	if err != nil {
		return nil, err
	}
	var repoFilters, branchFilters []RepositoryFilter
	for _, f := range filters {
		if f.onBranch() {
			branchFilters = append(branchFilters, f)
		} else {
			repoFilters = append(repoFilters, f)
		}
	}
	if repos, err = keep(ctx, p, repos, repoFilters); err != nil {
		return nil, err
	}
	var branches []Repository
	for _, r := range repos {
		b, err := p.branches(ctx, r)
		if err != nil {
			return nil, err
		}
		branches = append(branches, b...)
	}
	return keep(ctx, p, branches, branchFilters)
}

// keep returns the repositories one of filters matches; all of them
// without filters.
func keep(ctx context.Context, p repoProvider, repos []Repository, filters []RepositoryFilter) ([]Repository, error) {
	if len(filters) == 0 {
		return repos, nil
	}
	var out []Repository
	for _, r := range repos {
		for _, f := range filters {
			ok, err := f.matches(ctx, p, r)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, r)
				break
			}
		}
	}
	return out, nil
}

func (f RepositoryFilter) matches(ctx context.Context, p repoProvider, r Repository) (bool, error) {
	if f.repository != nil && !f.repository.MatchString(r.Repository) ||
		f.branch != nil && !f.branch.MatchString(r.Branch) ||
		f.label != nil && !slices.ContainsFunc(r.Labels, f.label.MatchString) {
		return false, nil
	}
	for _, want := range []struct {
		paths []string
		exist bool
	}{{f.pathsExist, true}, {f.pathsDoNotExist, false}} {
		for _, path := range want.paths {
			has, err := p.hasPath(ctx, r, strings.TrimRight(path, "/"))
			if err != nil {
				return false, err
			}
			if has != want.exist {
				return false, nil
			}
		}
	}
	return true, nil
}

func newRepoProvider(gen *v1alpha1.SCMProviderGenerator, auth Auth) (repoProvider, error) {
	ref, err := gen.Provider()
	if err != nil {
		return nil, err
	}
	if gen.CloneProtocol != "" && gen.CloneProtocol != "ssh" && gen.CloneProtocol != "https" {
		return nil, fmt.Errorf("unknown clone protocol %q (want ssh or https)", gen.CloneProtocol)
	}
	https := gen.CloneProtocol == "https"
	switch ref.Name {
	case GitHub:
		c, err := newClient(githubBase(gen.Github.API), auth, githubHeader)
		return &githubRepos{c: c, g: gen.Github, https: https}, err
	case GitLab:
		c, err := newClient(gitlabBase(gen.Gitlab.API), auth, gitlabHeader)
		return &gitlabRepos{c: c, g: gen.Gitlab, https: https}, err
	}
	if gen.Gitea.API == "" {
		return nil, errors.New("gitea.api is required: Gitea has no public API")
	}
	c, err := newClient(apiBase(gen.Gitea.API, "api/v1/"), auth, giteaHeader)
	return &giteaRepos{c: c, g: gen.Gitea, https: https}, err
}

// exists GETs path and reports whether it answered 2xx (true) or 404
// (false).
func exists(ctx context.Context, c *client, path string) (bool, error) {
	u, err := c.base.Parse(path)
	if err != nil {
		return false, err
	}
	var ignored any
	if _, err := c.get(ctx, u, &ignored); err != nil {
		if errors.Is(err, ErrRepositoryNotFound) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// one GETs path into v; found is false on a 404.
func one(ctx context.Context, c *client, path string, v any) (found bool, err error) {
	u, err := c.base.Parse(path)
	if err != nil {
		return false, err
	}
	if _, err := c.get(ctx, u, v); err != nil {
		if errors.Is(err, ErrRepositoryNotFound) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// escapePath escapes each segment of a repository path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// githubRepos lists a GitHub organization's repositories.
type githubRepos struct {
	c     *client
	g     *v1alpha1.SCMProviderGeneratorGithub
	https bool
}

type githubBranch struct {
	Name   string `json:"name"`
	Commit struct {
		SHA string `json:"sha"`
	} `json:"commit"`
}

func (p *githubRepos) repos(ctx context.Context) ([]Repository, error) {
	type repo struct {
		ID            int64    `json:"id"`
		Name          string   `json:"name"`
		DefaultBranch string   `json:"default_branch"`
		SSHURL        string   `json:"ssh_url"`
		CloneURL      string   `json:"clone_url"`
		Topics        []string `json:"topics"`
		Archived      bool     `json:"archived"`
		Owner         struct {
			Login string `json:"login"`
		} `json:"owner"`
	}
	list, err := listAll[repo](ctx, p.c, "orgs/"+url.PathEscape(p.g.Organization)+"/repos?per_page=100")
	if err != nil {
		return nil, fmt.Errorf("error listing repositories for %s: %w", p.g.Organization, err)
	}
	var out []Repository
	for _, r := range list {
		if p.g.ExcludeArchivedRepos && r.Archived {
			continue
		}
		u := r.SSHURL
		if p.https {
			u = r.CloneURL
		}
		out = append(out, Repository{Organization: r.Owner.Login, Repository: r.Name, URL: u, Branch: r.DefaultBranch, Labels: r.Topics, RepositoryID: r.ID})
	}
	return out, nil
}

func (p *githubRepos) branches(ctx context.Context, repo Repository) ([]Repository, error) {
	base := "repos/" + url.PathEscape(repo.Organization) + "/" + url.PathEscape(repo.Repository) + "/branches"
	var list []githubBranch
	if p.g.AllBranches {
		var err error
		if list, err = listAll[githubBranch](ctx, p.c, base+"?per_page=100"); err != nil {
			return nil, err
		}
	} else {
		var b githubBranch
		found, err := one(ctx, p.c, base+"/"+escapePath(repo.Branch), &b)
		if err != nil {
			return nil, err
		}
		if found { // an empty repository has no default branch
			list = append(list, b)
		}
	}
	return withBranches(repo, list, func(b githubBranch) (string, string) { return b.Name, b.Commit.SHA }), nil
}

func (p *githubRepos) hasPath(ctx context.Context, repo Repository, path string) (bool, error) {
	return contentsExist(ctx, p.c, repo, path)
}

// contentsExist asks GitHub's or Gitea's contents API (the same path)
// whether repo's branch holds path.
func contentsExist(ctx context.Context, c *client, repo Repository, path string) (bool, error) {
	return exists(ctx, c, "repos/"+url.PathEscape(repo.Organization)+"/"+url.PathEscape(repo.Repository)+"/contents/"+escapePath(path)+"?ref="+url.QueryEscape(repo.Branch))
}

// gitlabRepos lists a GitLab group's projects.
type gitlabRepos struct {
	c     *client
	g     *v1alpha1.SCMProviderGeneratorGitlab
	https bool
}

type gitlabBranch struct {
	Name   string `json:"name"`
	Commit struct {
		ID string `json:"id"`
	} `json:"commit"`
}

func (p *gitlabRepos) repos(ctx context.Context) ([]Repository, error) {
	type project struct {
		ID            int64    `json:"id"`
		Path          string   `json:"path"`
		DefaultBranch string   `json:"default_branch"`
		SSHURL        string   `json:"ssh_url_to_repo"`
		HTTPURL       string   `json:"http_url_to_repo"`
		Topics        []string `json:"topics"`
		TagList       []string `json:"tag_list"`
		Namespace     struct {
			FullPath string `json:"full_path"`
		} `json:"namespace"`
	}
	q := url.Values{"per_page": {"100"}, "include_subgroups": {strconv.FormatBool(p.g.IncludeSubgroups)},
		"with_shared": {strconv.FormatBool(p.g.IncludeSharedProjects == nil || *p.g.IncludeSharedProjects)}}
	if p.g.Topic != "" {
		q.Set("topic", p.g.Topic)
	}
	if p.g.IncludeArchivedRepos {
		q.Set("archived", "true")
	}
	list, err := listAll[project](ctx, p.c, "groups/"+url.PathEscape(p.g.Group)+"/projects?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("error listing projects for %s: %w", p.g.Group, err)
	}
	var out []Repository
	for _, r := range list {
		u := r.SSHURL
		if p.https {
			u = r.HTTPURL
		}
		labels := r.Topics
		if len(labels) == 0 {
			labels = r.TagList // GitLab before 14.5
		}
		out = append(out, Repository{Organization: r.Namespace.FullPath, Repository: r.Path, URL: u, Branch: r.DefaultBranch, Labels: labels, RepositoryID: r.ID})
	}
	return out, nil
}

func (p *gitlabRepos) branches(ctx context.Context, repo Repository) ([]Repository, error) {
	base := "projects/" + strconv.FormatInt(repo.RepositoryID, 10) + "/repository/branches"
	var list []gitlabBranch
	if p.g.AllBranches {
		var err error
		if list, err = listAll[gitlabBranch](ctx, p.c, base+"?per_page=100"); err != nil && !errors.Is(err, ErrRepositoryNotFound) {
			return nil, err
		}
	} else {
		var b gitlabBranch
		found, err := one(ctx, p.c, base+"/"+url.PathEscape(repo.Branch), &b)
		if err != nil {
			return nil, err
		}
		if found {
			list = append(list, b)
		}
	}
	return withBranches(repo, list, func(b gitlabBranch) (string, string) { return b.Name, b.Commit.ID }), nil
}

// hasPath asks for path as a file, then as a directory, as Argo CD does.
func (p *gitlabRepos) hasPath(ctx context.Context, repo Repository, path string) (bool, error) {
	project := "projects/" + strconv.FormatInt(repo.RepositoryID, 10) + "/repository/"
	ref := url.QueryEscape(repo.Branch)
	if ok, err := exists(ctx, p.c, project+"files/"+url.PathEscape(path)+"?ref="+ref); ok || err != nil {
		return ok, err
	}
	return exists(ctx, p.c, project+"tree?path="+url.QueryEscape(path)+"&ref="+ref)
}

// giteaRepos lists a Gitea owner's repositories.
type giteaRepos struct {
	c     *client
	g     *v1alpha1.SCMProviderGeneratorGitea
	https bool
}

type giteaBranch struct {
	Name   string `json:"name"`
	Commit struct {
		ID string `json:"id"`
	} `json:"commit"`
}

func (p *giteaRepos) repos(ctx context.Context) ([]Repository, error) {
	type repo struct {
		ID            int64  `json:"id"`
		Name          string `json:"name"`
		DefaultBranch string `json:"default_branch"`
		SSHURL        string `json:"ssh_url"`
		HTMLURL       string `json:"html_url"`
		Archived      bool   `json:"archived"`
	}
	type label struct {
		Name string `json:"name"`
	}
	list, err := listAll[repo](ctx, p.c, "orgs/"+url.PathEscape(p.g.Owner)+"/repos?limit=50")
	if err != nil {
		return nil, fmt.Errorf("error listing repositories for %s: %w", p.g.Owner, err)
	}
	var out []Repository
	for _, r := range list {
		if p.g.ExcludeArchivedRepos && r.Archived {
			continue
		}
		u := r.SSHURL
		if p.https {
			u = r.HTMLURL
		}
		// Gitea's repository labels (those of its issues), as Argo CD reads.
		labels, err := listAll[label](ctx, p.c, "repos/"+url.PathEscape(p.g.Owner)+"/"+url.PathEscape(r.Name)+"/labels?limit=50")
		if err != nil {
			return nil, err
		}
		names := make([]string, len(labels))
		for i, l := range labels {
			names[i] = l.Name
		}
		out = append(out, Repository{Organization: p.g.Owner, Repository: r.Name, URL: u, Branch: r.DefaultBranch, Labels: names, RepositoryID: r.ID})
	}
	return out, nil
}

func (p *giteaRepos) branches(ctx context.Context, repo Repository) ([]Repository, error) {
	base := "repos/" + url.PathEscape(p.g.Owner) + "/" + url.PathEscape(repo.Repository) + "/branches"
	var list []giteaBranch
	if p.g.AllBranches {
		var err error
		if list, err = listAll[giteaBranch](ctx, p.c, base+"?limit=50"); err != nil {
			return nil, err
		}
	} else {
		var b giteaBranch
		found, err := one(ctx, p.c, base+"/"+escapePath(repo.Branch), &b)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, fmt.Errorf("got 404 while getting default branch %q for repo %q - check your repo config", repo.Branch, repo.Repository)
		}
		list = append(list, b)
	}
	return withBranches(repo, list, func(b giteaBranch) (string, string) { return b.Name, b.Commit.ID }), nil
}

func (p *giteaRepos) hasPath(ctx context.Context, repo Repository, path string) (bool, error) {
	return contentsExist(ctx, p.c, repo, path)
}

// withBranches is repo once per branch, with the branch's name and SHA.
func withBranches[B any](repo Repository, branches []B, nameSHA func(B) (string, string)) []Repository {
	out := make([]Repository, 0, len(branches))
	for _, b := range branches {
		r := repo
		r.Branch, r.SHA = nameSHA(b)
		out = append(out, r)
	}
	return out
}
