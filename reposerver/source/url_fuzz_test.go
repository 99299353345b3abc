package source

import (
	"net/url"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/reposerver"
)

// FuzzNormalizeURL checks that reposerver.NormalizeURL never panics, returns either ""
// or a parseable URL with a scheme, and is idempotent, so normalized URLs
// from webhooks and Secrets compare equal however often they were
// normalized.
func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{
		"https://github.com/acme/repo.git",
		"git@github.com:acme/repo.git",
		"ssh://git@host:2222/a/b.git/",
		"file:///srv/repo.git",
		"https://[::1]:8443/r",
		"https://user:pw@HOST/a%2Fb.git",
		"git://h/r.git.git",
		"host:path",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := reposerver.NormalizeURL(in)
		if out == "" {
			return
		}
		u, err := url.Parse(out)
		if err != nil || u.Scheme == "" || !strings.Contains(out, "://") {
			t.Fatalf("reposerver.NormalizeURL(%q) = %q, not a URL: %v", in, out, err)
		}
		if again := reposerver.NormalizeURL(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, out, again)
		}
	})
}
