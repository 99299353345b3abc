package check

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/reposerver/source"
	"github.com/tollgate-dev/tollgate/test/gitserver"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// remoteBaseRepo is a repository under test whose Application renders an
// overlay on a remote base in another repository, beside a kustomization
// no Application names on the same base; the base's repository is served
// by a Git server. sourceRepos are the project's.
func remoteBaseRepo(t *testing.T, sourceRepos string) (repo, entry string, srv *gitserver.Server) {
	t.Helper()
	srv = gitserver.New(t)
	base := srv.CreateRepo(t, "base", map[string]string{
		"base/kustomization.yaml": "resources: [cm.yaml]\n",
		"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base}\n",
	})
	entry = base + "//base?ref=" + gitserver.DefaultBranch
	repo = t.TempDir()
	testutil.WriteFiles(t, repo, map[string]string{
		".git/config": "[remote \"origin\"]\n\turl = https://git.example.com/acme/config.git\n",
		"argocd/project.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: p, namespace: argocd}\nspec:\n  sourceRepos: " +
			sourceRepos + "\n  destinations: [{server: \"*\", namespace: web}]\n",
		"argocd/web.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd, finalizers: [resources-finalizer.argocd.argoproj.io]}
spec:
  project: p
  source: {repoURL: https://git.example.com/acme/config.git, path: apps/web}
  destination: {server: https://kubernetes.default.svc, namespace: web}
`,
		"apps/web/kustomization.yaml": "resources:\n- " + entry + "\nnamePrefix: prod-\n",
		"tools/kustomization.yaml":    "namespace: web\nresources:\n- " + entry + "\n",
	})
	return repo, entry, srv
}

// TestRunRemoteBase: without --allow-network a remote base is a note
// naming it, for the Application (once, not again for its walked
// directory) and for a walked kustomization; with it the base is fetched
// and its objects judged; a base the project does not permit is refused
// without being fetched.
func TestRunRemoteBase(t *testing.T) {
	repo, entry, srv := remoteBaseRepo(t, `["https://git.example.com/acme/*", "http://127.0.0.1:*/*"]`)
	rep, notes, err := Run(t.Context(), Options{Paths: []string{repo}, RepoRoot: repo})
	if err != nil {
		t.Fatal(err)
	}
	wantNotes := []string{
		`tools/kustomization.yaml:3: remote base "` + entry + `" is not fetched by tollgate test; pass --allow-network to fetch it`,
		`argocd/web.yaml:1: Application "web" spec.source: remote base "` + entry + `" of apps/web/kustomization.yaml is not fetched by tollgate test; pass --allow-network to fetch it`,
	}
	if d := cmp.Diff(wantNotes, noteLines(notes)); d != "" {
		t.Errorf("notes without --allow-network (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"argocd/project.yaml AppProject/p app=", "argocd/web.yaml Application/web app="}, resultRows(rep)); d != "" {
		t.Errorf("results without --allow-network (-want +got):\n%s", d)
	}
	if n := srv.Fetches("base"); n != 0 {
		t.Errorf("the base was read %d times without --allow-network, want never", n)
	}

	cache, err := source.NewCache(t.TempDir(), source.Options{AllowInsecure: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, notes, err = Run(t.Context(), Options{Paths: []string{repo}, RepoRoot: repo, AllowNetwork: true, RemoteBases: cache})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"apps/web/kustomization.yaml ConfigMap/prod-base app=web",
		"argocd/project.yaml AppProject/p app=",
		"argocd/web.yaml Application/web app=",
		"tools/kustomization.yaml ConfigMap/base app=",
	}
	if d := cmp.Diff(want, resultRows(rep)); d != "" {
		t.Errorf("results with --allow-network (-want +got):\n%s", d)
	}
	if len(notes) != 0 {
		t.Errorf("notes with --allow-network: %q, want none", noteLines(notes))
	}
}

// TestRunRemoteBaseNotPermitted: the Application's project does not
// permit the base's repository: the Application is an error result with
// the repo-server's refusal, though nothing is fetched.
func TestRunRemoteBaseNotPermitted(t *testing.T) {
	repo, entry, srv := remoteBaseRepo(t, `["https://git.example.com/acme/*"]`)
	rep, _, err := Run(t.Context(), Options{Paths: []string{repo + "/argocd", repo + "/apps"}, RepoRoot: repo})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"argocd/project.yaml AppProject/p app=",
		"argocd/web.yaml Application/web app=",
		`argocd/web.yaml Application/web app= ERROR project-source-denied: spec.source: apps/web/kustomization.yaml line 2: remote base "` + entry +
			`": repository ` + srv.RepoURL("base") + ` is not permitted in project "p": add it to the project's spec.sourceRepos`,
	}
	if d := cmp.Diff(want, resultRows(rep)); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
}
