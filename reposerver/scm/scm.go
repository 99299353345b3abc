// Package scm asks SCM providers' REST APIs (GitHub, GitLab, Gitea) what
// the pull request and SCM provider generators of an ApplicationSet need:
// the pull requests of a repository, and the repositories (with their
// branches and paths) of an organization. It runs in the repo-server, the process that
// holds no Kubernetes credentials; the controller reads the API tokens and
// hands them over with the request (reposerver.SCMAccess).
//
// Every answer is bounded: pages are followed through the Link header
// only on the API's own host (a token never goes elsewhere), at most
// MaxPages of them, each at most MaxPageBytes.
package scm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Providers, as v1alpha1.PullRequestGenerator.Provider names them.
const (
	GitHub = "github"
	GitLab = "gitlab"
	Gitea  = "gitea"
)

// Public API URLs used when a generator names none.
const (
	GitHubPublicAPI = "https://api.github.com"
	GitLabPublicAPI = "https://gitlab.com"
)

// PublicAPI is the API a provider's generator reaches without an api
// field; "" for Gitea, which has none.
func PublicAPI(provider string) string {
	switch provider {
	case GitHub:
		return GitHubPublicAPI
	case GitLab:
		return GitLabPublicAPI
	}
	return ""
}

// Bounds of one listing.
const (
	// MaxPages is how many pages one listing follows.
	MaxPages = 100
	// MaxPageBytes bounds one page's body.
	MaxPageBytes = 16 << 20
	// Timeout bounds each request.
	Timeout = 30 * time.Second
)

// ErrRepositoryNotFound is a repository or project the provider does not
// know (HTTP 404), which continueOnRepoNotFoundError tolerates.
var ErrRepositoryNotFound = errors.New("repository not found")

// Auth is what requests to a provider carry.
type Auth struct {
	// Token is the API token; "" asks anonymously.
	Token string
	// CA, when set, are PEM certificates that verify the API's TLS
	// certificate instead of the system's.
	CA []byte
	// Insecure skips the verification of the API's TLS certificate.
	Insecure bool
}

// client makes a provider's requests.
type client struct {
	http   *http.Client
	base   *url.URL
	header func(h http.Header)
}

func newClient(base string, auth Auth, header func(h http.Header, token string)) (*client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("API URL %q is not an http(s) URL", base)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: auth.Insecure} //nolint:gosec // the generator's insecure field asks for it
	if len(auth.CA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(auth.CA) {
			return nil, errors.New("the CA certificates (caRef) hold no PEM certificate")
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	c := &client{
		base: u,
		http: &http.Client{Transport: tr, Timeout: Timeout,
			// A redirect may not leave the API's host: the token stays there.
			CheckRedirect: func(req *http.Request, _ []*http.Request) error {
				if req.URL.Host != u.Host {
					return fmt.Errorf("redirected to another host (%s)", req.URL.Host)
				}
				return nil
			}},
		header: func(h http.Header) { header(h, auth.Token) },
	}
	return c, nil
}

// listAll GETs path (relative to the base, with query) and each next page
// the Link header names on the same host, decoding every page's JSON array
// into a slice of T.
func listAll[T any](ctx context.Context, c *client, path string) ([]T, error) {
	next, err := c.base.Parse(path)
	if err != nil {
		return nil, err
	}
	var out []T
	for page := 0; next != nil; page++ {
		if page == MaxPages {
			return nil, fmt.Errorf("GET %s: more than %d pages", redact(next), MaxPages)
		}
		var items []T
		if next, err = c.get(ctx, next, &items); err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

// get GETs u into v and returns the next page's URL, if any.
func (c *client) get(ctx context.Context, u *url.URL, v any) (*url.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "tollgate-applicationset")
	c.header(req.Header)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redact(u), unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxPageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redact(u), err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("GET %s: %s: %w", redact(u), resp.Status, ErrRepositoryNotFound)
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("GET %s: %s%s", redact(u), resp.Status, Snippet(body))
	case len(body) > MaxPageBytes:
		return nil, fmt.Errorf("GET %s: the answer is larger than %d MiB", redact(u), MaxPageBytes>>20)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("GET %s: decode the answer: %w", redact(u), err)
	}
	return c.nextPage(resp.Header.Get("Link"))
}

// nextPage is the rel="next" URL of a Link header (RFC 8288), which must
// be on the API's host.
func (c *client) nextPage(link string) (*url.URL, error) {
	for part := range strings.SplitSeq(link, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
			continue
		}
		isNext := false
		for p := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "rel") && strings.Contains(" "+strings.Trim(v, `"`)+" ", " next ") {
				isNext = true
			}
		}
		if !isNext {
			continue
		}
		u, err := c.base.Parse(target[1 : len(target)-1])
		if err != nil {
			return nil, fmt.Errorf("the next page's link %q: %w", target, err)
		}
		if u.Scheme != c.base.Scheme || u.Host != c.base.Host {
			return nil, fmt.Errorf("the next page's link %q leaves the API's host %s", redact(u), c.base.Host)
		}
		return u, nil
	}
	return nil, nil
}

// redact is u without user information or query values that could hold
// a secret (GitLab accepts private_token in the query).
func redact(u *url.URL) string {
	r := *u
	r.User = nil
	if q := r.Query(); q.Has("private_token") || q.Has("access_token") || q.Has("token") {
		q.Del("private_token")
		q.Del("access_token")
		q.Del("token")
		r.RawQuery = q.Encode()
	}
	return r.String()
}

// unwrapURLError drops *url.Error's repetition of the method and URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Snippet is the start of an error answer's body, for messages: ": "
// and at most 200 bytes of it, "" for an empty body.
func Snippet(body []byte) string {
	s := strings.TrimSpace(string(body))
	if s == "" {
		return ""
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return ": " + s
}

// apiBase is api with a trailing slash and, unless it already ends so,
// suffix appended (as the providers' Go clients do).
func apiBase(api, suffix string) string {
	api = strings.TrimRight(api, "/") + "/"
	if strings.HasSuffix(api, "/"+suffix) {
		return api
	}
	return api + suffix
}
