package chart

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/tollgate-dev/tollgate/reposerver"
)

// FetchFile downloads the file at rawURL, at most max bytes, as kustomize
// loads a resource a kustomization names by URL: a GET without
// credentials, over https (http only with Options.AllowInsecure), dialling
// only what the chart client dials (no loopback, link-local or cloud
// metadata address). Redirects are followed to other hosts too, as a
// release asset's download redirects to its storage, at most
// maxRedirects times and never from https to http: no credential can
// follow one.
func (c *Cache) FetchFile(ctx context.Context, rawURL string, max int64) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parse URL %s: %w", redact(rawURL), err)
	}
	if err := c.fileScheme(u); err != nil {
		return nil, err
	}
	client := &http.Client{Transport: c.transport(reposerver.HelmRepository{}, nil), Timeout: c.opts.Timeout, CheckRedirect: c.fileRedirect}
	defer client.CloseIdleConnections()
	return c.get(ctx, client, rawURL, reposerver.HelmRepository{}, false, max)
}

// fileRedirect follows a redirect of a file download to any host, at most
// maxRedirects times, never to a scheme checkScheme refuses nor from
// https to http.
func (c *Cache) fileRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("redirect %w: more than %d redirects", ErrNotAllowed, maxRedirects)
	}
	if strings.EqualFold(via[0].URL.Scheme, "https") && !strings.EqualFold(req.URL.Scheme, "https") {
		return fmt.Errorf("redirect to %s %w: from https to %s", redact(req.URL.String()), ErrNotAllowed, req.URL.Scheme)
	}
	if err := c.fileScheme(req.URL); err != nil {
		return fmt.Errorf("redirect %w: %w", ErrNotAllowed, err)
	}
	return nil
}

// fileScheme allows https, and http only when insecure repositories are.
func (c *Cache) fileScheme(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if c.opts.AllowInsecure {
			return nil
		}
	}
	return fmt.Errorf("%s: remote files are fetched over https only", redact(u.String()))
}
