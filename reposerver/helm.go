package reposerver

import (
	"net/url"
	"strings"
)

// HelmRepository is a Helm repository or OCI registry location and how to
// reach it: an Argo CD repository Secret of type helm.
type HelmRepository struct {
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
func (r HelmRepository) hasAuth() bool {
	return r.Username != "" || r.Password != "" || r.TLSClientCertData != ""
}

// IsOCI reports whether repoURL names an OCI registry: the oci:// scheme,
// or a repository of repos with EnableOCI.
func IsOCI(repoURL string, repos []HelmRepository) bool {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(repoURL)), "oci://") {
		return true
	}
	r, ok := MatchHelmRepository(repoURL, repos)
	return ok && r.EnableOCI
}

// NormalizeHelmURL returns the form Helm repository URLs are compared in: no oci://
// scheme, scheme and host lowercased, no trailing slash.
func NormalizeHelmURL(raw string) string {
	s := strings.TrimSpace(raw)
	if rest, ok := CutOCIScheme(s); ok {
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

// CutOCIScheme returns s without a leading oci:// scheme (in any case),
// and whether it had one.
func CutOCIScheme(s string) (rest string, ok bool) {
	const prefix = "oci://"
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// MatchHelmRepository picks the entry of repos for repoURL as Argo CD does: a repository
// with the same URL (a project-scoped one first); if none carries
// credentials, the template with the longest URL that prefixes repoURL at
// a path boundary supplies them. ok is false when nothing matches; the
// zero HelmRepository then stands for anonymous access.
func MatchHelmRepository(repoURL string, repos []HelmRepository) (HelmRepository, bool) {
	want := NormalizeHelmURL(repoURL)
	var exact, tmpl *HelmRepository
	for i := range repos {
		r := &repos[i]
		u := NormalizeHelmURL(r.URL)
		if u == "" {
			continue
		}
		switch {
		case !r.Template && u == want:
			if exact == nil || r.Project != "" && exact.Project == "" {
				exact = r
			}
		case r.Template && (want == u || strings.HasPrefix(want, u+"/")):
			if tmpl == nil || len(u) > len(NormalizeHelmURL(tmpl.URL)) || len(u) == len(NormalizeHelmURL(tmpl.URL)) && r.Project != "" && tmpl.Project == "" {
				tmpl = r
			}
		}
	}
	var out HelmRepository
	switch {
	case exact == nil && tmpl == nil:
		return HelmRepository{URL: repoURL}, false
	case exact != nil:
		out = *exact
	default:
		out = HelmRepository{EnableOCI: tmpl.EnableOCI}
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
