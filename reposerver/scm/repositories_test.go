package scm_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver/scm"
	"github.com/tollgate-dev/tollgate/test/scmapi"
)

func ptr(s string) *string { return &s }

// repos are an organization's repositories: web (two branches, a
// deploy/ directory on both), api (topic backend, a Chart.yaml), an
// archived one, and an empty one (no default branch).
func repos() []scmapi.Repo {
	return []scmapi.Repo{
		{Name: "web", DefaultBranch: "main", Branches: map[string]string{"main": "aaaaaaaaaa", "feat/x": "bbbbbbbbbb"}, Topics: []string{"frontend"}, Files: []string{"deploy/kustomization.yaml"}},
		{Name: "api", DefaultBranch: "trunk", Branches: map[string]string{"trunk": "cccccccccc"}, Topics: []string{"backend", "go"}, Files: []string{"Chart.yaml"}},
		{Name: "old", DefaultBranch: "main", Branches: map[string]string{"main": "dddddddddd"}, Archived: true, Files: []string{"deploy/x.yaml"}},
		{Name: "empty", DefaultBranch: "main"},
	}
}

// summary is "org/repo@branch sha url [labels]" per repository.
func repoSummary(rs []scm.Repository) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Organization+"/"+r.Repository+"@"+r.Branch+" "+r.SHA+" "+r.URL+" "+strings.Join(r.Labels, ","))
	}
	return out
}

// TestListRepositories: each provider's repositories, from a fake that
// answers as the provider documents, two per page: default branches or
// all, ssh or https URLs, archived ones left out on request, and Argo CD's
// filters (a filter with a branch or path condition keeps branches, after
// the others kept repositories; within each stage one filter matching,
// every condition of it).
func TestListRepositories(t *testing.T) {
	srv := scmapi.New(t, "s3cret")
	srv.SetRepos("org", repos()...)
	srv.SetRepos("group/sub", scmapi.Repo{Name: "deep", DefaultBranch: "main", Branches: map[string]string{"main": "eeeeeeeeee"}, Topics: []string{"frontend"}})
	host := strings.TrimPrefix(srv.URL, "http://")
	host = host[:strings.IndexByte(host, ':')]
	ssh := func(org, name string) string { return "git@" + host + ":" + org + "/" + name + ".git" }
	auth := scm.Auth{Token: "s3cret"}
	github := func(g v1alpha1.SCMProviderGeneratorGithub, filters ...v1alpha1.SCMProviderGeneratorFilter) v1alpha1.SCMProviderGenerator {
		g.Organization, g.API = "org", srv.URL
		return v1alpha1.SCMProviderGenerator{Github: &g, Filters: filters}
	}
	for name, tc := range map[string]struct {
		gen  v1alpha1.SCMProviderGenerator
		want []string
	}{
		"github default branches": {github(v1alpha1.SCMProviderGeneratorGithub{}), []string{
			"org/web@main aaaaaaaaaa " + ssh("org", "web") + " frontend",
			"org/api@trunk cccccccccc " + ssh("org", "api") + " backend,go",
			"org/old@main dddddddddd " + ssh("org", "old") + " ",
		}},
		"github all branches, https, no archived": {v1alpha1.SCMProviderGenerator{CloneProtocol: "https",
			Github: &v1alpha1.SCMProviderGeneratorGithub{Organization: "org", API: srv.URL, AllBranches: true, ExcludeArchivedRepos: true}}, []string{
			"org/web@feat/x bbbbbbbbbb " + srv.URL + "/org/web.git frontend",
			"org/web@main aaaaaaaaaa " + srv.URL + "/org/web.git frontend",
			"org/api@trunk cccccccccc " + srv.URL + "/org/api.git backend,go",
			"org/old@main dddddddddd " + srv.URL + "/org/old.git ",
		}[:3]},
		"github filters, repository stage then branch stage": {github(v1alpha1.SCMProviderGeneratorGithub{AllBranches: true},
			v1alpha1.SCMProviderGeneratorFilter{LabelMatch: ptr("^(front|back)")},
			v1alpha1.SCMProviderGeneratorFilter{RepositoryMatch: ptr("^w"), BranchMatch: ptr("^feat/")},
			v1alpha1.SCMProviderGeneratorFilter{PathsExist: []string{"Chart.yaml"}}), []string{
			"org/web@feat/x bbbbbbbbbb " + ssh("org", "web") + " frontend",
			"org/api@trunk cccccccccc " + ssh("org", "api") + " backend,go",
		}},
		"github paths": {github(v1alpha1.SCMProviderGeneratorGithub{},
			v1alpha1.SCMProviderGeneratorFilter{PathsExist: []string{"deploy/"}, PathsDoNotExist: []string{"Chart.yaml"}}), []string{
			"org/web@main aaaaaaaaaa " + ssh("org", "web") + " frontend",
			"org/old@main dddddddddd " + ssh("org", "old") + " ",
		}},
		"gitlab group": {v1alpha1.SCMProviderGenerator{Gitlab: &v1alpha1.SCMProviderGeneratorGitlab{Group: "org", API: srv.URL},
			Filters: []v1alpha1.SCMProviderGeneratorFilter{{PathsExist: []string{"deploy"}}, {PathsExist: []string{"Chart.yaml"}}}}, []string{
			"org/web@main aaaaaaaaaa " + ssh("org", "web") + " frontend",
			"org/api@trunk cccccccccc " + ssh("org", "api") + " backend,go",
			"org/old@main dddddddddd " + ssh("org", "old") + " ",
		}},
		"gitlab subgroups and topic": {v1alpha1.SCMProviderGenerator{Gitlab: &v1alpha1.SCMProviderGeneratorGitlab{Group: "group", API: srv.URL, IncludeSubgroups: true, Topic: "frontend"}}, []string{
			"group/sub/deep@main eeeeeeeeee " + ssh("group/sub", "deep") + " frontend",
		}},
		"gitea labels": {v1alpha1.SCMProviderGenerator{Gitea: &v1alpha1.SCMProviderGeneratorGitea{Owner: "org", API: srv.URL, ExcludeArchivedRepos: true},
			Filters: []v1alpha1.SCMProviderGeneratorFilter{{LabelMatch: ptr("^go$")}}}, []string{
			"org/api@trunk cccccccccc " + ssh("org", "api") + " backend,go",
		}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := scm.ListRepositories(t.Context(), &tc.gen, auth)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, repoSummary(got)); diff != "" {
				t.Errorf("repositories (-want +got):\n%s", diff)
			}
		})
	}
	archived := &v1alpha1.SCMProviderGenerator{Gitlab: &v1alpha1.SCMProviderGeneratorGitlab{Group: "org", API: srv.URL, IncludeArchivedRepos: true, IncludeSharedProjects: new(bool)}}
	if _, err := scm.ListRepositories(t.Context(), archived, auth); err != nil {
		t.Fatal(err)
	}
	reqs := strings.Join(srv.Requests(), "\n")
	for _, q := range []string{"/api/v4/groups/group/projects?include_subgroups=true&per_page=100&topic=frontend&with_shared=true",
		"/api/v4/groups/org/projects?archived=true&include_subgroups=false&per_page=100&with_shared=false"} {
		if !strings.Contains(reqs, q) {
			t.Errorf("GitLab was not asked %s:\n%s", q, reqs)
		}
	}
	gitea := &v1alpha1.SCMProviderGenerator{Gitea: &v1alpha1.SCMProviderGeneratorGitea{Owner: "org", API: srv.URL}}
	if _, err := scm.ListRepositories(t.Context(), gitea, auth); err == nil || !strings.Contains(err.Error(), `got 404 while getting default branch "main" for repo "empty"`) {
		t.Errorf("gitea empty repository: %v", err)
	}
	for _, gen := range []*v1alpha1.SCMProviderGenerator{
		{Github: &v1alpha1.SCMProviderGeneratorGithub{Organization: "nope", API: srv.URL}},
		{Github: &v1alpha1.SCMProviderGeneratorGithub{Organization: "org", API: srv.URL}, CloneProtocol: "git"},
		{Gitea: &v1alpha1.SCMProviderGeneratorGitea{Owner: "org"}},
	} {
		if _, err := scm.ListRepositories(t.Context(), gen, auth); err == nil {
			t.Errorf("%+v: no error", gen)
		}
	}
}
