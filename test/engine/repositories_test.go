package engine_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// TestFileRepositoryRefused checks that an Application cannot make the
// controller read a repository from its own disk (another tenant's cached
// clone, say): file:// needs --allow-file-repos.
func TestFileRepositoryRefused(t *testing.T) {
	f := newFixture(t, baseFiles())
	f.repoURL = "file://" + filepath.ToSlash(f.git.RepoDir(f.repo))
	f.repos = []string{f.repoURL}
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	f.waitRefused(fmt.Sprintf(`fetch %s at "main": scheme not allowed: "file" reads the controller's own disk; only the controller flag --allow-file-repos allows it, for local development`, f.repoURL))
}

// TestInsecureRepositoryNeedsSecret checks, on the engine with the
// controller's default options, that an http repository is refused until
// its repository Secret says insecure.
func TestInsecureRepositoryNeedsSecret(t *testing.T) {
	f := newFixture(t, baseFiles())
	f.cp = strictNS
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	f.waitRefused(fmt.Sprintf(`fetch %s at "main": scheme not allowed: "http" is unencrypted; allow it with insecure: "true" in the repository Secret or the controller flag --allow-insecure-repos`, f.repoURL))

	f.create(repositorySecret(strictNS, f.name, map[string]string{"url": f.repoURL, "insecure": "true"}))
	f.refresh()
	f.waitSynced(f.head)
}

// TestRepositorySecretOfAnotherProject checks Argo CD's project-scoped
// repositories: the credentials of a repository Secret with another
// project's name are not used, the same Secret scoped to the Application's
// project is.
func TestRepositorySecretOfAnotherProject(t *testing.T) {
	f := newFixture(t, baseFiles(), gitserver.WithBasicAuth("team-bot", "s3cret"))
	s := repositorySecret(argoNS, f.name, map[string]string{
		"url": f.repoURL, "username": "team-bot", "password": "s3cret", "project": f.name + "-other",
	})
	f.create(s)
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	prefix := fmt.Sprintf(`fetch %s at "main": list references: authentication failed: `, f.repoURL)
	f.waitRefused(prefix)

	patch := []byte(`{"stringData":{"project":"` + f.name + `"}}`)
	if err := env.Client.Patch(t.Context(), s, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("scope the secret to the application's project: %v", err)
	}
	f.refresh()
	f.waitSynced(f.head)
}

// repositorySecret is an Argo CD repository Secret in namespace cp.
func repositorySecret(cp, name string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: cp,
			Labels: map[string]string{"argocd.argoproj.io/secret-type": "repository"},
		},
		StringData: data,
	}
}

// waitRefused waits until the Application's ComparisonError is want (or,
// when want ends with a space, starts with it) on one line, then checks
// over a few resyncs that nothing is applied.
func (f *fixture) waitRefused(want string) {
	f.t.Helper()
	match := func(msg string) bool {
		if strings.HasSuffix(want, " ") {
			return strings.HasPrefix(msg, want)
		}
		return msg == want
	}
	app := f.waitApp("with ComparisonError "+want, func(a *v1alpha1.Application) bool {
		msg, ok := condition(a, v1alpha1.ApplicationConditionComparisonError)
		return ok && match(msg)
	})
	msg, _ := condition(app, v1alpha1.ApplicationConditionComparisonError)
	if strings.ContainsAny(msg, "\r\n") || len(msg) > len(want)+200 {
		f.t.Errorf("ComparisonError is not one short line: %q", msg)
	}
	consistently(f.t, "nothing applied", 3*resync, func() (bool, string) {
		if n := applies.count(f.ns); n != 0 {
			return false, fmt.Sprintf("%d apply requests into %s", n, f.ns)
		}
		if gone, why := f.gone(&corev1.ConfigMap{}, "settings"); !gone {
			return false, why
		}
		if rev := f.app().Status.Sync.Revision; rev != "" {
			return false, "sync revision " + rev
		}
		return true, ""
	})
}
