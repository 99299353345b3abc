package engine_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// remoteBaseFixture is a fixture whose Application renders an overlay in
// its repository on a remote base in a second repository of the same Git
// server, as `github.com/org/repo//base?ref=v1` is written against GitHub.
func remoteBaseFixture(t *testing.T) (f *fixture, base, entry string) {
	t.Helper()
	f = newFixture(t, map[string]string{"README.md": "overlays on a shared base\n"})
	base = f.git.CreateRepo(t, "base", map[string]string{
		"base/kustomization.yaml": "resources: [configmap.yaml, deployment.yaml]\n",
		"base/configmap.yaml":     configMap("settings", "from-base"),
		"base/deployment.yaml":    deployment("web", "registry.example.com/web:1.0.0", 1),
	})
	entry = base + "//base?ref=" + gitserver.DefaultBranch
	f.head = f.git.Commit(t, f.repo, map[string]string{
		"manifests/kustomization.yaml": "resources:\n- " + entry + "\nreplicas:\n- {name: web, count: 2}\n",
	}, "overlay on the shared base")
	return f, base, entry
}

// TestKustomizeRemoteBase syncs an overlay whose base is fetched by the
// repo-server from a repository the project permits, then follows the
// base's branch when it moves though the overlay does not: the
// Application is OutOfSync at the same revision, which an automated sync
// applies with selfHeal, as any change at an already synced revision.
func TestKustomizeRemoteBase(t *testing.T) {
	f, base, _ := remoteBaseFixture(t)
	f.repos = append(f.repos, base)
	f.application(&v1alpha1.SyncPolicyAutomated{SelfHeal: true}, nil)
	f.waitSynced(f.head)
	var cm corev1.ConfigMap
	if err := f.get(&cm, "settings"); err != nil || cm.Data["key"] != "from-base" {
		t.Errorf("the base's ConfigMap: %v, data %v; want key from-base", err, cm.Data)
	}
	var dep appsv1.Deployment
	if err := f.get(&dep, "web"); err != nil || dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Errorf("the base's Deployment: %v, replicas %v; want 2 from the overlay", err, dep.Spec.Replicas)
	}

	f.git.Commit(t, "base", map[string]string{"base/configmap.yaml": configMap("settings", "base-moved")}, "move the base")
	f.refresh()
	eventually(t, "the moved base synced", func() (bool, string) {
		if err := f.get(&cm, "settings"); err != nil {
			return false, err.Error()
		}
		return cm.Data["key"] == "base-moved", fmt.Sprintf("data %v; %s", cm.Data, describeApp(f.app()))
	})
}

// TestKustomizeRemoteBaseNotPermitted: the project's sourceRepos do not
// permit the base's repository: a ComparisonError names the rule, the
// kustomization, the entry and the repository; nothing is applied and the
// base's repository is never read.
func TestKustomizeRemoteBaseNotPermitted(t *testing.T) {
	f, base, entry := remoteBaseFixture(t)
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	f.waitRefused(fmt.Sprintf(`project-source-denied: spec.source: manifests/kustomization.yaml line 2: remote base %q: repository %s is not permitted in project %q: add it to the project's spec.sourceRepos`,
		entry, base, f.name))
	if n := f.git.Fetches("base"); n != 0 {
		t.Errorf("the base's repository was read %d times, want never", n)
	}
}

// TestKustomizeRemoteFile syncs a kustomization whose resources name a
// file by URL, downloaded by the repo-server from a URL the project
// permits; the same kustomization in a project that does not permit the
// URL is refused by name and nothing is downloaded.
func TestKustomizeRemoteFile(t *testing.T) {
	var downloads atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		downloads.Add(1)
		_, _ = w.Write([]byte(configMap("remote", "from-url")))
	}))
	defer srv.Close()
	url := srv.URL + "/release/v1/settings.yaml"
	files := map[string]string{"manifests/kustomization.yaml": "resources:\n- local.yaml\n- " + url + "\n", "manifests/local.yaml": configMap("local", "in-git")}

	denied := newFixture(t, files)
	denied.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	denied.waitRefused(fmt.Sprintf(`project-source-denied: spec.source: manifests/kustomization.yaml line 3: remote file %q: repository %s is not permitted in project %q: add it to the project's spec.sourceRepos`,
		url, url, denied.name))
	if n := downloads.Load(); n != 0 {
		t.Errorf("the URL was downloaded %d times for a project that does not permit it", n)
	}

	f := newFixture(t, files)
	f.repos = append(f.repos, srv.URL+"/release/**")
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	f.waitSynced(f.head)
	var cm corev1.ConfigMap
	if err := f.get(&cm, "remote"); err != nil || cm.Data["key"] != "from-url" {
		t.Errorf("the remote file's ConfigMap: %v, data %v; want key from-url", err, cm.Data)
	}
}
