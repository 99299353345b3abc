package argocd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/reposerver"
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
		want reposerver.Credentials
	}{
		{"repository secret wins, URL normalized", "https://GitHub.com/acme/special",
			reposerver.Credentials{Username: "special", Password: "sp", Insecure: true, SSHKnownHosts: known}},
		{"longest repo-creds prefix", "https://github.com/acme/team-a.git",
			reposerver.Credentials{BearerToken: "team-token", SSHKnownHosts: known}},
		{"shorter repo-creds prefix", "https://github.com/acme/app.git",
			reposerver.Credentials{Username: "org-bot", Password: "org-pass", SSHKnownHosts: known}},
		{"repository without credentials inherits template", "https://github.com/acme/public.git",
			reposerver.Credentials{Username: "org-bot", Password: "org-pass", Insecure: true, SSHKnownHosts: known}},
		{"scp-style matches ssh template", "git@github.com:acme/app.git",
			reposerver.Credentials{SSHPrivateKey: []byte("KEY"), SSHKnownHosts: known}},
		{"ssh URL matches scp-style template", "ssh://git@github.com/acme/app",
			reposerver.Credentials{SSHPrivateKey: []byte("KEY"), SSHKnownHosts: known}},
		{"helm secret ignored", "https://github.com/acme/charts",
			reposerver.Credentials{Username: "org-bot", Password: "org-pass", SSHKnownHosts: known}},
		{"string data", "https://gitlab.example.com/x/y.git",
			reposerver.Credentials{Password: "from-string-data", SSHKnownHosts: known}},
		{"no match", "https://bitbucket.org/acme/app",
			reposerver.Credentials{SSHKnownHosts: known}},
		{"prefix needs no path boundary (Argo CD behaviour)", "https://github.com/acmecorp/app",
			reposerver.Credentials{Username: "org-bot", Password: "org-pass", SSHKnownHosts: known}},
		{"prefix never crosses hosts", "https://github.com.evil.example/acme/app",
			reposerver.Credentials{SSHKnownHosts: known}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MatchCredentials(tt.url, "team", secrets, known)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("MatchCredentials(%q) mismatch (-want +got):\n%s", tt.url, diff)
			}
		})
	}
}

// TestMatchCredentialsProjectScoped checks Argo CD's project-scoped
// repositories: a Secret with a project key serves only that project's
// Applications and wins over one without; other projects fall back to the
// Secrets without a project key.
func TestMatchCredentialsProjectScoped(t *testing.T) {
	const (
		shared  = "https://git.example.com/platform/config.git"
		private = "https://git.example.com/other/private.git"
		plain   = "http://git.internal/other/config.git"
	)
	secrets := []corev1.Secret{
		secret("shared-other", SecretTypeRepository, map[string]string{
			"url": shared, "project": "other", "username": "other-bot", "password": "other-pass",
		}),
		secret("shared", SecretTypeRepository, map[string]string{
			"url": shared, "username": "shared-bot", "password": "shared-pass",
		}),
		secret("shared-team", SecretTypeRepository, map[string]string{
			"url": shared, "project": "team", "username": "team-bot", "password": "team-pass",
		}),
		secret("private-other", SecretTypeRepository, map[string]string{
			"url": private, "project": "other", "bearerToken": "other-token",
		}),
		secret("plain-other", SecretTypeRepository, map[string]string{
			"url": plain, "project": "other", "insecure": "true",
		}),
		secret("org-other", SecretTypeRepoCreds, map[string]string{
			"url": "https://git.example.com/org", "project": "other", "username": "org-other",
		}),
		secret("org", SecretTypeRepoCreds, map[string]string{
			"url": "https://git.example.com/org", "username": "org-bot",
		}),
		secret("org-team", SecretTypeRepoCreds, map[string]string{
			"url": "https://git.example.com/org/team-", "project": "team", "bearerToken": "team-token",
		}),
		secret("org-app-team", SecretTypeRepository, map[string]string{
			"url": "https://git.example.com/org/app", "project": "team", "insecure": "true",
		}),
	}
	tests := []struct {
		name    string
		project string
		url     string
		want    reposerver.Credentials
	}{
		{"own project's repository secret wins", "team", shared,
			reposerver.Credentials{Username: "team-bot", Password: "team-pass", Project: "team"}},
		{"each project its own", "other", shared,
			reposerver.Credentials{Username: "other-bot", Password: "other-pass", Project: "other"}},
		{"project without one falls back to the unscoped secret", "default", shared,
			reposerver.Credentials{Username: "shared-bot", Password: "shared-pass"}},
		{"no project gets the unscoped secret", "", shared,
			reposerver.Credentials{Username: "shared-bot", Password: "shared-pass"}},
		{"another project's secret is never used", "team", private, reposerver.Credentials{}},
		{"the project's own secret", "other", private,
			reposerver.Credentials{BearerToken: "other-token", Project: "other"}},
		{"another project's insecure does not apply", "team", plain, reposerver.Credentials{}},
		{"own insecure applies", "other", plain, reposerver.Credentials{Insecure: true, Project: "other"}},
		{"unscoped template for other projects", "team", "https://git.example.com/org/web",
			reposerver.Credentials{Username: "org-bot"}},
		{"scoped template wins at the same prefix", "other", "https://git.example.com/org/web",
			reposerver.Credentials{Username: "org-other", Project: "other"}},
		{"longer scoped template of the project", "team", "https://git.example.com/org/team-a",
			reposerver.Credentials{BearerToken: "team-token", Project: "team"}},
		{"longer template of another project is skipped", "other", "https://git.example.com/org/team-a",
			reposerver.Credentials{Username: "org-other", Project: "other"}},
		{"scoped repository secret without credentials inherits the template", "team", "https://git.example.com/org/app",
			reposerver.Credentials{Username: "org-bot", Insecure: true, Project: "team"}},
		{"another project's repository secret does not block the template", "other", "https://git.example.com/org/app",
			reposerver.Credentials{Username: "org-other", Project: "other"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MatchCredentials(tt.url, tt.project, secrets, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("MatchCredentials(%q, %q) mismatch (-want +got):\n%s", tt.url, tt.project, diff)
			}
		})
	}
}
