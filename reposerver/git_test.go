package reposerver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMatchGitRepository: a repository of the same URL wins (a scoped one
// first), a template of the longest prefix on the same host fills in
// missing credentials, and nothing matching is anonymous.
func TestMatchGitRepository(t *testing.T) {
	known := []byte("git.example.com ssh-ed25519 AAAA\n")
	repos := []GitRepository{
		{URL: "https://git.example.com/org", Template: true, Credentials: Credentials{Username: "org-bot", Password: "org"}},
		{URL: "https://git.example.com/org/team-", Template: true, Credentials: Credentials{BearerToken: "team", Project: "team"}},
		{URL: "https://git.example.com/org/base.git", Credentials: Credentials{Username: "base-bot", Password: "base"}},
		{URL: "https://git.example.com/org/base", Credentials: Credentials{Username: "scoped-bot", Password: "scoped", Project: "team"}},
		{URL: "https://git.example.com/org/open", Credentials: Credentials{Insecure: true}},
		{URL: "ssh://git@git.example.com/org", Template: true, Credentials: Credentials{SSHPrivateKey: []byte("key"), SSHKnownHosts: known}},
	}
	tests := []struct {
		name, url string
		want      Credentials
	}{
		{"scoped repository wins over the same URL", "https://git.example.com/org/base", Credentials{Username: "scoped-bot", Password: "scoped", Project: "team"}},
		{"longest template", "https://git.example.com/org/team-a", Credentials{BearerToken: "team", Project: "team"}},
		{"repository without credentials takes the template's, keeps its own insecure", "https://git.example.com/org/open.git", Credentials{Username: "org-bot", Password: "org", Insecure: true}},
		{"ssh template with its known hosts", "git@git.example.com:org/web.git", Credentials{SSHPrivateKey: []byte("key"), SSHKnownHosts: known}},
		{"another host", "https://git.example.com.evil.example/org/web", Credentials{}},
		{"another scheme", "http://git.example.com/org/web", Credentials{}},
		{"not a URL", "", Credentials{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, MatchGitRepository(tt.url, repos)); d != "" {
				t.Errorf("MatchGitRepository(%s) (-want +got):\n%s", tt.url, d)
			}
		})
	}
}

// TestPermittedGitRepositories: only the repositories the project permits,
// and the templates that serve its patterns, are sent.
func TestPermittedGitRepositories(t *testing.T) {
	repos := []GitRepository{
		{URL: "https://git.example.com/org/base.git"},
		{URL: "https://git.example.com/other/base.git"},
		{URL: "https://git.example.com/org", Template: true},
		{URL: "https://elsewhere.example.com", Template: true},
	}
	got, err := PermittedGitRepositories(t.Context(), repos, []string{"https://git.example.com/org/*"})
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, r := range got {
		urls = append(urls, r.URL)
	}
	if d := cmp.Diff([]string{"https://git.example.com/org/base.git", "https://git.example.com/org"}, urls); d != "" {
		t.Errorf("permitted (-want +got):\n%s", d)
	}
}
