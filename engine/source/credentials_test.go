package source

import (
	"context"
	"errors"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func secret(name, typ string, data map[string]string) corev1.Secret {
	s := corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd", Labels: map[string]string{SecretTypeLabel: typ}},
		Data:       map[string][]byte{},
	}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func TestMatchCredentials(t *testing.T) {
	known := []byte("github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n")
	secrets := []corev1.Secret{
		secret("org-creds", SecretTypeRepoCreds, map[string]string{
			"url": "https://github.com/acme", "username": "org-bot", "password": "org-pass",
		}),
		secret("team-creds", SecretTypeRepoCreds, map[string]string{
			"url": "https://github.com/acme/team-", "bearerToken": "team-token",
		}),
		secret("ssh-creds", SecretTypeRepoCreds, map[string]string{
			"url": "git@github.com:acme", "sshPrivateKey": "KEY",
		}),
		secret("repo-with-creds", SecretTypeRepository, map[string]string{
			"url": "https://github.com/acme/special.git", "username": "special", "password": "sp", "insecure": "true",
		}),
		secret("repo-without-creds", SecretTypeRepository, map[string]string{
			"url": "https://github.com/acme/public", "insecure": "true",
		}),
		secret("helm-repo", SecretTypeRepository, map[string]string{
			"url": "https://github.com/acme/charts", "type": "helm", "username": "helm",
		}),
		secret("host-creds", SecretTypeRepoCreds, map[string]string{
			"url": "https://github.com", "username": "host-bot",
		}),
		secret("unlabelled", "", map[string]string{"url": "https://github.com/acme/other", "username": "nope"}),
		{
			ObjectMeta: metav1.ObjectMeta{Name: "string-data", Labels: map[string]string{SecretTypeLabel: SecretTypeRepository}},
			StringData: map[string]string{"url": "https://gitlab.example.com/x/y", "password": "from-string-data"},
		},
	}
	tests := []struct {
		name string
		url  string
		want Credentials
	}{
		{"repository secret wins, URL normalized", "https://GitHub.com/acme/special",
			Credentials{Username: "special", Password: "sp", Insecure: true, SSHKnownHosts: known}},
		{"longest repo-creds prefix", "https://github.com/acme/team-a.git",
			Credentials{BearerToken: "team-token", SSHKnownHosts: known}},
		{"shorter repo-creds prefix", "https://github.com/acme/app.git",
			Credentials{Username: "org-bot", Password: "org-pass", SSHKnownHosts: known}},
		{"repository without credentials inherits template", "https://github.com/acme/public.git",
			Credentials{Username: "org-bot", Password: "org-pass", Insecure: true, SSHKnownHosts: known}},
		{"scp-style matches ssh template", "git@github.com:acme/app.git",
			Credentials{SSHPrivateKey: []byte("KEY"), SSHKnownHosts: known}},
		{"ssh URL matches scp-style template", "ssh://git@github.com/acme/app",
			Credentials{SSHPrivateKey: []byte("KEY"), SSHKnownHosts: known}},
		{"helm secret ignored", "https://github.com/acme/charts",
			Credentials{Username: "org-bot", Password: "org-pass", SSHKnownHosts: known}},
		{"string data", "https://gitlab.example.com/x/y.git",
			Credentials{Password: "from-string-data", SSHKnownHosts: known}},
		{"no match", "https://bitbucket.org/acme/app",
			Credentials{SSHKnownHosts: known}},
		{"prefix needs no path boundary (Argo CD behaviour)", "https://github.com/acmecorp/app",
			Credentials{Username: "org-bot", Password: "org-pass", SSHKnownHosts: known}},
		{"prefix never crosses hosts", "https://github.com.evil.example/acme/app",
			Credentials{SSHKnownHosts: known}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MatchCredentials(tt.url, secrets, known)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("MatchCredentials(%q) mismatch (-want +got):\n%s", tt.url, diff)
			}
		})
	}
}

func TestAuthMethod(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		creds   Credentials
		want    transport.AuthMethod
		wantErr error
	}{
		{"anonymous https", "https://github.com/acme/app", Credentials{}, nil, nil},
		{"basic", "https://github.com/acme/app", Credentials{Username: "u", Password: "p"},
			&githttp.BasicAuth{Username: "u", Password: "p"}, nil},
		{"token wins", "https://github.com/acme/app", Credentials{Username: "u", Password: "p", BearerToken: "t"},
			&githttp.TokenAuth{Token: "t"}, nil},
		{"git protocol ignores credentials", "git://example.com/app", Credentials{Username: "u"}, nil, nil},
		{"file ignores credentials", "file:///srv/app", Credentials{Password: "p"}, nil, nil},
		{"ssh needs a key", "git@github.com:acme/app.git", Credentials{Username: "u", Password: "p"}, nil, ErrAuthFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep, err := transport.NewEndpoint(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tt.creds.authMethod(context.Background(), ep)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("auth mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSSHAuthUsesURLUser(t *testing.T) {
	key, _ := newSSHKey(t)
	for _, tt := range []struct{ url, wantUser string }{
		{"git@github.com:acme/app.git", "git"},
		{"ssh://deploy@git.example.com:2222/app.git", "deploy"},
		{"ssh://git.example.com/app.git", "git"},
	} {
		ep, err := transport.NewEndpoint(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		a, err := Credentials{SSHPrivateKey: key, Insecure: true}.authMethod(t.Context(), ep)
		if err != nil {
			t.Fatalf("%s: %v", tt.url, err)
		}
		cfg, err := a.(*sshAuth).ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.User != tt.wantUser || cfg.Timeout <= 0 {
			t.Errorf("%s: user %q timeout %v, want user %q and a timeout", tt.url, cfg.User, cfg.Timeout, tt.wantUser)
		}
	}
}
