package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/engine/argocd"
)

// TestRepoAdd: the repository Secret argocd repo add writes (name, labels,
// data), that the engine reads back as the same credentials, upsert and
// argocd's refusals.
func TestRepoAdd(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "id_rsa")
	if err := os.WriteFile(key, []byte("KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := fakeAppClient(t)
	add := func(o repoAddOptions) error {
		t.Helper()
		o.namespace = "argocd"
		if o.typ == "" {
			o.typ = "git"
		}
		s, err := o.secret(&bytes.Buffer{})
		if err != nil {
			return err
		}
		return writeRepoSecret(t.Context(), c, s, o.upsert)
	}
	const url = "https://git.example.com/org/repo.git"
	if err := add(repoAddOptions{url: url, username: "git", stdin: strings.NewReader("s3cret\n"), insecureSkipServerVerify: true}); err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: "argocd", Name: "repo-3418955395"}, &s); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"url": url, "username": "git", "password": "s3cret", "type": "git", "insecure": "true"}
	if diff := cmp.Diff(want, stringData(s.Data)); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if s.Labels["argocd.argoproj.io/secret-type"] != "repository" || s.Annotations["managed-by"] != "argocd.argoproj.io" {
		t.Errorf("labels %v, annotations %v", s.Labels, s.Annotations)
	}
	creds := argocd.MatchCredentials(url, "default", []corev1.Secret{s}, nil)
	if creds.Username != "git" || creds.Password != "s3cret" || !creds.Insecure {
		t.Errorf("the engine reads %+v", creds)
	}

	if err := add(repoAddOptions{url: url, username: "git", password: "s3cret", insecureSkipServerVerify: true}); err != nil {
		t.Errorf("the same again: %v", err)
	}
	err := add(repoAddOptions{url: url, username: "git", password: "other"})
	if err == nil || err.Error() != "existing repository spec is different; use upsert flag to force update" || exitCode(err) != exitUsage {
		t.Fatalf("differs: %v", err)
	}
	if err := add(repoAddOptions{url: url, username: "git", password: "other", upsert: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: "argocd", Name: "repo-3418955395"}, &s); err != nil {
		t.Fatal(err)
	}
	if string(s.Data["password"]) != "other" || string(s.Data["insecure"]) != "" {
		t.Errorf("upserted: %v", stringData(s.Data))
	}

	if err := add(repoAddOptions{url: url, project: "team-a", sshPrivateKeyPath: key}); err == nil ||
		err.Error() != "--ssh-private-key-path is only supported for SSH repositories." {
		t.Errorf("ssh key for https: %v", err)
	}
	if err := add(repoAddOptions{url: "git@git.example.com:org/repo.git", project: "team-a", sshPrivateKeyPath: key}); err != nil {
		t.Fatal(err)
	}
	var list corev1.SecretList
	if err := c.List(t.Context(), &list); err != nil || len(list.Items) != 2 {
		t.Fatalf("%d secrets, %v", len(list.Items), err)
	}
	for _, tc := range []struct {
		o       repoAddOptions
		wantErr string
	}{
		{repoAddOptions{url: "https://charts.example.com", typ: "helm"}, "Must specify --name for repos of type 'helm'"},
		{repoAddOptions{url: url, tlsClientCertPath: key}, "--tls-client-cert-path and --tls-client-cert-key-path must be specified together"},
		{repoAddOptions{url: "http://git.example.com/r.git", tlsClientCertPath: key, tlsClientCertKeyPath: key}, "--tls-client-cert-path is only supported for HTTPS repositories"},
		{repoAddOptions{url: url, bearerToken: "t", password: "p"}, "only --bearer-token or --password is allowed, not both"},
		{repoAddOptions{url: url, typ: "oci"}, `invalid --type "oci": want git or helm`},
		{repoAddOptions{url: url, username: "u", stdin: strings.NewReader("")}, "read the password of --username u: no password on stdin; give --password"},
	} {
		if err := add(tc.o); err == nil || err.Error() != tc.wantErr || exitCode(err) != exitUsage {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.wantErr)
		}
	}

	secrets, err := repoSecrets(t.Context(), c, "argocd")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeRepos(&out, secrets, "url"); err != nil || out.String() != "git@git.example.com:org/repo.git\n"+url+"\n" {
		t.Errorf("-o url: %q, %v", out.String(), err)
	}
	out.Reset()
	if err := removeRepos(t.Context(), c, "argocd", "team-a", []string{"git@git.example.com:org/repo.git"}, false, nil, &out); err != nil || out.String() != "Repository 'git@git.example.com:org/repo.git' removed\n" {
		t.Errorf("rm: %q, %v", out.String(), err)
	}
	if err := removeRepos(t.Context(), c, "argocd", "", []string{"https://nope.example.com/r.git"}, false, nil, &out); err == nil || exitCode(err) != exitUsage {
		t.Errorf("rm missing: %v", err)
	}
}
