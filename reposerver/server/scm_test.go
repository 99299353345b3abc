package server

import (
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// TestSCMAuth: a token goes only to the API its Secret's url names
// (without one, to the provider's public API), a custom API must be in
// --allowed-scm-providers when that is set, and a tokenRef or caRef the
// controller did not read is refused.
func TestSCMAuth(t *testing.T) {
	ref := &v1alpha1.SecretRef{SecretName: "gh", Key: "token"}
	github := func(api string) *v1alpha1.PullRequestGenerator {
		return &v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "o", Repo: "r", API: api, TokenRef: ref}}
	}
	unbound := &reposerver.SCMAccess{Tokens: []reposerver.SCMToken{{SecretName: "gh", Key: "token", Token: "t0k"}}}
	bound := &reposerver.SCMAccess{Tokens: []reposerver.SCMToken{{SecretName: "gh", Key: "token", Token: "t0k", URL: "https://GHE.example.com/"}}}
	for _, tc := range []struct {
		name   string
		access *reposerver.SCMAccess
		gen    *v1alpha1.PullRequestGenerator
		want   string // "" allowed with the token
	}{
		{"public API, unbound token", unbound, github(""), ""},
		{"public API named, unbound token", unbound, github("https://api.github.com/"), ""},
		{"custom API, unbound token", unbound, github("https://evil.example.com"),
			`spec.generators[0].pullRequest.github.tokenRef: Secret "gh" names no url, so its token goes to the provider's public API only, not to https://evil.example.com; the token was not sent`},
		{"bound token, its API", bound, github("https://ghe.example.com"), ""},
		{"bound token, another API", bound, github("https://evil.example.com"), `Secret "gh" is for https://GHE.example.com/ (its url), not to https://evil.example.com`},
		{"bound token, the public API", bound, github(""), "not to https://api.github.com"},
		{"gitea has no public API", unbound, &v1alpha1.PullRequestGenerator{Gitea: &v1alpha1.PullRequestGeneratorGitea{API: "https://gitea.example.com", TokenRef: ref}},
			"names no url, and gitea has no public API"},
		{"not allowed", &reposerver.SCMAccess{Allowed: []string{"https://ghe.example.com"}}, &v1alpha1.PullRequestGenerator{GitLab: &v1alpha1.PullRequestGeneratorGitLab{API: "https://gitlab.internal"}},
			`spec.generators[0].pullRequest.gitlab.api: scm provider not allowed: scm provider "https://gitlab.internal" not allowed, must use one of the following: https://ghe.example.com`},
		{"allowed", &reposerver.SCMAccess{Allowed: []string{"https://gitlab.internal/"}}, &v1alpha1.PullRequestGenerator{GitLab: &v1alpha1.PullRequestGeneratorGitLab{API: "https://gitlab.internal"}}, ""},
		{"public API always allowed", &reposerver.SCMAccess{Allowed: []string{"https://ghe.example.com"}}, &v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{}}, ""},
		{"token not read", &reposerver.SCMAccess{}, github(""), `key "token" of Secret "gh" was not read by the controller`},
		{"CA not read", &reposerver.SCMAccess{}, &v1alpha1.PullRequestGenerator{GitLab: &v1alpha1.PullRequestGeneratorGitLab{CARef: &v1alpha1.ConfigMapKeyRef{ConfigMapName: "ca", Key: "pem"}}},
			`spec.generators[0].pullRequest.gitlab.caRef: key "pem" of ConfigMap "ca" was not read by the controller`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auth, err := scmAuth(tc.access, "spec.generators[0].pullRequest", must(tc.gen.Provider()))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want == "" && tc.gen.Github != nil && tc.gen.Github.TokenRef != nil && auth.Token != "t0k":
				t.Errorf("token %q not given", auth.Token)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "t0k"):
				t.Errorf("the message holds the token: %v", err)
			}
		})
	}
	access := &reposerver.SCMAccess{CAs: []reposerver.SCMCA{{ConfigMapName: "ca", Key: "pem", PEM: []byte("PEM")}}}
	auth, err := scmAuth(access, "f", mustProvider(&v1alpha1.PullRequestGenerator{GitLab: &v1alpha1.PullRequestGeneratorGitLab{Insecure: true, CARef: &v1alpha1.ConfigMapKeyRef{ConfigMapName: "ca", Key: "pem"}}}))
	if err != nil || string(auth.CA) != "PEM" || !auth.Insecure {
		t.Errorf("gitlab CA and insecure: %+v, %v", auth, err)
	}
}

func must(p v1alpha1.SCMProviderRef, err error) v1alpha1.SCMProviderRef {
	if err != nil {
		panic(err)
	}
	return p
}

func mustProvider(gen *v1alpha1.PullRequestGenerator) v1alpha1.SCMProviderRef {
	return must(gen.Provider())
}
