package ui

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAuthCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		auth Auth
		want string
	}{
		{"nothing chosen", Auth{}, ErrNoAuth.Error()},
		{"proxy", Auth{ProxyHeader: "X-User"}, ""},
		{"proxy with groups", Auth{ProxyHeader: "X-User", ProxyGroupsHeader: "X-Groups"}, ""},
		{"groups without user", Auth{ProxyGroupsHeader: "X-Groups", InsecureLocal: true}, "--auth-proxy-groups-header needs --auth-proxy-header"},
		{"token over https", Auth{TokenLogin: true, TLS: true}, ""},
		{"token over http", Auth{TokenLogin: true}, "token sign-in needs HTTPS"},
		{"local", Auth{InsecureLocal: true}, ""},
		{"local and proxy", Auth{InsecureLocal: true, ProxyHeader: "X-User"}, "--insecure-local cannot be combined"},
		{"proxy and token", Auth{ProxyHeader: "X-User", TokenLogin: true, TLS: true}, "choose either"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := tc.auth.Check(); err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) || (tc.want == "") != (got == "") {
				t.Errorf("Check() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCheckLocalAddr(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:8080": true, "localhost:0": true,
		":8080": false, "0.0.0.0:8080": false, "10.0.0.1:80": false, "[::]:80": false, "example.com:80": false, "nonsense": false,
	} {
		if err := CheckLocalAddr(addr); (err == nil) != ok {
			t.Errorf("CheckLocalAddr(%q) = %v, want ok %v", addr, err, ok)
		}
	}
}

func TestFromProxy(t *testing.T) {
	a := newAuthenticator(Auth{ProxyHeader: "X-User", ProxyGroupsHeader: "X-Groups"}, nil)
	for _, tc := range []struct {
		name, remote, user string
		groups             []string
		want               *identity
		code               int
	}{
		{"loopback", "127.0.0.1:5000", "alice", []string{"dev, ops", "qa"}, &identity{User: "alice", Groups: []string{"dev", "ops", "qa"}}, 0},
		{"ipv6 loopback", "[::1]:5000", "alice", nil, &identity{User: "alice"}, 0},
		{"not the proxy", "10.1.2.3:5000", "alice", nil, nil, http.StatusForbidden},
		{"no user", "127.0.0.1:5000", "", nil, nil, http.StatusUnauthorized},
		{"system user", "127.0.0.1:5000", "system:serviceaccount:kube-system:admin", nil, nil, http.StatusForbidden},
		{"masters", "127.0.0.1:5000", "alice", []string{"system:masters"}, nil, http.StatusForbidden},
		{"system group", "127.0.0.1:5000", "alice", []string{"system:nodes"}, nil, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/applications", nil)
			r.RemoteAddr = tc.remote
			if tc.user != "" {
				r.Header.Set("X-User", tc.user)
			}
			for _, g := range tc.groups {
				r.Header.Add("X-Groups", g)
			}
			got, err := a.identify(r)
			if tc.code != 0 {
				he, ok := err.(*httpError)
				if !ok || he.code != tc.code {
					t.Fatalf("identify() = %v, %v; want an error with status %d", got, err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(identity{})); diff != "" {
				t.Errorf("identity (-want +got):\n%s", diff)
			}
		})
	}
	custom := newAuthenticator(Auth{ProxyHeader: "X-User", ProxyCIDRs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, nil)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr, r.Header["X-User"] = "10.1.2.3:5000", []string{"alice"}
	if _, err := custom.identify(r); err != nil {
		t.Errorf("from a --auth-proxy-cidrs address: %v", err)
	}
	r.RemoteAddr = "127.0.0.1:5000"
	if _, err := custom.identify(r); err == nil {
		t.Error("loopback is trusted although --auth-proxy-cidrs does not list it")
	}
}

func TestCheckCSRF(t *testing.T) {
	a := newAuthenticator(Auth{InsecureLocal: true}, nil)
	rec := httptest.NewRecorder()
	token := a.csrfToken(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	cookie := rec.Result().Cookies()[0]
	if !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Errorf("CSRF cookie %+v: want HttpOnly, SameSite=Strict", cookie)
	}
	for _, tc := range []struct {
		name    string
		form    string
		cookie  bool
		headers map[string]string
		ok      bool
	}{
		{"token and cookie", token, true, nil, true},
		{"same origin", token, true, map[string]string{"Origin": "http://ui.example", "Sec-Fetch-Site": "same-origin"}, true},
		{"no token", "", true, nil, false},
		{"other token", strings.Repeat("a", 43), true, nil, false},
		{"no cookie", token, false, nil, false},
		{"other origin", token, true, map[string]string{"Origin": "http://evil.example"}, false},
		{"cross site", token, true, map[string]string{"Sec-Fetch-Site": "cross-site"}, false},
		{"same site, other origin", token, true, map[string]string{"Sec-Fetch-Site": "same-site"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "http://ui.example/applications/argocd/x/sync", strings.NewReader(url.Values{"csrf": {tc.form}}.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tc.cookie {
				r.AddCookie(cookie)
			}
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			if err := a.checkCSRF(r); (err == nil) != tc.ok {
				t.Errorf("checkCSRF() = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// TestSafeNext: only absolute paths of this origin pass; whatever a
// browser could resolve off-site (after dropping tabs and newlines and
// reading a backslash as "/") leads to the list instead.
func TestSafeNext(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/applications/argocd/x", "/applications/argocd/x"},
		{"/applications?project=web&sync=OutOfSync#history", "/applications?project=web&sync=OutOfSync#history"},
		{"/applications/argocd/x/diff?q=a%20b", "/applications/argocd/x/diff?q=a%20b"},
		{"", "/applications"},
		{"applications", "/applications"},
		{"//evil.example", "/applications"},
		{"///evil.example", "/applications"},
		{"https://evil.example", "/applications"},
		{"https:/evil.example", "/applications"},
		{"javascript:alert(1)", "/applications"},
		{`/\evil.example`, "/applications"},
		{`/applications\..\..\evil`, "/applications"},
		{"/\t/evil.example/phish", "/applications"},
		{"/\n/evil.example", "/applications"},
		{"/\r/evil.example", "/applications"},
		{"\t//evil.example", "/applications"},
		{"/\x00/evil", "/applications"},
		{"/\x7f/evil", "/applications"},
		{"/%09/evil.example", "/applications"},
		{"/%5Cevil.example", "/applications"},
		{"/%2F/evil.example", "/applications"},
		{"/%2f%2fevil.example", "/applications"},
		{"/%zz", "/applications"},
	} {
		if got := safeNext(tc.in); got != tc.want {
			t.Errorf("safeNext(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
