package reposerver

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Credentials authenticate to a repository. Which fields apply depends on
// the URL: Username/Password or BearerToken for http(s), SSHPrivateKey and
// SSHKnownHosts for ssh and scp-style URLs. Build them from Argo CD
// repository Secrets with MatchCredentials.
type Credentials struct {
	Username string
	Password string
	// BearerToken is sent as "Authorization: Bearer"; it wins over
	// Username/Password.
	BearerToken string
	// SSHPrivateKey is a PEM-encoded private key (unencrypted).
	SSHPrivateKey []byte
	// SSHKnownHosts is known_hosts content. SSH is refused without a
	// matching host key unless Insecure is set.
	SSHKnownHosts []byte
	// Insecure skips TLS verification for https and host key verification
	// for ssh, and allows http and git URLs (see Options.AllowInsecure).
	Insecure bool
	// Project is the AppProject of the project-scoped Secret (its project
	// key) the credentials come from, or empty. The Cache keeps such a
	// repository apart per project, so that what one project's credentials
	// fetched is never served to another project's Applications.
	Project string
}

// SignatureStatus is the outcome of verifying a commit's signature.
type SignatureStatus string

// The outcomes of VerifySignature, named after the results Argo CD reads
// from `git verify-commit`.
const (
	// SignatureUnsigned: the commit carries no signature.
	SignatureUnsigned SignatureStatus = "Unsigned"
	// SignatureGood: the signature verifies with a key of the keyring.
	// An expired key or signature still verifies, as gpg reports it
	// ("Good signature", with a warning).
	SignatureGood SignatureStatus = "Good"
	// SignatureBad: the signature was made with a key of the keyring but
	// does not verify: the commit or the signature was altered.
	SignatureBad SignatureStatus = "Bad"
	// SignatureInvalid: the signature cannot be checked: its key is not in
	// the keyring, or was revoked.
	SignatureInvalid SignatureStatus = "Invalid"
	// SignatureUnknown: the commit carries a signature that is not one
	// OpenPGP signature (an SSH or X.509 signature, several signatures,
	// or garbage).
	SignatureUnknown SignatureStatus = "Unknown"
)

// Signature is the verification of one commit's signature against a
// Keyring. It depends on nothing but the commit and the keyring.
type Signature struct {
	Status SignatureStatus `json:"status"`
	// KeyID is the long key ID (16 upper-case hex digits) of the key that
	// made the signature, as gpg reports it: a signing subkey's own ID.
	// It is known whenever the signature could be read, even when the key
	// is not in the keyring.
	KeyID string `json:"keyID,omitempty"`
	// PrimaryKeyID is the long key ID of the primary key KeyID belongs
	// to, when that key is in the keyring.
	PrimaryKeyID string `json:"primaryKeyID,omitempty"`
	// Algorithm is the public-key algorithm of the key, named as gpg
	// names it ("RSA", "DSA", "ECDSA", "EDDSA").
	Algorithm string `json:"algorithm,omitempty"`
	// Reason says why a signature is not Good.
	Reason string `json:"reason,omitempty"`
}

// SignedBy reports whether s is a Good signature made with one of keys:
// GnuPG key IDs or fingerprints (an AppProject's signatureKeys), compared
// as Argo CD compares them (KeyID). A key given by its primary key ID
// also allows a signature made with one of its signing subkeys.
func (s Signature) SignedBy(keys []string) bool {
	if s.Status != SignatureGood {
		return false
	}
	for _, k := range keys {
		id := KeyID(k)
		if id != "" && (id == s.KeyID || id == s.PrimaryKeyID) {
			return true
		}
	}
	return false
}

// KeyID returns the long GnuPG key ID of k, Argo CD's gpg.KeyID: k itself
// when it is 16 hex digits, its last 16 digits when it is a 40-digit
// fingerprint, in upper case; "" when k is neither.
func KeyID(k string) string {
	k = strings.ToUpper(strings.TrimSpace(k))
	if strings.Trim(k, "0123456789ABCDEF") != "" {
		return ""
	}
	switch len(k) {
	case 16:
		return k
	case 40:
		return k[24:]
	}
	return ""
}

// Commit is who wrote a commit, when, and why: Argo CD's revision metadata,
// which its UI shows in an Application's history.
type Commit struct {
	// SHA is the commit's full hash.
	SHA string `json:"sha"`
	// Author is "Name <email>".
	Author string    `json:"author"`
	Date   time.Time `json:"date"`
	// Message is the commit message without trailing newlines.
	Message string `json:"message"`
	// Tags are the repository's tags that point to the commit, as the
	// repo-server last listed its references (Argo CD's revision
	// metadata tags).
	Tags []string `json:"tags,omitempty"`
}

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
		user, host, p, ok := SplitSCP(s)
		if !ok {
			return ""
		}
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

// SplitSCP splits an scp-style SSH address, [user@]host:path, into its
// parts; ok is false for anything else (a URL, a Windows drive path, an
// empty path).
func SplitSCP(s string) (user, host, path string, ok bool) {
	m := scpLike.FindStringSubmatch(s)
	if m == nil || m[3] == "" || isWindowsDrive(s) {
		return "", "", "", false
	}
	return m[1], m[2], m[3], true
}

// isWindowsDrive reports whether s looks like C:\path or C:/path, which the
// scp pattern would otherwise take for host "C".
func isWindowsDrive(s string) bool {
	return len(s) >= 3 && s[1] == ':' && (s[2] == '\\' || s[2] == '/') &&
		(s[0]|0x20 >= 'a' && s[0]|0x20 <= 'z')
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

// ErrRepoUnreachable is wrapped by the errors of a repository (or Helm
// repository) that could not be reached, in process and across the wire
// (Error.Unwrap), so a caller tests it with errors.Is on either side.
var ErrRepoUnreachable = errors.New("repository unreachable")

// HasAuth reports whether c carries credentials.
func (c Credentials) HasAuth() bool {
	return c.Username != "" || c.Password != "" || c.BearerToken != "" || len(c.SSHPrivateKey) > 0
}
