package chart

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/tollgate-dev/tollgate/reposerver"
	"helm.sh/helm/v3/pkg/registry"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// pullOCI resolves version of chart name in the OCI registry repository of
// r (oci://host/path) and pulls it with Helm's registry client. It returns
// the archive, the version and the chart layer's digest, which the client
// verified while pulling; no archive (nil) when have says the resolved
// version is already in the cache.
func (c *Cache) pullOCI(ctx context.Context, r reposerver.HelmRepository, name, version string, tagsMaxAge time.Duration, have func(string) bool) ([]byte, string, string, error) {
	base := strings.TrimRight(strings.TrimSpace(r.URL), "/")
	if rest, ok := reposerver.CutOCIScheme(base); ok {
		base = rest
	}
	ref := base + "/" + name
	// The client is built only when the registry is called: an idle
	// comparison resolves from the cached tags and finds the chart in the
	// cache.
	client := sync.OnceValues(func() (*registry.Client, error) { return c.registryClient(r, base) })
	resolved, err := c.ociVersion(ctx, client, r, ref, strings.TrimSpace(version), tagsMaxAge)
	if err != nil {
		return nil, "", "", err
	}
	if have(resolved) {
		return nil, resolved, "", nil
	}
	rc, err := client()
	if err != nil {
		return nil, "", "", err
	}
	res, err := rc.Pull(ref+":"+resolved, registry.PullOptWithChart(true))
	if err != nil {
		return nil, "", "", fmt.Errorf("pull oci://%s:%s: %w", ref, resolved, err)
	}
	if res.Chart == nil || len(res.Chart.Data) == 0 {
		return nil, "", "", fmt.Errorf("pull oci://%s:%s: no chart layer", ref, resolved)
	}
	return res.Chart.Data, resolved, res.Chart.Digest, ctx.Err()
}

// registryClient is Helm's registry client for the registry of r (base is
// its host/path), with r's credentials only and every response bounded.
func (c *Cache) registryClient(r reposerver.HelmRepository, base string) (*registry.Client, error) {
	hc, err := c.httpClient(r)
	if err != nil {
		return nil, err
	}
	hc.Transport = limitTransport{next: hc.Transport, max: c.opts.MaxArchiveBytes}
	host, _, _ := strings.Cut(base, "/")
	authorizer := auth.Client{Client: hc, Cache: auth.NewCache()}
	if r.Username != "" || r.Password != "" {
		authorizer.Credential = auth.StaticCredential(host, auth.Credential{Username: r.Username, Password: r.Password})
	}
	client, err := registry.NewClient(
		registry.ClientOptHTTPClient(hc),
		registry.ClientOptAuthorizer(authorizer),
		// Never the process's own Docker or Helm credentials.
		registry.ClientOptCredentialsFile(filepath.Join(c.opts.Dir, "no-registry-credentials.json")),
		registry.ClientOptWriter(io.Discard),
	)
	if err != nil {
		return nil, fmt.Errorf("registry client for %s: %w", redact(r.URL), err)
	}
	return client, nil
}

// cachedTags is an OCI repository's tag listing and when it was listed.
type cachedTags struct {
	tags   []string
	listed time.Time
}

// ociVersion returns version when it is exact, else the highest tag of ref
// that the constraint allows ("" and "*": the highest), from a listing up
// to maxAge old.
func (c *Cache) ociVersion(ctx context.Context, client func() (*registry.Client, error), r reposerver.HelmRepository, ref, version string, maxAge time.Duration) (string, error) {
	if isExact(version) {
		return version, nil
	}
	constraint, err := semver.NewConstraint(cmp.Or(version, "*"))
	if err != nil {
		return "", fmt.Errorf("chart version %q: %w", version, err)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	tags, err := c.ociTags(client, r, ref, maxAge)
	if err != nil {
		return "", err
	}
	for _, t := range tags { // highest first
		if v, err := semver.NewVersion(t); err == nil && constraint.Check(v) {
			return t, nil
		}
	}
	return "", fmt.Errorf("chart oci://%s: no version matches %q", ref, version)
}

// ociTags lists the semver tags of ref, highest first, reusing a listing
// up to maxAge old.
func (c *Cache) ociTags(client func() (*registry.Client, error), r reposerver.HelmRepository, ref string, maxAge time.Duration) ([]string, error) {
	key := cacheKey("oci://"+ref, r.Project)
	c.mu.Lock()
	ct, ok := c.tags[key]
	c.mu.Unlock()
	if ok && c.opts.Now().Sub(ct.listed) < maxAge {
		return ct.tags, nil
	}
	rc, err := client()
	if err != nil {
		return nil, err
	}
	tags, err := rc.Tags(ref)
	if err != nil {
		return nil, fmt.Errorf("list tags of oci://%s: %w", ref, err)
	}
	c.mu.Lock()
	c.tags[key] = cachedTags{tags: tags, listed: c.opts.Now()}
	c.mu.Unlock()
	return tags, nil
}

// limitTransport fails a response body past max bytes.
type limitTransport struct {
	next http.RoundTripper
	max  int64
}

func (t limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %w: %d bytes, limit is %d", redact(req.URL.String()), ErrTooLarge, resp.ContentLength, t.max)
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: t.max}
	return resp, nil
}

type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 && err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("response body: %w", ErrTooLarge)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
