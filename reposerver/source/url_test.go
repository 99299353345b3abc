package source

import (
	"testing"

	"github.com/tollgate-dev/tollgate/reposerver"
)

func TestNormalizeURL(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"https://github.com/acme/repo.git", "https://github.com/acme/repo"},
		{"https://GitHub.com/acme/Repo", "https://github.com/acme/Repo"},
		{"HTTPS://github.com/acme/repo/", "https://github.com/acme/repo"},
		{"https://github.com/acme/repo.git/", "https://github.com/acme/repo"},
		{"https://github.com:443/acme/repo", "https://github.com/acme/repo"},
		{"https://git.example.com:8443/acme/repo", "https://git.example.com:8443/acme/repo"},
		{"https://user:token@github.com/acme/repo.git", "https://github.com/acme/repo"},
		{"http://127.0.0.1:8080/app.git", "http://127.0.0.1:8080/app"},
		{"git@github.com:acme/repo.git", "ssh://git@github.com/acme/repo"},
		{"git@GitHub.com:acme/repo", "ssh://git@github.com/acme/repo"},
		{"ssh://git@github.com/acme/repo.git", "ssh://git@github.com/acme/repo"},
		{"ssh://git@github.com:22/acme/repo.git", "ssh://git@github.com/acme/repo"},
		{"ssh://git@gitlab.local:2222/acme/repo.git", "ssh://git@gitlab.local:2222/acme/repo"},
		{"github.com:acme/repo.git", "ssh://github.com/acme/repo"},
		{"git@host:/srv/git/repo.git", "ssh://git@host/srv/git/repo"},
		{"git://git.example.com/repo.git", "git://git.example.com/repo"},
		{"file:///srv/git/repo.git", "file:///srv/git/repo"},
		{"https://[::1]:8443/repo.git", "https://[::1]:8443/repo"},
		{"  https://github.com/acme/repo  ", "https://github.com/acme/repo"},
		{"", ""},
		{"not a url", ""},
		{"/srv/git/repo", ""},
		{`C:\repos\app`, ""},
		{"git@host:", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := reposerver.NormalizeURL(tt.in); got != tt.want {
				t.Errorf("reposerver.NormalizeURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"https://user:pa55@github.com/acme/repo.git", "https://user:redacted@github.com/acme/repo.git"},
		{"https://ghp_token@github.com/acme/repo.git", "https://redacted@github.com/acme/repo.git"},
		{"ssh://git@github.com/acme/repo.git", "ssh://git@github.com/acme/repo.git"},
		{"https://github.com/acme/repo.git", "https://github.com/acme/repo.git"},
		{"git@github.com:acme/repo.git", "git@github.com:acme/repo.git"},
		{"https://user:p%zz@host/repo", "https://redacted@host/repo"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := reposerver.RedactURL(tt.in); got != tt.want {
				t.Errorf("reposerver.RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCacheKeyStable(t *testing.T) {
	a := cacheKey(reposerver.NormalizeURL("https://github.com/acme/repo.git"))
	b := cacheKey(reposerver.NormalizeURL("https://GITHUB.com/acme/repo/"))
	c := cacheKey(reposerver.NormalizeURL("https://github.com/acme/other"))
	if a != b {
		t.Errorf("equivalent URLs have different keys: %s %s", a, b)
	}
	if a == c {
		t.Errorf("different repositories share key %s", a)
	}
	if len(a) != 64 {
		t.Errorf("key %q is not a hex SHA-256", a)
	}
}
