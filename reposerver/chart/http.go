package chart

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/tollgate-dev/tollgate/reposerver"
	"sigs.k8s.io/yaml"
)

// Errors callers branch on, returned wrapped.
var (
	// ErrTooLarge: an index or archive past its limit.
	ErrTooLarge = errors.New("too large")
	// ErrUnreachable: a repository or registry did not answer, or
	// answered with a server error; trying again later may succeed.
	ErrUnreachable = errors.New("repository unreachable")
	// ErrNotAllowed: a redirect or a connection the chart client does not
	// make (see Cache.httpClient); trying again does not help.
	ErrNotAllowed = errors.New("not allowed")
)

// index is what tollgate reads of a Helm repository's index.yaml. (Helm's
// repo.IndexFile would pull Helm's CLI packages and kubectl into the
// binary; resolution follows its Get.)
type index struct {
	APIVersion string                          `json:"apiVersion"`
	Entries    map[string][]*indexChartVersion `json:"entries"`
}

// indexChartVersion is one version of a chart in an index.
type indexChartVersion struct {
	Version string   `json:"version"`
	URLs    []string `json:"urls"`
	Digest  string   `json:"digest"`
	semver  *semver.Version
}

// get resolves version of chart name as Helm's IndexFile.Get does: an
// entry whose version is exactly the one asked for, else the highest
// version the constraint allows ("" is "*").
func (i *index) get(name, version string) (*indexChartVersion, error) {
	versions := i.Entries[name]
	if len(versions) == 0 {
		return nil, fmt.Errorf("no chart %s", name)
	}
	for _, v := range versions {
		if version != "" && v.Version == version {
			return v, nil
		}
	}
	constraint, err := semver.NewConstraint(cmp.Or(version, "*"))
	if err != nil {
		return nil, fmt.Errorf("version %q: %w", version, err)
	}
	for _, v := range versions { // highest first
		if v.semver != nil && constraint.Check(v.semver) {
			return v, nil
		}
	}
	return nil, fmt.Errorf("no version of chart %s matches %q", name, version)
}

// cachedIndex is a downloaded index and when it was downloaded.
type cachedIndex struct {
	index   *index
	fetched time.Time
}

// checkScheme allows https, and http only when insecure repositories are.
func (c *Cache) checkScheme(u *url.URL, r reposerver.HelmRepository) error {
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if c.opts.AllowInsecure || r.Insecure {
			return nil
		}
		return fmt.Errorf("%s: http:// repositories need insecure: \"true\" in their repository Secret", redact(u.String()))
	}
	return fmt.Errorf("%s: the scheme %q is not a Helm repository's (https, or oci for a registry)", redact(u.String()), u.Scheme)
}

// get reads href, at most max bytes, sending r's basic auth when auth is
// set.
func (c *Cache) get(ctx context.Context, client *http.Client, href string, r reposerver.HelmRepository, auth bool, max int64) ([]byte, error) {
	u, err := url.Parse(href)
	if err != nil {
		return nil, fmt.Errorf("parse URL %s: %w", redact(href), err)
	}
	if err := c.checkScheme(u, r); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "tollgate")
	if auth && (r.Username != "" || r.Password != "") {
		req.SetBasicAuth(r.Username, r.Password)
	}
	resp, err := client.Do(req)
	if err != nil {
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, ErrNotAllowed) {
			return nil, fmt.Errorf("get %s: %w", redact(href), err)
		}
		return nil, fmt.Errorf("get %s: %w: %w", redact(href), ErrUnreachable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 {
		return nil, fmt.Errorf("get %s: %w: %s", redact(href), ErrUnreachable, resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get %s: %s", redact(href), resp.Status)
	}
	if resp.ContentLength > max {
		return nil, fmt.Errorf("get %s: %w: %d bytes, limit is %d", redact(href), ErrTooLarge, resp.ContentLength, max)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", redact(href), err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("get %s: %w: more than %d bytes", redact(href), ErrTooLarge, max)
	}
	return data, nil
}

// index returns the index of repository r, downloaded again once it is
// older than maxAge.
func (c *Cache) index(ctx context.Context, client func() (*http.Client, error), r reposerver.HelmRepository, maxAge time.Duration) (*index, error) {
	key := cacheKey(r.URL, r.Project)
	m := c.lock("index/" + key)
	m.Lock()
	defer m.Unlock()
	c.mu.Lock()
	ci, ok := c.indexes[key]
	c.mu.Unlock()
	if ok && c.opts.Now().Sub(ci.fetched) < maxAge {
		return ci.index, nil
	}
	href, err := resolveReference(r.URL, "index.yaml")
	if err != nil {
		return nil, fmt.Errorf("repository URL %s: %w", redact(r.URL), err)
	}
	hc, err := client()
	if err != nil {
		return nil, err
	}
	data, err := c.get(ctx, hc, href, r, true, c.opts.MaxIndexBytes)
	if err != nil {
		return nil, err
	}
	idx, err := parseIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(href), err)
	}
	c.mu.Lock()
	c.indexes[key] = cachedIndex{index: idx, fetched: c.opts.Now()}
	c.mu.Unlock()
	return idx, nil
}

// parseIndex reads an index.yaml, dropping empty entries and sorting each
// chart's versions highest first, as Helm does. Its errors never quote the
// document: the URL may not be a Helm repository at all, and its content
// is not for an Application's status.
func parseIndex(data []byte) (*index, error) {
	var idx index
	if err := yaml.Unmarshal(data, &idx); err != nil || idx.APIVersion == "" {
		return nil, fmt.Errorf("not a Helm repository index (%d bytes without an apiVersion and chart entries)", len(data))
	}
	for name, versions := range idx.Entries {
		valid := versions[:0]
		for _, v := range versions {
			if v == nil || v.Version == "" {
				continue
			}
			v.semver, _ = semver.NewVersion(v.Version)
			valid = append(valid, v)
		}
		sort.SliceStable(valid, func(a, b int) bool {
			va, vb := valid[a].semver, valid[b].semver
			if va == nil || vb == nil {
				return va != nil
			}
			return va.GreaterThan(vb)
		})
		idx.Entries[name] = valid
	}
	return &idx, nil
}

// resolveReference resolves ref against the repository URL base as Helm
// does: base is a directory whatever its last character.
func resolveReference(base, ref string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	r, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	if r.IsAbs() {
		return r.String(), nil
	}
	b.RawPath = ""
	b.Path = strings.TrimSuffix(b.Path, "/") + "/"
	return b.ResolveReference(r).String(), nil
}

// download resolves version of chart name in repository r and downloads
// its archive, checking the digest the index gives; no archive (nil) when
// have says the resolved version is already in the cache.
func (c *Cache) download(ctx context.Context, r reposerver.HelmRepository, name, version string, o FetchOptions, have func(string) bool) ([]byte, string, error) {
	// The client is built only when something is downloaded: an idle
	// comparison resolves from the cached index and finds the archive in
	// the cache.
	client := sync.OnceValues(func() (*http.Client, error) { return c.httpClient(r) })
	idx, err := c.index(ctx, client, r, o.IndexMaxAge)
	if err != nil {
		return nil, "", err
	}
	cv, err := idx.get(name, strings.TrimSpace(version))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", redact(r.URL), err)
	}
	if have(cv.Version) {
		return nil, cv.Version, nil
	}
	if len(cv.URLs) == 0 {
		return nil, "", fmt.Errorf("chart %s-%s in %s has no URL", name, cv.Version, redact(r.URL))
	}
	href, err := resolveReference(r.URL, cv.URLs[0])
	if err != nil {
		return nil, "", fmt.Errorf("chart %s-%s in %s: %w", name, cv.Version, redact(r.URL), err)
	}
	hc, err := client()
	if err != nil {
		return nil, "", err
	}
	data, err := c.get(ctx, hc, href, r, o.PassCredentials || sameHost(href, r.URL), c.opts.MaxArchiveBytes)
	if err != nil {
		return nil, "", fmt.Errorf("chart %s-%s: %w", name, cv.Version, err)
	}
	if cv.Digest != "" {
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); !strings.EqualFold(strings.TrimPrefix(cv.Digest, "sha256:"), got) {
			return nil, "", fmt.Errorf("chart %s-%s from %s: digest mismatch: the index says %s, the archive is sha256:%s", name, cv.Version, redact(href), cv.Digest, got)
		}
	}
	return data, cv.Version, nil
}

// sameHost reports whether two URLs have the same scheme and host.
func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}

// redact drops user information from a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}
