package scm_test

import (
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver/scm"
	"github.com/tollgate-dev/tollgate/test/scmapi"
)

var fivePulls = []scmapi.PullRequest{
	{Number: 1, Title: "Add cache", Branch: "feat/cache", TargetBranch: "main", SHA: "0123456789abcdef0123456789abcdef01234567", Author: "ann", Labels: []string{"preview"}},
	{Number: 2, Title: "Fix typo", Branch: "fix_typo", TargetBranch: "main", SHA: "89abcdef0123456789abcdef0123456789abcdef", Author: "bob"},
	{Number: 3, Title: "Closed one", Branch: "old", TargetBranch: "main", SHA: "1111111111111111111111111111111111111111", Author: "cy", Closed: true, State: "closed"},
	{Number: 4, Title: "Release", Branch: "release-1", TargetBranch: "stable", SHA: "2222222222222222222222222222222222222222", Author: "dee", Labels: []string{"preview", "release"}},
	{Number: 5, Title: "Docs", Branch: "docs", TargetBranch: "main", SHA: "3333333333333333333333333333333333333333", Author: "eve", Labels: []string{"docs"}},
}

func numbers(pulls []scm.PullRequest) []int64 {
	var out []int64
	for _, p := range pulls {
		out = append(out, p.Number)
	}
	return out
}

// TestListPullRequests: each provider's listing, from a fake that answers
// as the provider documents, two per page: the token in the provider's
// header, every page followed, labels filtered, the fields read.
func TestListPullRequests(t *testing.T) {
	srv := scmapi.New(t, "s3cret")
	srv.SetPulls("org/web", fivePulls...)
	srv.SetPulls("group/sub/web", fivePulls...)
	auth := scm.Auth{Token: "s3cret"}
	for name, tc := range map[string]struct {
		gen  v1alpha1.PullRequestGenerator
		want []int64
	}{
		"github open ones":        {v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "org", Repo: "web", API: srv.URL}}, []int64{1, 2, 4, 5}},
		"github labels":           {v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "org", Repo: "web", API: srv.URL + "/api/v3/", Labels: []string{"preview"}}}, []int64{1, 4}},
		"gitlab every state":      {v1alpha1.PullRequestGenerator{GitLab: &v1alpha1.PullRequestGeneratorGitLab{Project: "group/sub/web", API: srv.URL}}, []int64{1, 2, 3, 4, 5}},
		"gitlab opened, labelled": {v1alpha1.PullRequestGenerator{GitLab: &v1alpha1.PullRequestGeneratorGitLab{Project: "group/sub/web", API: srv.URL, PullRequestState: "opened", Labels: []string{"preview", "release"}}}, []int64{4}},
		"gitea open ones":         {v1alpha1.PullRequestGenerator{Gitea: &v1alpha1.PullRequestGeneratorGitea{Owner: "org", Repo: "web", API: srv.URL}}, []int64{1, 2, 4, 5}},
		"gitea labels":            {v1alpha1.PullRequestGenerator{Gitea: &v1alpha1.PullRequestGeneratorGitea{Owner: "org", Repo: "web", API: srv.URL, Labels: []string{"docs"}}}, []int64{5}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := scm.ListPullRequests(t.Context(), &tc.gen, auth)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, numbers(got)); diff != "" {
				t.Errorf("pull requests (-want +got):\n%s", diff)
			}
		})
	}
	got, err := scm.ListPullRequests(t.Context(), &v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "org", Repo: "web", API: srv.URL}}, auth)
	if err != nil {
		t.Fatal(err)
	}
	want := scm.PullRequest{Number: 4, Title: "Release", Branch: "release-1", TargetBranch: "stable", HeadSHA: "2222222222222222222222222222222222222222", Labels: []string{"preview", "release"}, Author: "dee"}
	if diff := cmp.Diff(want, got[2]); diff != "" {
		t.Errorf("fields read (-want +got):\n%s", diff)
	}
	if reqs := strings.Join(srv.Requests(), "\n"); !strings.Contains(reqs, "GET /api/v4/projects/group%2Fsub%2Fweb/merge_requests?") || !strings.Contains(reqs, "page=3") {
		t.Errorf("requests do not escape the GitLab project path or do not page:\n%s", reqs)
	}
}

// TestListPullRequestsErrors: a wrong token, an unknown repository
// (ErrRepositoryNotFound, which continueOnRepoNotFoundError tolerates), a
// next-page link to another host (not followed: the token would go
// there), an answer that is not JSON; no message holds the token.
func TestListPullRequestsErrors(t *testing.T) {
	srv := scmapi.New(t, "s3cret")
	srv.SetPulls("org/web", fivePulls...)
	github := func(repo string) *v1alpha1.PullRequestGenerator {
		return &v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "org", Repo: repo, API: srv.URL}}
	}
	_, err := scm.ListPullRequests(t.Context(), github("web"), scm.Auth{Token: "wrong"})
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("wrong token: %v", err)
	}
	_, err = scm.ListPullRequests(t.Context(), github("nope"), scm.Auth{Token: "s3cret"})
	if !errors.Is(err, scm.ErrRepositoryNotFound) || !strings.Contains(err.Error(), "error listing pull requests for org/nope") {
		t.Errorf("unknown repository: %v", err)
	}

	var elsewhere []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere = append(elsewhere, r.Header.Get("Authorization"))
		_, _ = w.Write([]byte(`[]`))
	}))
	defer other.Close()
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v3/repos/org/web/pulls":
			w.Header().Set("Link", `<`+other.URL+`/steal?page=2>; rel="next"`)
			_, _ = w.Write([]byte(`[]`))
		default:
			_, _ = w.Write([]byte(`not json`))
		}
	}))
	defer hostile.Close()
	_, err = scm.ListPullRequests(t.Context(), &v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "org", Repo: "web", API: hostile.URL}}, scm.Auth{Token: "s3cret"})
	if err == nil || !strings.Contains(err.Error(), "leaves the API's host") || len(elsewhere) != 0 {
		t.Errorf("next page on another host: %v (requests there: %q)", err, elsewhere)
	}
	_, err = scm.ListPullRequests(t.Context(), &v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "org", Repo: "other", API: hostile.URL}}, scm.Auth{})
	if err == nil || !strings.Contains(err.Error(), "decode the answer") {
		t.Errorf("an answer that is not JSON: %v", err)
	}
	for _, gen := range []*v1alpha1.PullRequestGenerator{
		{},
		{Github: &v1alpha1.PullRequestGeneratorGithub{}, Gitea: &v1alpha1.PullRequestGeneratorGitea{}},
		{Gitea: &v1alpha1.PullRequestGeneratorGitea{Owner: "o", Repo: "r"}},
		{GitLab: &v1alpha1.PullRequestGeneratorGitLab{Project: "p", API: "ftp://example.com"}},
	} {
		if _, err := scm.ListPullRequests(t.Context(), gen, scm.Auth{}); err == nil {
			t.Errorf("%+v: no error", gen)
		}
	}
}

// TestListPullRequestsTLS: a GitLab over TLS is reached with the CA of
// caRef, refused without it, and reached with insecure.
func TestListPullRequestsTLS(t *testing.T) {
	srv := scmapi.NewTLS(t, "")
	srv.SetPulls("g/web", fivePulls[:1]...)
	gen := &v1alpha1.PullRequestGenerator{GitLab: &v1alpha1.PullRequestGeneratorGitLab{Project: "g/web", API: srv.URL}}
	if _, err := scm.ListPullRequests(t.Context(), gen, scm.Auth{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v", err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	for _, auth := range []scm.Auth{{CA: ca}, {Insecure: true}} {
		got, err := scm.ListPullRequests(t.Context(), gen, auth)
		if err != nil || len(got) != 1 {
			t.Errorf("%+v: %v, %v", auth, got, err)
		}
	}
	if _, err := scm.ListPullRequests(t.Context(), gen, scm.Auth{CA: []byte("junk")}); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("junk CA: %v", err)
	}
}
