package source

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // the hashed known_hosts format is HMAC-SHA1
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyError is a host key that known_hosts does not vouch for. It wraps
// ErrAuthFailed.
type HostKeyError struct {
	// Host is the host as looked up in known_hosts: "host" for port 22,
	// "[host]:port" otherwise.
	Host string
	// Reason says what was wrong: unknown host, mismatch or revoked key.
	Reason string
}

// Error implements error.
func (e *HostKeyError) Error() string {
	return fmt.Sprintf("verify ssh host key of %s: %s", e.Host, e.Reason)
}

// Unwrap returns ErrAuthFailed.
func (e *HostKeyError) Unwrap() error { return ErrAuthFailed }

// knownHostsDB is parsed known_hosts content (the format of OpenSSH and of
// Argo CD's argocd-ssh-known-hosts-cm).
type knownHostsDB struct {
	lines []knownHostLine
}

type knownHostLine struct {
	patterns []string
	key      ssh.PublicKey
	revoked  bool
}

// parseKnownHosts parses known_hosts content. @cert-authority lines are
// ignored: host certificates are not supported.
func parseKnownHosts(data []byte) (*knownHostsDB, error) {
	db := &knownHostsDB{}
	rest := data
	for n := 1; len(bytes.TrimSpace(rest)) > 0; n++ {
		marker, hosts, key, _, next, err := ssh.ParseKnownHosts(rest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parse known hosts entry %d: %w", n, err)
		}
		rest = next
		switch marker {
		case "cert-authority":
			continue
		case "revoked":
			db.lines = append(db.lines, knownHostLine{patterns: hosts, key: key, revoked: true})
		default:
			db.lines = append(db.lines, knownHostLine{patterns: hosts, key: key})
		}
	}
	return db, nil
}

// callback returns an ssh.HostKeyCallback that accepts a host key only if a
// known_hosts line for the host lists exactly that key.
func (db *knownHostsDB) callback() ssh.HostKeyCallback {
	return func(hostname string, _ net.Addr, key ssh.PublicKey) error {
		host := knownhosts.Normalize(hostname)
		wire := key.Marshal()
		found := false
		for _, l := range db.lines {
			if l.revoked {
				if bytes.Equal(l.key.Marshal(), wire) {
					return &HostKeyError{Host: host, Reason: "the host key is revoked"}
				}
				continue
			}
			if !l.matches(host) {
				continue
			}
			found = true
			if bytes.Equal(l.key.Marshal(), wire) {
				return nil
			}
		}
		if !found {
			return &HostKeyError{Host: host, Reason: "the host is not in known hosts"}
		}
		return &HostKeyError{Host: host, Reason: fmt.Sprintf("the %s host key does not match known hosts", key.Type())}
	}
}

// algorithms returns the host key algorithms to offer to hostPort: the
// types known_hosts lists for it first, so that a server with several keys
// presents one we can verify, then every other supported type, so that a
// server with none of them fails with a HostKeyError rather than a
// negotiation error.
func (db *knownHostsDB) algorithms(hostPort string) []string {
	host := knownhosts.Normalize(hostPort)
	var algs []string
	seen := map[string]bool{}
	add := func(a ...string) {
		for _, x := range a {
			if !seen[x] {
				seen[x] = true
				algs = append(algs, x)
			}
		}
	}
	for _, l := range db.lines {
		if l.revoked || !l.matches(host) {
			continue
		}
		switch t := l.key.Type(); t {
		case ssh.KeyAlgoRSA:
			add(ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
		default:
			add(t)
		}
	}
	if len(algs) == 0 {
		return nil
	}
	add(ssh.SupportedAlgorithms().HostKeys...)
	return algs
}

// matches reports whether the line's host patterns select host (already
// normalized): some positive pattern matches and no negated one does.
func (l knownHostLine) matches(host string) bool {
	matched := false
	for _, p := range l.patterns {
		negated := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		if !hostPatternMatch(p, host) {
			continue
		}
		if negated {
			return false
		}
		matched = true
	}
	return matched
}

// hostPatternMatch matches one known_hosts pattern: a hashed name
// (|1|salt|hash), or a name with * and ? wildcards. Names compare
// case-insensitively. A bare name pattern also matches "[name]:22".
func hostPatternMatch(pattern, host string) bool {
	if strings.HasPrefix(pattern, "|1|") {
		parts := strings.Split(pattern[3:], "|")
		if len(parts) != 2 {
			return false
		}
		salt, err1 := base64.StdEncoding.DecodeString(parts[0])
		want, err2 := base64.StdEncoding.DecodeString(parts[1])
		if err1 != nil || err2 != nil {
			return false
		}
		mac := hmac.New(sha1.New, salt)
		mac.Write([]byte(host))
		return hmac.Equal(mac.Sum(nil), want)
	}
	return wildcardMatch(strings.ToLower(pattern), strings.ToLower(host))
}

// wildcardMatch matches s against p where * is any run of characters and ?
// any one character; other characters, [ and ] included, are literal.
func wildcardMatch(p, s string) bool {
	// Iterative matcher with backtracking to the last star.
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
