package render

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	baseEntry   = "https://git.example.com/org/base.git//base?ref=v1"
	commonEntry = "github.com/org/common//shared?ref=v2"
)

// remoteRepos writes a repository whose overlay names a remote base, and
// the checkouts of that base (which names a remote base of its own) and of
// the nested one: what the repo-server would have fetched.
func remoteRepos(t *testing.T, overlay string) (root string, bases map[string]RemoteBase) {
	t.Helper()
	root, base, common := t.TempDir(), t.TempDir(), t.TempDir()
	mustWrite(t, root, "apps/web/kustomization.yaml", overlay)
	mustWrite(t, root, "apps/web/patch.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n")
	mustWrite(t, base, "base/kustomization.yaml", "resources:\n- deploy.yaml\n- "+commonEntry+"\n")
	mustWrite(t, base, "base/deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n")
	mustWrite(t, common, "shared/kustomization.yaml", "configMapGenerator:\n- name: shared\n  literals: [a=b]\ngeneratorOptions:\n  disableNameSuffixHash: true\n")
	return root, map[string]RemoteBase{
		baseEntry:   {Root: base, Path: "base", RepoURL: "https://git.example.com/org/base.git", Ref: "v1"},
		commonEntry: {Root: common, Path: "shared", RepoURL: "https://github.com/org/common", Ref: "v2"},
	}
}

// TestFindRemote: the remote Git bases of a kustomization graph, its
// local bases and components and the Application's components included,
// each once; remote files, local files of a remote-looking name and what
// does not parse are left to the build. The charts of helmCharts to pull
// are those with a repo that are not in their chart home.
func TestFindRemote(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "apps/web/kustomization.yaml", "resources:\n- ../base\n- https://raw.githubusercontent.com/org/repo/main/x.yaml\n- github.com/org/local.yaml\n- https://host?ref=x\nbases:\n- "+baseEntry+"\n")
	mustWrite(t, root, "apps/web/github.com/org/local.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n")
	mustWrite(t, root, "apps/base/kustomization.yaml", "resources:\n- "+baseEntry+"\ncomponents:\n- ../comp\n"+
		"helmGlobals: {chartHome: vendor}\nhelmCharts:\n- {name: web, repo: https://charts.example.com, version: 1.0.0}\n- {name: db, repo: oci://r.example.com/charts, devel: true}\n"+
		"- {name: kept, repo: https://charts.example.com, version: 2.0.0}\n- {name: local}\n")
	mustWrite(t, root, "apps/base/vendor/kept-2.0.0/kept/Chart.yaml", "name: kept\n")
	mustWrite(t, root, "apps/comp/kustomization.yaml", "kind: Component\ncomponents:\n- git@git.example.com:org/comp.git//c\n")
	mustWrite(t, root, "apps/broken/kustomization.yaml", "resources: [\n")
	opts := Options{Kustomize: &KustomizeOptions{Components: []string{"ssh://git@git.example.com/org/extra//x?version=v3", "../broken"}}}
	found, err := FindRemote(root, "apps/web", opts, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got := found.Bases
	want := []RemoteEntry{
		{Entry: "ssh://git@git.example.com/org/extra//x?version=v3", File: "apps/web/kustomization.yaml", Spec: GitSpec{RepoURL: "ssh://git@git.example.com/org/extra", Path: "x", Ref: "v3"}},
		{Entry: baseEntry, File: "apps/web/kustomization.yaml", Line: 7, Spec: GitSpec{RepoURL: "https://git.example.com/org/base.git", Path: "base", Ref: "v1"}},
		{Entry: "git@git.example.com:org/comp.git//c", File: "apps/comp/kustomization.yaml", Line: 3, Spec: GitSpec{RepoURL: "git@git.example.com:org/comp.git", Path: "c"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("FindRemote bases (-want +got):\n%s", d)
	}
	wantFiles := []RemoteFile{{URL: "https://raw.githubusercontent.com/org/repo/main/x.yaml", File: "apps/web/kustomization.yaml", Line: 3}}
	if d := cmp.Diff(wantFiles, found.Files); d != "" {
		t.Errorf("FindRemote files (-want +got):\n%s", d)
	}
	wantCharts := []RemoteChart{
		{Repo: "https://charts.example.com", Name: "web", Version: "1.0.0", File: "apps/base/kustomization.yaml", Line: 5},
		{Repo: "oci://r.example.com/charts", Name: "db", Devel: true, File: "apps/base/kustomization.yaml", Line: 5},
	}
	if d := cmp.Diff(wantCharts, found.Charts); d != "" {
		t.Errorf("FindRemote charts (-want +got):\n%s", d)
	}

	// A chain of local bases deeper than the walk goes.
	deep := t.TempDir()
	for i := 0; i <= MaxKustomizationDepth+1; i++ {
		mustWrite(t, deep, fmt.Sprintf("k%d/kustomization.yaml", i), fmt.Sprintf("resources: [../k%d]\n", i+1))
	}
	if _, err := FindRemote(deep, "k0", Options{}, Limits{}); !errors.Is(err, ErrKustomizationGraph) {
		t.Errorf("deep graph: error = %v, want ErrKustomizationGraph", err)
	}
}

// TestBuildRemoteBase builds an overlay on a fetched remote base, itself on
// a fetched remote base: the bases' objects come from their checkouts,
// point at the overlay's kustomization, and carry the origin kustomize
// gives what it clones when the overlay asks for origin annotations.
func TestBuildRemoteBase(t *testing.T) {
	root, bases := remoteRepos(t, "buildMetadata: [originAnnotations]\nresources:\n- "+baseEntry+"\npatches:\n- path: patch.yaml\n")
	res, err := Build(t.Context(), root, "apps/web", Options{RemoteBases: bases}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Documents {
		md := d.Object["metadata"].(map[string]any)
		origin, _ := md["annotations"].(map[string]any)["config.kubernetes.io/origin"].(string)
		got = append(got, fmt.Sprintf("%s/%s %s %q", d.Object["kind"], md["name"], d.File, origin))
	}
	want := []string{
		`ConfigMap/shared apps/web/kustomization.yaml "repo: https://github.com/org/common\nref: v2\nconfiguredIn: shared/kustomization.yaml\nconfiguredBy:\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n"`,
		`Deployment/web apps/web/kustomization.yaml "path: base/deploy.yaml\nrepo: https://git.example.com/org/base.git\nref: v1\n"`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("documents (-want +got):\n%s", d)
	}
	if r := res.Documents[1].Object["spec"].(map[string]any)["replicas"]; fmt.Sprint(r) != "3" {
		t.Errorf("replicas = %v, want 3 from the overlay's patch", r)
	}
}

// TestBuildRemoteBaseRefused: what a remote base may not do, and a remote
// entry the repo-server did not fetch.
func TestBuildRemoteBaseRefused(t *testing.T) {
	t.Run("not fetched", func(t *testing.T) {
		root, bases := remoteRepos(t, "resources:\n- "+baseEntry+"\n")
		delete(bases, commonEntry)
		_, err := Build(t.Context(), root, "apps/web", Options{RemoteBases: bases}, Limits{})
		want := `render kustomize apps/web: https://git.example.com/org/base.git//base/kustomization.yaml line 3: resources entry "` + commonEntry + `": remote references are not allowed: the remote base was not fetched`
		if !errors.Is(err, ErrRemoteReference) || err.Error() != want {
			t.Errorf("error:\n got %v\nwant %s", err, want)
		}
	})
	t.Run("remote file", func(t *testing.T) {
		root, bases := remoteRepos(t, "resources:\n- https://example.com/all.yaml\n")
		_, err := Build(t.Context(), root, "apps/web", Options{RemoteBases: bases}, Limits{})
		want := `render kustomize apps/web: apps/web/kustomization.yaml line 2: resources entry "https://example.com/all.yaml": remote references are not allowed: the remote file was not fetched`
		if !errors.Is(err, ErrRemoteReference) || err.Error() != want {
			t.Errorf("error:\n got %v\nwant %s", err, want)
		}
	})
	t.Run("base reads the repository", func(t *testing.T) {
		root, bases := remoteRepos(t, "resources:\n- "+baseEntry+"\n")
		b := bases[baseEntry]
		rel, err := filepath.Rel(filepath.Join(b.Root, "base"), filepath.Join(root, "apps/web"))
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, b.Root, "base/kustomization.yaml", "resources:\n- "+filepath.ToSlash(rel)+"/patch.yaml\n")
		_, err = Build(t.Context(), root, "apps/web", Options{RemoteBases: bases}, Limits{})
		if !errors.Is(err, ErrOutsideRoot) || !strings.Contains(err.Error(), "a kustomization of remote base https://git.example.com/org/base.git may not read the repository") {
			t.Errorf("error = %v, want ErrOutsideRoot: a base may not read the repository", err)
		}
	})
	t.Run("symlink out of the base", func(t *testing.T) {
		root, bases := remoteRepos(t, "resources:\n- "+baseEntry+"\n")
		b := bases[baseEntry]
		mustWrite(t, b.Root, "base/kustomization.yaml", "resources:\n- link.yaml\n")
		mustSymlink(t, filepath.Join(root, "apps/web/patch.yaml"), filepath.Join(b.Root, "base/link.yaml"))
		_, err := Build(t.Context(), root, "apps/web", Options{RemoteBases: bases}, Limits{})
		if err == nil || !strings.Contains(err.Error(), "outside the repository root") {
			t.Errorf("error = %v, want the symlink out of the base refused", err)
		}
	})
}

// TestBuildRemoteFile: a file a kustomization's resources name by URL is
// read from what the repo-server downloaded, placed at its entry, and
// transformed like the kustomization's own; one not downloaded is
// refused, as is a URL in a field whose files are never downloaded.
func TestBuildRemoteFile(t *testing.T) {
	const url = "https://raw.example.com/org/repo/main/deploy/cm.yaml?x=1"
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml":   "namePrefix: p-\nresources:\n- local.yaml\n- " + url + "\n",
		"app/local.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: local}\n",
		"patch/kustomization.yaml": "resources: [../app]\npatches:\n- path: https://raw.example.com/patch.yaml\n",
	})
	opts := Options{RemoteFiles: map[string][]byte{url: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: remote}\n")}}
	res, err := Build(t.Context(), root, "app", opts, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []docRef{
		{File: "app/local.yaml", Index: 0, Line: 1, Kind: "ConfigMap", Name: "p-local"},
		{File: "app/kustomization.yaml", Index: 0, Line: 4, Kind: "ConfigMap", Name: "p-remote"},
	}
	if d := cmp.Diff(want, refs(res.Documents)); d != "" {
		t.Errorf("documents (-want +got):\n%s", d)
	}
	if _, err := Build(t.Context(), root, "app", Options{}, Limits{}); !errors.Is(err, ErrRemoteReference) ||
		!strings.Contains(err.Error(), `app/kustomization.yaml line 4: resources entry "`+url+`": remote references are not allowed: the remote file was not fetched`) {
		t.Errorf("not downloaded: error %v", err)
	}
	if _, err := Build(t.Context(), root, "patch", opts, Limits{}); !errors.Is(err, ErrRemoteReference) ||
		!strings.Contains(err.Error(), "only the remote files of resources and bases are fetched") {
		t.Errorf("a remote patch: error %v", err)
	}
}
