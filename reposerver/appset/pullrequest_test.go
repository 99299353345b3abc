package appset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver/scm"
)

// fakeSCM serves the same pull requests to every pull request generator,
// the same repositories to every SCM provider generator, or err, and
// records the generators it was asked for.
type fakeSCM struct {
	pulls []scm.PullRequest
	repos []scm.Repository
	err   error
	asked []string
}

func (f *fakeSCM) PullRequests(_ context.Context, field string, gen *v1alpha1.PullRequestGenerator) ([]scm.PullRequest, error) {
	p, _ := gen.Provider()
	f.asked = append(f.asked, field+" "+p.Name+" "+p.API)
	return f.pulls, f.err
}

func (f *fakeSCM) Repositories(_ context.Context, field string, gen *v1alpha1.SCMProviderGenerator) ([]scm.Repository, error) {
	p, _ := gen.Provider()
	f.asked = append(f.asked, field+" "+p.Name+" "+p.API)
	return f.repos, f.err
}

var pulls = []scm.PullRequest{
	{Number: 12, Title: "Add cache", Branch: "feat/Cache_Layer", TargetBranch: "main", HeadSHA: "0123456789abcdef0123", Author: "ann", Labels: []string{"preview"}},
	{Number: 7, Title: "WIP: docs", Branch: "docs", TargetBranch: "release_1.0", HeadSHA: "abc", Author: "bob"},
}

// TestGeneratePullRequest: Argo CD's parameters of each pull request
// (branch_slug of gosimple/slug at 50 characters with _ made -, short
// SHAs, labels with goTemplate only, values), filters (one of them
// matching, every pattern of it), and the API URL asked as rendered in a
// matrix.
func TestGeneratePullRequest(t *testing.T) {
	const fasttemplate = `
metadata: {name: previews, namespace: argocd}
spec:
  generators:
  - pullRequest:
      github: {owner: org, repo: web, tokenRef: {secretName: gh, key: token}}
      values: {host: 'pr-{{number}}.example.com'}
  template:
    metadata:
      name: 'web-{{branch_slug}}-{{number}}'
      annotations: {sha: '{{head_short_sha}}/{{head_short_sha_7}}/{{head_sha}}', target: '{{target_branch}}/{{target_branch_slug}}', by: '{{author}}: {{title}}', host: '{{values.host}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/web.git, targetRevision: '{{head_sha}}', path: deploy}
      destination: {server: https://kubernetes.default.svc, namespace: 'web-pr-{{number}}'}
`
	src := &fakeSCM{pulls: pulls}
	gen, err := Generate(t.Context(), decodeSet(t, fasttemplate), Sources{SCM: src})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range gen {
		md := g.Application["metadata"].(map[string]any)
		got = append(got, fmt.Sprint(md["name"], " ", md["annotations"]))
	}
	want := []string{
		"web-feat-cache-layer-12 map[by:ann: Add cache host:pr-12.example.com sha:01234567/0123456/0123456789abcdef0123 target:main/main]",
		"web-docs-7 map[by:bob: WIP: docs host:pr-7.example.com sha:abc/abc/abc target:release_1.0/release-1-0]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("applications (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"spec.generators[0].pullRequest github "}, src.asked); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}

	const goTemplate = `
metadata: {name: previews, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - matrix:
      generators:
      - list: {elements: [{api: 'https://gitea.example.com'}]}
      - pullRequest:
          gitea: {owner: org, repo: web, api: '{{.api}}'}
          filters:
          - {branchMatch: '^feat/', targetBranchMatch: '^main$'}
          - {titleMatch: '^WIP', targetBranchMatch: '^main$'}
          - {titleMatch: '^WIP', targetBranchMatch: '^release'}
  template:
    metadata: {name: 'web-{{.number}}', labels: {preview: '{{ has "preview" .labels }}'}}
    spec:
      project: default
      source: {repoURL: https://git.example.com/web.git, targetRevision: '{{.head_sha}}', path: deploy}
      destination: {server: https://kubernetes.default.svc, namespace: 'web-{{.number}}'}
`
	src = &fakeSCM{pulls: pulls}
	gen, err = Generate(t.Context(), decodeSet(t, goTemplate), Sources{SCM: src})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, g := range gen {
		md := g.Application["metadata"].(map[string]any)
		got = append(got, fmt.Sprint(md["name"], " ", md["labels"]))
	}
	want = []string{"web-12 map[preview:true]", "web-7 map[preview:false]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("goTemplate applications (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"spec.generators[0].matrix.generators[1].pullRequest gitea https://gitea.example.com"}, src.asked); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
}

// TestGeneratePullRequestErrors: what is refused before the provider is
// asked, and what the provider's answer makes of the generation.
func TestGeneratePullRequestErrors(t *testing.T) {
	set := func(pr string) string {
		return `
metadata: {name: s, namespace: argocd}
spec:
  generators:
  - pullRequest: ` + pr + `
  template:
    metadata: {name: 'pr-{{number}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/web.git, path: deploy}
      destination: {server: https://kubernetes.default.svc, namespace: web}
`
	}
	notFound := fmt.Errorf("error listing pull requests for org/web: GET x: 404 Not Found: %w", scm.ErrRepositoryNotFound)
	for _, tc := range []struct {
		name, pr string
		err      error
		want     string // "" succeeds with nothing generated
		asked    bool
	}{
		{name: "bitbucket server", pr: `{bitbucketServer: {project: p, repo: r, api: https://bb.example.com}}`,
			want: "spec.generators[0].pullRequest.bitbucketServer is not supported: tollgate's pull request generator serves GitHub, GitLab and Gitea"},
		{name: "azure devops", pr: `{azuredevops: {organization: o, project: p, repo: r}}`,
			want: "spec.generators[0].pullRequest.azuredevops is not supported"},
		{name: "github app", pr: `{github: {owner: o, repo: r, appSecretName: app}}`,
			want: "spec.generators[0].pullRequest.github.appSecretName is not supported: GitHub App credentials are not implemented; use tokenRef"},
		{name: "no provider", pr: `{filters: []}`, want: "spec.generators[0].pullRequest: no provider is set (want one of github, gitlab, gitea)"},
		{name: "two providers", pr: `{github: {owner: o, repo: r}, gitlab: {project: p}}`, want: "more than one provider is set"},
		{name: "bad filter", pr: `{github: {owner: o, repo: r}, filters: [{}, {titleMatch: '(['}]}`,
			want: "spec.generators[0].pullRequest.filters[1].titleMatch: error parsing regexp"},
		{name: "not found", pr: `{github: {owner: org, repo: web}}`, err: notFound, asked: true,
			want: "spec.generators[0].pullRequest: error listing pull requests for org/web"},
		{name: "not found tolerated", pr: `{github: {owner: org, repo: web}, continueOnRepoNotFoundError: true}`, err: notFound, asked: true},
		{name: "other errors are not", pr: `{github: {owner: org, repo: web}, continueOnRepoNotFoundError: true}`, err: fmt.Errorf("401 Unauthorized"), asked: true,
			want: "401 Unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSCM{err: tc.err}
			gen, err := Generate(t.Context(), decodeSet(t, set(tc.pr)), Sources{SCM: src})
			switch {
			case tc.want == "" && (err != nil || len(gen) != 0):
				t.Errorf("got %v, %v; want nothing generated", gen, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			case tc.want != "" && ReasonOf(err) != v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError:
				t.Errorf("reason %q", ReasonOf(err))
			}
			if asked := len(src.asked) > 0; asked != tc.asked {
				t.Errorf("provider asked: %v, want %v", asked, tc.asked)
			}
		})
	}
	_, err := Generate(t.Context(), decodeSet(t, set(`{github: {owner: o, repo: r}}`)), Sources{})
	if err == nil || !strings.Contains(err.Error(), "spec.generators[0].pullRequest: not generated here: the pull request generator asks the SCM provider's API") {
		t.Errorf("without an SCM source: %v", err)
	}
}
