package source

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"regexp"
	"strings"
)

// scpLike matches scp-style SSH addresses: [user@]host:path, where host has
// no slash and path does not start with "//" (that would be a URL).
var scpLike = regexp.MustCompile(`^(?:([^@/]+)@)?([^@/:]+):(.*)$`)

// defaultPorts are dropped by NormalizeURL.
var defaultPorts = map[string]string{"https": "443", "http": "80", "ssh": "22", "git": "9418"}

// NormalizeURL returns a canonical form of a Git repository URL, used to
// match Applications with webhook pushes and credentials and to key the
// cache: scheme and host lowercased, default port, trailing slashes and a
// ".git" suffix removed, user information dropped except an SSH user name,
// and scp-style addresses (git@host:org/repo.git) turned into ssh URLs
// (ssh://git@host/org/repo). The path keeps its case. It returns "" for a
// string that is not a repository URL.
func NormalizeURL(raw string) string {
	s := strings.TrimSpace(raw)
	if s == "" {
		return ""
	}
	if !strings.Contains(s, "://") {
		m := scpLike.FindStringSubmatch(s)
		if m == nil || m[3] == "" || isWindowsDrive(s) {
			return ""
		}
		user, host, p := m[1], m[2], m[3]
		s = "ssh://"
		if user != "" {
			s += user + "@"
		}
		s += host + "/" + strings.TrimPrefix(p, "/")
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	if scheme == "ssh" && u.User != nil && u.User.Username() != "" {
		b.WriteString(u.User.Username())
		b.WriteByte('@')
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	b.WriteString(host)
	if port := u.Port(); port != "" && port != defaultPorts[scheme] {
		b.WriteString(":" + port)
	}
	p := u.EscapedPath()
	for {
		trimmed := strings.TrimSuffix(strings.TrimRight(p, "/"), ".git")
		if trimmed == p {
			break
		}
		p = trimmed
	}
	if p != "" && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	b.WriteString(p)
	// A host url.Parse accepted but cannot print back (e.g. "[:]") is not
	// a repository URL.
	out := b.String()
	if _, err := url.Parse(out); err != nil {
		return ""
	}
	return out
}

// isWindowsDrive reports whether s looks like C:\path or C:/path, which the
// scp pattern would otherwise take for host "C".
func isWindowsDrive(s string) bool {
	return len(s) >= 3 && s[1] == ':' && (s[2] == '\\' || s[2] == '/') &&
		(s[0]|0x20 >= 'a' && s[0]|0x20 <= 'z')
}

// cacheKey is the directory name of a repository in the cache.
func cacheKey(normalized string) string {
	sum := sha256.Sum256([]byte(normalized))
	return hex.EncodeToString(sum[:])
}

// entryKey is the directory name of a repository fetched with the
// credentials of project's project-scoped Secret, or with unscoped (or no)
// credentials when project is empty.
func entryKey(normalized, project string) string {
	if project == "" {
		return cacheKey(normalized)
	}
	return cacheKey(normalized + "\x00project=" + project)
}

// RedactURL returns raw with any secret in its user information replaced
// by "redacted" (the password, or for http(s) a user name alone, which is
// often a token), for logs and error messages. Strings that are not URLs are
// returned unchanged.
func RedactURL(raw string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Do not echo a string that may hold a secret we failed to parse.
		i := strings.Index(raw, "://")
		if j := strings.LastIndex(raw, "@"); j > i {
			return raw[:i+3] + "redacted@" + raw[j+1:]
		}
		return raw
	}
	if u.User == nil {
		return raw
	}
	_, hasPassword := u.User.Password()
	scheme := strings.ToLower(u.Scheme)
	switch {
	case hasPassword:
		u.User = url.UserPassword(u.User.Username(), "redacted")
	case scheme == "http" || scheme == "https":
		u.User = url.User("redacted")
	}
	return u.String()
}
