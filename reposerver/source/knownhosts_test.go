package source

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

func TestKnownHostsCallback(t *testing.T) {
	_, keyA := newSSHKey(t)
	_, keyB := newSSHKey(t)
	_, keyRevoked := newSSHKey(t)
	line := func(hosts string, k ssh.PublicKey) string {
		return hosts + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
	}
	data := strings.Join([]string{
		"# comment line",
		"",
		line("github.com,140.82.121.4", keyA),
		line("[git.example.com]:2222", keyA),
		line(knownhosts.HashHostname("hashed.example.com"), keyA),
		line("*.corp.example,!bad.corp.example", keyA),
		line("multi.example", keyA),
		line("multi.example", keyB),
		"@revoked * " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(keyRevoked))),
		"@cert-authority *.example " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(keyB))),
	}, "\n")
	db, err := parseKnownHosts([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	cb := db.callback()
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 22}
	tests := []struct {
		name       string
		host       string
		key        ssh.PublicKey
		wantReason string // "" means accepted
	}{
		{"plain host", "github.com:22", keyA, ""},
		{"second name on the line", "140.82.121.4:22", keyA, ""},
		{"case-insensitive", "GitHub.com:22", keyA, ""},
		{"port form", "git.example.com:2222", keyA, ""},
		{"port form needs the port", "git.example.com:22", keyA, "the host is not in known hosts"},
		{"hashed", "hashed.example.com:22", keyA, ""},
		{"wildcard", "build.corp.example:22", keyA, ""},
		{"negated", "bad.corp.example:22", keyA, "the host is not in known hosts"},
		{"one of several keys", "multi.example:22", keyB, ""},
		{"mismatch", "github.com:22", keyB, "the ssh-ed25519 host key does not match known hosts"},
		{"unknown host", "gitlab.com:22", keyA, "the host is not in known hosts"},
		{"revoked", "github.com:22", keyRevoked, "the host key is revoked"},
		{"cert authority ignored", "other.example:22", keyB, "the host is not in known hosts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := cb(tt.host, addr, tt.key)
			if tt.wantReason == "" {
				if err != nil {
					t.Fatalf("callback(%s) = %v, want accepted", tt.host, err)
				}
				return
			}
			var hke *HostKeyError
			if !errors.As(err, &hke) || !errors.Is(err, ErrAuthFailed) {
				t.Fatalf("callback(%s) = %v, want a HostKeyError", tt.host, err)
			}
			if hke.Reason != tt.wantReason {
				t.Errorf("reason = %q, want %q", hke.Reason, tt.wantReason)
			}
		})
	}
}

func TestKnownHostsAlgorithms(t *testing.T) {
	_, ed := newSSHKey(t)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaPub, err := ssh.NewPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	rsaLine := "github.com " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(rsaPub))) + "\n"
	data := rsaLine + "gitlab.com " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(ed))) + "\n"
	db, err := parseKnownHosts([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	algs := db.algorithms("github.com:22")
	if diff := cmp.Diff([]string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}, algs[:3]); diff != "" {
		t.Errorf("github.com algorithms mismatch (-want +got):\n%s", diff)
	}
	if got := db.algorithms("gitlab.com:22"); len(got) == 0 || got[0] != ssh.KeyAlgoED25519 {
		t.Errorf("gitlab.com algorithms = %v, want ssh-ed25519 first", got)
	}
	if got := db.algorithms("bitbucket.org:22"); got != nil {
		t.Errorf("unknown host algorithms = %v, want nil (client defaults)", got)
	}
}

func TestParseKnownHostsError(t *testing.T) {
	_, err := parseKnownHosts([]byte("github.com ssh-ed25519 not-base64!!\n"))
	if err == nil || !strings.Contains(err.Error(), "known hosts entry 1") {
		t.Fatalf("error = %v, want one naming entry 1", err)
	}
}

func TestWildcardMatch(t *testing.T) {
	tests := []struct {
		p, s string
		want bool
	}{
		{"*", "anything", true},
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "example.com", false},
		{"git?.example.com", "git1.example.com", true},
		{"git?.example.com", "git12.example.com", false},
		{"[git.example.com]:2222", "[git.example.com]:2222", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"", "", true},
	}
	for _, tt := range tests {
		if got := wildcardMatch(tt.p, tt.s); got != tt.want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", tt.p, tt.s, got, tt.want)
		}
	}
}
