package chart_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	helmchart "helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/chartserver"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/chart"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// lockFor writes the Chart.lock `helm dependency update` would write for
// the dependencies of chartYAML resolved to locked (Helm's digest of both).
func lockFor(t *testing.T, chartYAML string, locked []*helmchart.Dependency) string {
	t.Helper()
	var meta helmchart.Metadata
	if err := yaml.Unmarshal([]byte(chartYAML), &meta); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal([2][]*helmchart.Dependency{meta.Dependencies, locked})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	out, err := yaml.Marshal(helmchart.Lock{Digest: "sha256:" + hex.EncodeToString(sum[:]), Dependencies: locked})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// judged is a call of FetchOptions.Permitted.
type judged struct {
	URL string
	OCI bool
}

// permitAll permits every repository.
func permitAll(context.Context, string, bool) (bool, error) { return true, nil }

func TestDependencies(t *testing.T) {
	repo := chartserver.NewRepo("", "")
	defer repo.Close()
	for _, v := range []string{"1.0.0", "1.1.0"} {
		repo.Add("common", v, pkg(t, "common", v, nil), "")
	}
	reg := chartserver.NewRegistry("", "")
	defer reg.Close()
	if err := reg.Push("charts", "api", "2.0.0", pkg(t, "api", "2.0.0", nil)); err != nil {
		t.Fatal(err)
	}
	creds := []reposerver.HelmRepository{{URL: repo.URL, Insecure: true}, {URL: reg.URL, Insecure: true, Template: true}}
	chartYAML := `apiVersion: v2
name: app
version: 0.1.0
dependencies:
- {name: common, version: "^1.0.0", repository: "` + repo.URL + `"}
- {name: api, version: "2.x", repository: "` + reg.URL + `/charts"}
- {name: local, version: "0.1.0", repository: "file://../local"}
- {name: vendored, version: "1.0.0", repository: "https://unreachable.invalid"}
- {name: packed, version: "3.0.0", repository: "https://unreachable.invalid"}
`
	tree := map[string]string{
		"charts/app/Chart.yaml":                     chartYAML,
		"charts/app/charts/vendored-dir/Chart.yaml": "apiVersion: v2\nname: vendored\nversion: 1.0.0\n",
		"charts/app/charts/packed-3.0.0.tgz":        string(pkg(t, "packed", "3.0.0", nil)),
		"charts/local/Chart.yaml":                   "apiVersion: v2\nname: local\nversion: 0.1.0\n",
	}
	ignore := cmpopts.IgnoreFields(chart.Dependency{}, "Archive")

	t.Run("constraints", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, tree)
		var asked []judged
		o := chart.FetchOptions{Repositories: creds, Permitted: func(_ context.Context, repoURL string, oci bool) (bool, error) {
			asked = append(asked, judged{repoURL, oci})
			return true, nil
		}}
		got, err := newCache(t).Dependencies(t.Context(), root, "charts/app", o)
		if err != nil {
			t.Fatal(err)
		}
		// Only the repositories of dependencies to fetch are judged, an
		// OCI registry as one; file:// charts and vendored ones are not.
		if d := cmp.Diff([]judged{{repo.URL, false}, {reg.URL + "/charts", true}}, asked); d != "" {
			t.Errorf("repositories judged (-want +got):\n%s", d)
		}
		want := []chart.Dependency{
			{Name: "common", Version: "1.1.0", Repository: repo.URL},
			{Name: "api", Version: "2.0.0", Repository: reg.URL + "/charts"},
			{Name: "local", Version: "0.1.0", Repository: "file://../local", Dir: "charts/local"},
		}
		if d := cmp.Diff(want, got, ignore); d != "" {
			t.Errorf("dependencies (-want +got):\n%s", d)
		}
		for _, d := range got[:2] {
			if _, err := os.Stat(d.Archive); err != nil {
				t.Errorf("%s archive: %v", d.Name, err)
			}
		}
	})

	t.Run("Chart.lock pins the versions", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, tree)
		writeTree(t, root, map[string]string{"charts/app/Chart.lock": lockFor(t, chartYAML, []*helmchart.Dependency{
			{Name: "common", Version: "1.0.0", Repository: repo.URL},
			{Name: "api", Version: "2.0.0", Repository: reg.URL + "/charts"},
			{Name: "local", Version: "0.1.0", Repository: "file://../local"},
			{Name: "vendored", Version: "1.0.0", Repository: "https://unreachable.invalid"},
			{Name: "packed", Version: "3.0.0", Repository: "https://unreachable.invalid"},
		})})
		got, err := newCache(t).Dependencies(t.Context(), root, "charts/app", chart.FetchOptions{Repositories: creds, Permitted: permitAll})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].Version != "1.0.0" {
			t.Errorf("dependencies = %+v, want common at the locked 1.0.0", got)
		}
	})

	for _, tt := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{
			name:  "a lock out of sync",
			files: map[string]string{"charts/app/Chart.lock": "digest: sha256:0000\ndependencies: []\n"},
			want:  "the lock file (Chart.lock) is out of sync with the dependencies file (Chart.yaml)",
		},
		{
			name:  "a repository named by its local name",
			files: map[string]string{"charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- {name: x, version: 1.0.0, repository: \"@stable\"}\n"},
			want:  `dependency x: repository "@stable" names a Helm repository by its local name`,
		},
		{
			name:  "a file:// dependency outside the repository",
			files: map[string]string{"charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- {name: x, version: 1.0.0, repository: \"file://../../../etc\"}\n"},
			want:  "outside the repository root",
		},
		{
			name:  "no repository",
			files: map[string]string{"charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- {name: x, version: 1.0.0}\n"},
			want:  "charts/app/Chart.yaml: dependency x: it is not in charts/ and names no repository",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tree)
			writeTree(t, root, tt.files)
			_, err := newCache(t).Dependencies(t.Context(), root, "charts/app", chart.FetchOptions{Repositories: creds, Permitted: permitAll})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}

	t.Run("nothing missing needs no network", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, map[string]string{
			"Chart.yaml":              "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- {name: packed, version: 3.0.0, repository: https://unreachable.invalid}\n",
			"charts/packed-3.0.0.tgz": string(pkg(t, "packed", "3.0.0", nil)),
		})
		if got, err := newCache(t).Dependencies(t.Context(), root, ".", chart.FetchOptions{}); err != nil || len(got) != 0 {
			t.Errorf("Dependencies = %v, %v; want none", got, err)
		}
	})
}

// TestDependenciesNotPermitted: a chart with a dependency from a
// repository FetchOptions.Permitted does not permit fails with a message
// naming the dependency, the repository and the project, and nothing is
// fetched, not even the dependencies from permitted repositories (every
// one is judged first). Without Permitted no repository is permitted;
// file:// dependencies need none.
func TestDependenciesNotPermitted(t *testing.T) {
	allowed := chartserver.NewRepo("", "")
	defer allowed.Close()
	allowed.Add("common", "1.0.0", pkg(t, "common", "1.0.0", nil), "")
	other := chartserver.NewRepo("", "")
	defer other.Close()
	other.Add("tool", "1.0.0", pkg(t, "tool", "1.0.0", nil), "")
	creds := []reposerver.HelmRepository{{URL: allowed.URL, Insecure: true}, {URL: other.URL, Insecure: true}}
	tree := map[string]string{
		"charts/app/Chart.yaml": `apiVersion: v2
name: app
version: 0.1.0
dependencies:
- {name: common, version: 1.0.0, repository: "` + allowed.URL + `"}
- {name: tool, version: 1.0.0, repository: "` + other.URL + `"}
`,
	}
	onlyAllowed := func(_ context.Context, repoURL string, _ bool) (bool, error) { return repoURL == allowed.URL, nil }
	for _, tt := range []struct {
		name      string
		permitted func(context.Context, string, bool) (bool, error)
		want      string
	}{
		{
			name:      "a repository the project does not list",
			permitted: onlyAllowed,
			want:      `charts/app/Chart.yaml: dependency tool: repository ` + other.URL + ` is not permitted in project "team-a": add it to the project's spec.sourceRepos, or vendor the chart in charts/`,
		},
		{
			name: "no judge",
			want: `charts/app/Chart.yaml: dependency common: repository ` + allowed.URL + ` is not permitted in project "team-a"`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tree)
			_, err := newCache(t).Dependencies(t.Context(), root, "charts/app", chart.FetchOptions{Repositories: creds, Permitted: tt.permitted, Project: "team-a"})
			var npe *chart.NotPermittedError
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.As(err, &npe) {
				t.Fatalf("err = %v, want a NotPermittedError %q", err, tt.want)
			}
			if a, o := allowed.Requests(), other.Requests(); a != 0 || o != 0 {
				t.Errorf("requests: %d to the permitted repository, %d to the other; want none", a, o)
			}
		})
	}

	t.Run("file:// needs no judge", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, map[string]string{
			"charts/app/Chart.yaml":   "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- {name: local, version: 0.1.0, repository: \"file://../local\"}\n",
			"charts/local/Chart.yaml": "apiVersion: v2\nname: local\nversion: 0.1.0\n",
		})
		got, err := newCache(t).Dependencies(t.Context(), root, "charts/app", chart.FetchOptions{})
		if err != nil || len(got) != 1 || got[0].Dir != "charts/local" {
			t.Errorf("Dependencies = %+v, %v; want the local chart", got, err)
		}
	})
}

// TestDependenciesConfinedToTheCheckout: a Chart.yaml that is a symlink
// out of the checkout is not read (its dependencies would otherwise be
// fetched from a file the tenant does not own).
func TestDependenciesConfinedToTheCheckout(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"Chart.yaml": "apiVersion: v2\nname: x\nversion: 1.0.0\ndependencies:\n- {name: common, version: 1.0.0, repository: https://charts.example.com}\n"})
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "Chart.yaml"), filepath.Join(root, "app", "Chart.yaml")); err != nil {
		t.Fatal(err)
	}
	deps, err := newCache(t).Dependencies(t.Context(), root, "app", chart.FetchOptions{})
	if err == nil || !strings.Contains(err.Error(), "read app/Chart.yaml") {
		t.Fatalf("Dependencies = %v, %v; want the Chart.yaml outside the checkout refused", deps, err)
	}
}
