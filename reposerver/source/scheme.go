package source

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// Transports a repository URL may name, as go-git's endpoints call them.
const (
	schemeHTTPS = "https"
	schemeSSH   = "ssh"
	schemeHTTP  = "http"
	schemeGit   = "git"
	schemeFile  = "file"
)

// checkURL applies the scheme policy (checkScheme) to a repository URL and
// returns the endpoint the Git client will use. A URL the client reads as
// another transport than the policy did is refused too, so the policy
// cannot be walked around by a spelling the two parse differently.
func (o Options) checkURL(repoURL string, insecure bool) (*transport.Endpoint, error) {
	scheme, err := o.checkScheme(repoURL, insecure)
	if err != nil {
		return nil, err
	}
	ep, err := transport.NewEndpoint(repoURL)
	if err != nil {
		return nil, fmt.Errorf("parse repository URL: %w", err)
	}
	if ep.Protocol != scheme {
		return nil, fmt.Errorf("%w: %q is read as %q by the Git client", ErrSchemeNotAllowed, scheme, ep.Protocol)
	}
	return ep, nil
}

// checkScheme applies the scheme policy to a repository URL before anything
// is read: https, ssh and scp-style addresses ([user@]host:path) are
// allowed; http and git only with o.AllowInsecure or insecure (the
// repository Secret's insecure key); file only with o.AllowFile. Anything
// else is refused, including local paths, git's remote-helper addresses
// (ext::cmd, fd::3) and strings that start with "-". It returns the scheme,
// "ssh" for an scp-style address.
func (o Options) checkScheme(repoURL string, insecure bool) (string, error) {
	scheme, ok := urlScheme(repoURL)
	switch {
	case !ok:
		return "", fmt.Errorf("%w: no scheme (use https://, ssh:// or git@host:path)", ErrSchemeNotAllowed)
	case scheme == schemeHTTPS || scheme == schemeSSH:
		return scheme, nil
	case scheme == schemeHTTP || scheme == schemeGit:
		if o.AllowInsecure || insecure {
			return scheme, nil
		}
		return "", fmt.Errorf(`%w: %q is unencrypted; allow it with insecure: "true" in the repository Secret or the controller flag --allow-insecure-repos`, ErrSchemeNotAllowed, scheme)
	case scheme == schemeFile:
		if o.AllowFile {
			return scheme, nil
		}
		return "", fmt.Errorf("%w: %q reads the controller's own disk; only the controller flag --allow-file-repos allows it, for local development", ErrSchemeNotAllowed, scheme)
	}
	return "", fmt.Errorf("%w: %q is not a Git transport tollgate fetches from (use https://, ssh:// or git@host:path)", ErrSchemeNotAllowed, scheme)
}

// urlScheme returns the lowercased scheme of a repository URL: the text
// before "://", "ssh" for an scp-style address, or the transport of a
// remote-helper address (transport::address). ok is false when the string
// names no scheme: a local path, an option ("-uhelp"), text with spaces or
// control characters, or an scp-style address whose host is not a host
// name.
func urlScheme(raw string) (scheme string, ok bool) {
	if raw == "" || strings.HasPrefix(raw, "-") || strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", false
	}
	helper := strings.Index(raw, "::")
	sep := strings.Index(raw, "://")
	switch {
	case helper >= 0 && (sep < 0 || helper < sep):
		scheme = raw[:helper]
	case sep >= 0:
		scheme = raw[:sep]
	default:
		_, host, _, scp := reposerver.SplitSCP(raw)
		if !scp || !isHostName(host) {
			return "", false
		}
		return schemeSSH, true
	}
	if !isSchemeName(scheme) {
		return "", false
	}
	return strings.ToLower(scheme), true
}

// isSchemeName reports whether s is a URL scheme by RFC 3986: a letter,
// then letters, digits, "+", "-" or ".".
func isSchemeName(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && (c < '0' || c > '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// isHostName reports whether s is a host name or an IPv4 address: letters,
// digits, "-", "_" and ".", not starting with "-".
func isHostName(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && (c < '0' || c > '9') && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
