package source

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

func TestCheckURL(t *testing.T) {
	const (
		insecureHint = `; allow it with insecure: "true" in the repository Secret or the controller flag --allow-insecure-repos`
		fileHint     = ` reads the controller's own disk; only the controller flag --allow-file-repos allows it, for local development`
		noScheme     = "scheme not allowed: no scheme (use https://, ssh:// or git@host:path)"
		notGit       = ` is not a Git transport tollgate fetches from (use https://, ssh:// or git@host:path)`
	)
	tests := []struct {
		name     string
		url      string
		opts     Options
		insecure bool
		// wantErr is the exact message, empty for an allowed URL.
		wantErr string
	}{
		{name: "https", url: "https://github.com/acme/app.git"},
		{name: "https upper case", url: "HTTPS://github.com/acme/app.git"},
		{name: "ssh", url: "ssh://git@github.com:22/acme/app.git"},
		{name: "scp-style", url: "git@github.com:acme/app.git"},
		{name: "scp-style without user", url: "github.com:acme/app.git"},

		{name: "http refused", url: "http://internal-service/acme/app.git",
			wantErr: `scheme not allowed: "http" is unencrypted` + insecureHint},
		{name: "http with insecure secret", url: "http://git.example.com/acme/app.git", insecure: true},
		{name: "http with flag", url: "http://git.example.com/acme/app.git", opts: Options{AllowInsecure: true}},
		{name: "git refused", url: "git://git.example.com/acme/app.git",
			wantErr: `scheme not allowed: "git" is unencrypted` + insecureHint},
		{name: "git with insecure secret", url: "git://git.example.com/acme/app.git", insecure: true},
		{name: "git with flag", url: "git://git.example.com/acme/app.git", opts: Options{AllowInsecure: true}},

		{name: "file refused", url: "file:///var/cache/tollgate/other/repo.git",
			wantErr: `scheme not allowed: "file"` + fileHint},
		{name: "file not allowed by insecure secret", url: "file:///srv/repo", insecure: true,
			wantErr: `scheme not allowed: "file"` + fileHint},
		{name: "file not allowed by insecure flag", url: "file:///srv/repo", opts: Options{AllowInsecure: true},
			wantErr: `scheme not allowed: "file"` + fileHint},
		{name: "file with flag", url: "file:///srv/repo", opts: Options{AllowFile: true}},

		{name: "ext remote helper", url: "ext::sh", opts: Options{AllowInsecure: true, AllowFile: true},
			wantErr: `scheme not allowed: "ext"` + notGit},
		{name: "ext remote helper with a command", url: "ext::sh -c touch% /tmp/pwned", opts: Options{AllowInsecure: true, AllowFile: true},
			wantErr: noScheme},
		{name: "ext before a URL", url: "ext::ssh://git@github.com/acme/app", wantErr: `scheme not allowed: "ext"` + notGit},
		{name: "fd remote helper", url: "fd::3", wantErr: `scheme not allowed: "fd"` + notGit},
		{name: "option", url: "-uhelp", opts: Options{AllowInsecure: true, AllowFile: true}, wantErr: noScheme},
		{name: "option with scp form", url: "-oProxyCommand=id@host:repo", wantErr: noScheme},
		{name: "scp-style host that is an option", url: "git@-oProxyCommand=id:repo", wantErr: noScheme},
		{name: "local path", url: "/var/cache/tollgate/repo.git", opts: Options{AllowFile: true}, wantErr: noScheme},
		{name: "relative path", url: "../other", opts: Options{AllowFile: true}, wantErr: noScheme},
		{name: "empty", url: "", wantErr: noScheme},
		{name: "newline", url: "https://github.com/acme/app\n", wantErr: noScheme},
		{name: "leading space", url: " https://github.com/acme/app", wantErr: noScheme},
		{name: "unknown scheme", url: "gopher://example.com/app", wantErr: `scheme not allowed: "gopher"` + notGit},
		{name: "git+ssh", url: "git+ssh://github.com/acme/app", wantErr: `scheme not allowed: "git+ssh"` + notGit},
		{name: "empty scheme", url: "://github.com/acme/app", wantErr: noScheme},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.opts.checkURL(tt.url, tt.insecure)
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, ErrSchemeNotAllowed) {
					t.Errorf("error %v does not wrap ErrSchemeNotAllowed", err)
				}
			}
			if got != tt.wantErr {
				t.Errorf("checkURL(%q) error\n got: %q\nwant: %q", tt.url, got, tt.wantErr)
			}
		})
	}
}

// TestFetchRefusedSchemeTouchesNothing checks that a refused URL is
// refused before any request or disk access: not even a tree already in
// the cache answers.
func TestFetchRefusedSchemeTouchesNothing(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "internal service", http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	c, err := NewCache(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Fetch(t.Context(), srv.URL+"/admin/repo.git", "main", reposerver.Credentials{Username: "u", Password: "p"})
	if !errors.Is(err, ErrSchemeNotAllowed) {
		t.Fatalf("Fetch over http: error = %v, want ErrSchemeNotAllowed", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the server got %d requests, want none", n)
	}

	// A file:// repository fetched by a cache that allowed it leaves its
	// tree on disk; a cache that does not allow file:// never serves it.
	git := gitserver.New(t)
	git.CreateRepo(t, "local", map[string]string{"k.yaml": "k: v\n"})
	url := "file://" + filepath.ToSlash(git.RepoDir("local"))
	permissive, err := NewCache(dir, Options{AllowFile: true})
	if err != nil {
		t.Fatal(err)
	}
	co := mustFetch(t, permissive, url, "main", reposerver.Credentials{})
	strict, err := NewCache(dir, Options{AllowInsecure: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, rev := range []string{co.Revision, "main"} {
		got, err := strict.Fetch(t.Context(), url, rev, reposerver.Credentials{Insecure: true})
		if !errors.Is(err, ErrSchemeNotAllowed) {
			t.Errorf("Fetch(file://, %s) = %+v, %v; want ErrSchemeNotAllowed", rev, got, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("cache holds %d repositories, want only the one the permissive cache fetched", len(entries))
	}
}

// TestFetchHTTPWithInsecureCredentials checks that insecure credentials
// allow an http repository without Options.AllowInsecure.
func TestFetchHTTPWithInsecureCredentials(t *testing.T) {
	srv := gitserver.New(t)
	url := srv.CreateRepo(t, "app", map[string]string{"a.yaml": "a: 1\n"})
	c, err := NewCache(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(t.Context(), url, "main", reposerver.Credentials{}); !errors.Is(err, ErrSchemeNotAllowed) {
		t.Fatalf("Fetch without insecure: error = %v, want ErrSchemeNotAllowed", err)
	}
	mustFetch(t, c, url, "main", reposerver.Credentials{Insecure: true})
}

// FuzzCheckURL checks that the scheme policy never panics and that what it
// allows is what the Git client runs: never file without AllowFile, never
// http or git without AllowInsecure or insecure credentials.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://github.com/acme/repo.git",
		"git@github.com:acme/repo.git",
		"github.com:2222:acme/repo.git",
		"ssh://git@host:2222/a/b.git/",
		"http://internal-service/admin",
		"git://h/r.git",
		"file:///srv/repo.git",
		"ext::sh -c id",
		"ext::ssh://host/r",
		"fd::3",
		"-uhelp",
		"/srv/repo",
		"./relative:path",
		"C:\\repo",
		"HTTPS://x/y",
	} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, in string, insecure bool) {
		for _, o := range []Options{{}, {AllowInsecure: true}, {AllowFile: true}} {
			ep, err := o.checkURL(in, insecure)
			if err != nil {
				continue
			}
			switch ep.Protocol {
			case schemeHTTPS, schemeSSH:
			case schemeHTTP, schemeGit:
				if !o.AllowInsecure && !insecure {
					t.Fatalf("%+v allowed %q (insecure %v) as %s", o, in, insecure, ep.Protocol)
				}
			case schemeFile:
				if !o.AllowFile {
					t.Fatalf("%+v allowed %q as file", o, in)
				}
			default:
				t.Fatalf("%+v allowed %q as %q", o, in, ep.Protocol)
			}
		}
	})
}
