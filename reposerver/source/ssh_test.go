package source

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// newSSHKey returns a PEM private key and its public key.
func newSSHKey(t *testing.T) ([]byte, ssh.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(block), sshPub
}

func TestFetchSSH(t *testing.T) {
	srv := gitserver.New(t)
	srv.CreateRepo(t, "app", map[string]string{"a.yaml": "a: 1\n"})
	base, known := srv.StartSSH(t)
	repoURL := base + "/app.git"
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	clientKey, _ := newSSHKey(t)
	_, otherKey := newSSHKey(t)
	hostPattern := knownhosts.Normalize(u.Host)
	hostKey := strings.Fields(string(known))[1:] // type and base64 key
	hashed := knownhosts.HashHostname(hostPattern) + " " + strings.Join(hostKey, " ") + "\n"
	wrong := knownhosts.Line([]string{u.Host}, otherKey) + "\n"

	tests := []struct {
		name    string
		creds   reposerver.Credentials
		wantErr error
		// wantHostKeyErr says the error must be a *HostKeyError.
		wantHostKeyErr bool
	}{
		{"known host", reposerver.Credentials{SSHPrivateKey: clientKey, SSHKnownHosts: known}, nil, false},
		{"hashed known host", reposerver.Credentials{SSHPrivateKey: clientKey, SSHKnownHosts: []byte(hashed)}, nil, false},
		{"insecure without known hosts", reposerver.Credentials{SSHPrivateKey: clientKey, Insecure: true}, nil, false},
		{"host key mismatch", reposerver.Credentials{SSHPrivateKey: clientKey, SSHKnownHosts: []byte(wrong)}, ErrAuthFailed, true},
		{"host not in known hosts", reposerver.Credentials{SSHPrivateKey: clientKey, SSHKnownHosts: []byte("example.com " + strings.Join(hostKey, " ") + "\n")}, ErrAuthFailed, true},
		{"no known hosts", reposerver.Credentials{SSHPrivateKey: clientKey}, ErrAuthFailed, false},
		{"no private key", reposerver.Credentials{SSHKnownHosts: known}, ErrAuthFailed, false},
		{"garbage private key", reposerver.Credentials{SSHPrivateKey: []byte("not a key"), SSHKnownHosts: known}, ErrAuthFailed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCache(t, Options{})
			co, err := c.Fetch(t.Context(), repoURL, "main", tt.creds)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			var hke *HostKeyError
			if got := errors.As(err, &hke); got != tt.wantHostKeyErr {
				t.Errorf("error %v: is *HostKeyError = %v, want %v", err, got, tt.wantHostKeyErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(map[string]string{"a.yaml": "a: 1\n"}, readTree(t, co.Dir)); diff != "" {
				t.Errorf("files mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
