package scm

import "testing"

// TestAPIBase: the REST base URLs the providers' Go clients make of an
// api field.
func TestAPIBase(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{githubBase(""), "https://api.github.com/"},
		{githubBase("https://ghe.example.com"), "https://ghe.example.com/api/v3/"},
		{githubBase("https://ghe.example.com/api/v3"), "https://ghe.example.com/api/v3/"},
		{githubBase("https://api.ghe.example.com/"), "https://api.ghe.example.com/"},
		{apiBase("https://gitlab.example.com", "api/v4/"), "https://gitlab.example.com/api/v4/"},
		{apiBase("https://gitlab.example.com/api/v4/", "api/v4/"), "https://gitlab.example.com/api/v4/"},
		{apiBase("https://example.com/gitea/", "api/v1/"), "https://example.com/gitea/api/v1/"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
