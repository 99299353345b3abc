package chart

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/registry"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// pullOCI resolves version of chart name in the OCI registry repository of
// r (oci://host/path) and pulls it with Helm's registry client. It returns
// the archive, the version and the chart layer's digest, which the client
// verified while pulling; no archive (nil) when have says the resolved
// version is already in the cache.
func (c *Cache) pullOCI(ctx context.Context, r Repository, name, version string, have func(string) bool) ([]byte, string, string, error) {
	hc, err := c.httpClient(r)
	if err != nil {
		return nil, "", "", err
	}
	hc.Transport = limitTransport{next: hc.Transport, max: c.opts.MaxArchiveBytes}
	base := strings.TrimRight(strings.TrimSpace(r.URL), "/")
	if rest, ok := cutPrefixFold(base, "oci://"); ok {
		base = rest
	}
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
		return nil, "", "", fmt.Errorf("registry client for %s: %w", redact(r.URL), err)
	}
	ref := base + "/" + name
	resolved, err := c.ociVersion(ctx, client, ref, strings.TrimSpace(version))
	if err != nil {
		return nil, "", "", err
	}
	if have(resolved) {
		return nil, resolved, "", nil
	}
	res, err := client.Pull(ref+":"+resolved, registry.PullOptWithChart(true))
	if err != nil {
		return nil, "", "", fmt.Errorf("pull oci://%s:%s: %w", ref, resolved, err)
	}
	if res.Chart == nil || len(res.Chart.Data) == 0 {
		return nil, "", "", fmt.Errorf("pull oci://%s:%s: no chart layer", ref, resolved)
	}
	return res.Chart.Data, resolved, res.Chart.Digest, ctx.Err()
}

// ociVersion returns version when it is exact, else the highest tag of ref
// that the constraint allows ("" and "*": the highest).
func (c *Cache) ociVersion(ctx context.Context, client *registry.Client, ref, version string) (string, error) {
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
	tags, err := client.Tags(ref)
	if err != nil {
		return "", fmt.Errorf("list tags of oci://%s: %w", ref, err)
	}
	for _, t := range tags { // highest first
		if v, err := semver.NewVersion(t); err == nil && constraint.Check(v) {
			return t, nil
		}
	}
	return "", fmt.Errorf("chart oci://%s: no version matches %q", ref, version)
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
