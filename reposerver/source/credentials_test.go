package source

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

func TestAuthMethod(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		creds   reposerver.Credentials
		want    transport.AuthMethod
		wantErr error
	}{
		{"anonymous https", "https://github.com/acme/app", reposerver.Credentials{}, nil, nil},
		{"basic", "https://github.com/acme/app", reposerver.Credentials{Username: "u", Password: "p"},
			&githttp.BasicAuth{Username: "u", Password: "p"}, nil},
		{"token wins", "https://github.com/acme/app", reposerver.Credentials{Username: "u", Password: "p", BearerToken: "t"},
			&githttp.TokenAuth{Token: "t"}, nil},
		{"git protocol ignores credentials", "git://example.com/app", reposerver.Credentials{Username: "u"}, nil, nil},
		{"file ignores credentials", "file:///srv/app", reposerver.Credentials{Password: "p"}, nil, nil},
		{"ssh needs a key", "git@github.com:acme/app.git", reposerver.Credentials{Username: "u", Password: "p"}, nil, ErrAuthFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep, err := transport.NewEndpoint(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			got, err := authMethod(context.Background(), tt.creds, ep)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("auth mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSSHAuthUsesURLUser(t *testing.T) {
	key, _ := newSSHKey(t)
	for _, tt := range []struct{ url, wantUser string }{
		{"git@github.com:acme/app.git", "git"},
		{"ssh://deploy@git.example.com:2222/app.git", "deploy"},
		{"ssh://git.example.com/app.git", "git"},
	} {
		ep, err := transport.NewEndpoint(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		a, err := authMethod(t.Context(), reposerver.Credentials{SSHPrivateKey: key, Insecure: true}, ep)
		if err != nil {
			t.Fatalf("%s: %v", tt.url, err)
		}
		cfg, err := a.(*sshAuth).ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.User != tt.wantUser || cfg.Timeout <= 0 {
			t.Errorf("%s: user %q timeout %v, want user %q and a timeout", tt.url, cfg.User, cfg.Timeout, tt.wantUser)
		}
	}
}

// TestFetchProjectScopedCache checks that a repository fetched with a
// project's scoped credentials is kept apart: another project asking for
// the same commit without credentials is not served from it.
func TestFetchProjectScopedCache(t *testing.T) {
	srv := gitserver.New(t, gitserver.WithBasicAuth("team-bot", "s3cret"))
	url := srv.CreateRepo(t, "private", map[string]string{"a.yaml": "a: 1\n"})
	c := newCache(t, Options{})
	co := mustFetch(t, c, url, "main", reposerver.Credentials{Username: "team-bot", Password: "s3cret", Project: "team"})
	for _, rev := range []string{co.Revision, "main"} {
		if _, err := c.Fetch(t.Context(), url, rev, reposerver.Credentials{}, ListingMaxAge(time.Hour)); !errors.Is(err, ErrAuthFailed) {
			t.Errorf("Fetch(%s) without credentials after the team's fetch: error = %v, want ErrAuthFailed", rev, err)
		}
	}
	again := mustFetch(t, c, url, co.Revision, reposerver.Credentials{Username: "team-bot", Password: "s3cret", Project: "team"})
	if again.Dir != co.Dir {
		t.Errorf("the team's second fetch got %s, want its cached %s", again.Dir, co.Dir)
	}
}
