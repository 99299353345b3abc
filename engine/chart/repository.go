package chart

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
)

// Repository is a Helm repository or OCI registry location and how to
// reach it: an Argo CD repository Secret of type helm.
type Repository struct {
	// URL is the repository's URL: https://charts.example.com/stable, or
	// for OCI oci://registry.example.com/charts (or the same without the
	// scheme, with EnableOCI).
	URL      string `json:"url"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// TLSClientCertData and TLSClientCertKey are a PEM client certificate
	// and key.
	TLSClientCertData string `json:"tlsClientCertData,omitempty"`
	TLSClientCertKey  string `json:"tlsClientCertKey,omitempty"`
	// Insecure skips TLS verification, and allows http:// repositories.
	Insecure bool `json:"insecure,omitempty"`
	// EnableOCI marks an OCI registry given without the oci:// scheme.
	EnableOCI bool `json:"enableOCI,omitempty"`
	// Template is true for a repo-creds Secret: it serves every
	// repository whose URL it prefixes.
	Template bool `json:"template,omitempty"`
	// Project is the AppProject of a project-scoped Secret, or empty.
	Project string `json:"project,omitempty"`
}

// hasAuth reports whether r carries credentials.
func (r Repository) hasAuth() bool {
	return r.Username != "" || r.Password != "" || r.TLSClientCertData != ""
}

// IsOCI reports whether repoURL names an OCI registry: the oci:// scheme,
// or a repository of repos with EnableOCI.
func IsOCI(repoURL string, repos []Repository) bool {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(repoURL)), "oci://") {
		return true
	}
	r, ok := Match(repoURL, repos)
	return ok && r.EnableOCI
}

// normalize returns the form repository URLs are compared in: no oci://
// scheme, scheme and host lowercased, no trailing slash.
func normalize(raw string) string {
	s := strings.TrimSpace(raw)
	if rest, ok := cutPrefixFold(s, "oci://"); ok {
		s = rest
	}
	if !strings.Contains(s, "://") {
		host, p, _ := strings.Cut(s, "/")
		return strings.TrimRight(strings.ToLower(host)+"/"+p, "/")
	}
	u, err := url.Parse(s)
	if err != nil {
		return strings.TrimRight(s, "/")
	}
	u.Scheme, u.Host, u.User = strings.ToLower(u.Scheme), strings.ToLower(u.Host), nil
	return strings.TrimRight(u.String(), "/")
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// Match picks the entry of repos for repoURL as Argo CD does: a repository
// with the same URL (a project-scoped one first); if none carries
// credentials, the template with the longest URL that prefixes repoURL at
// a path boundary supplies them. ok is false when nothing matches; the
// zero Repository then stands for anonymous access.
func Match(repoURL string, repos []Repository) (Repository, bool) {
	want := normalize(repoURL)
	var exact, tmpl *Repository
	for i := range repos {
		r := &repos[i]
		u := normalize(r.URL)
		if u == "" {
			continue
		}
		switch {
		case !r.Template && u == want:
			if exact == nil || r.Project != "" && exact.Project == "" {
				exact = r
			}
		case r.Template && (want == u || strings.HasPrefix(want, u+"/")):
			if tmpl == nil || len(u) > len(normalize(tmpl.URL)) || len(u) == len(normalize(tmpl.URL)) && r.Project != "" && tmpl.Project == "" {
				tmpl = r
			}
		}
	}
	var out Repository
	switch {
	case exact == nil && tmpl == nil:
		return Repository{URL: repoURL}, false
	case exact != nil:
		out = *exact
	default:
		out = Repository{EnableOCI: tmpl.EnableOCI}
	}
	if !out.hasAuth() && tmpl != nil {
		out.Username, out.Password = tmpl.Username, tmpl.Password
		out.TLSClientCertData, out.TLSClientCertKey = tmpl.TLSClientCertData, tmpl.TLSClientCertKey
		if exact == nil {
			out.Insecure = tmpl.Insecure
		}
		if tmpl.Project != "" {
			out.Project = tmpl.Project
		}
	}
	out.URL, out.Template = repoURL, false
	return out, true
}

// cacheKey names the cache directory of a repository: what was fetched
// with one project's scoped credentials is never served to another.
func cacheKey(repoURL, project string) string {
	h := sha256.Sum256([]byte(normalize(repoURL) + "\x00" + project))
	return hex.EncodeToString(h[:12])
}
