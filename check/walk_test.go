package check

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

func TestDiscover(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, map[string]string{
		"a.yaml":                        "",
		"b.JSON":                        "", // not a manifest: Argo CD matches extensions case-sensitively
		"readme.md":                     "",
		".github/workflows/ci.yaml":     "",
		"sub/.hidden/x.yaml":            "",
		"sub/c.yml":                     "",
		"app/kustomization.yaml":        "resources: [manifests/d.yaml]\n",
		"app/manifests/d.yaml":          "",
		"app/overlay/kustomization.yml": "resources: [..]\n",
		"app/comp/kustomization.yaml":   "kind: Component\n",
		"app/comp/patch.yaml":           "",
		"chart/Chart.yaml":              "",
		"chart/values.yaml":             "",
		"chart/templates/t.yaml":        "{{ bad }}",
		"chart/charts/sub/Chart.yaml":   "",
		"both/Chart.yaml":               "",
		"both/Kustomization":            "",
	})
	root, err := openRepoRoot(repo)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[unitKind]string{unitFile: "file", unitKustomize: "kustomize", unitHelm: "helm"}
	tests := []struct {
		name       string
		paths      []string
		preferHelm bool
		want       []string
		wantNotes  []string
	}{
		{
			name:  "repository",
			paths: []string{repo},
			want: []string{
				"file a.yaml", "kustomize app", "kustomize app/overlay",
				"kustomize both", "helm chart", "file sub/c.yml",
			},
			wantNotes: []string{"app/comp/kustomization.yaml: skipped: a kustomize Component is rendered only as part of a kustomization that uses it"},
		},
		{
			name:       "helm preferred with values",
			paths:      []string{filepath.Join(repo, "both")},
			preferHelm: true,
			want:       []string{"helm both"},
		},
		{
			name:  "explicit files, hidden directory and duplicates",
			paths: []string{filepath.Join(repo, "readme.md"), filepath.Join(repo, ".github"), filepath.Join(repo, "readme.md")},
			want:  []string{"file readme.md", "file .github/workflows/ci.yaml"},
		},
		{
			name:  "inside a chart",
			paths: []string{filepath.Join(repo, "chart/templates"), filepath.Join(repo, "chart/values.yaml")},
			want:  []string{"helm chart"},
		},
		{
			name:  "file inside a kustomization named explicitly",
			paths: []string{filepath.Join(repo, "app/manifests/d.yaml")},
			want:  []string{"file app/manifests/d.yaml"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			units, notes, err := discover(root, tt.paths, tt.preferHelm)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, u := range units {
				if u.root != root.given || u.prefix != "" {
					t.Errorf("unit %+v: want root %s and no prefix", u, root.given)
				}
				got = append(got, kinds[u.kind]+" "+u.rel)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("units mismatch (-want +got):\n%s", diff)
			}
			var gotNotes []string
			for _, n := range notes {
				gotNotes = append(gotNotes, n.String())
			}
			if diff := cmp.Diff(tt.wantNotes, gotNotes); diff != "" {
				t.Errorf("notes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiscoverOutsideRoot(t *testing.T) {
	repo, other := t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, other, map[string]string{"x/a.yaml": "", "x/k/kustomization.yaml": "", "y.yaml": ""})
	root, err := openRepoRoot(repo)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, filepath.Join(other, "x"))
	if err != nil {
		t.Fatal(err)
	}
	// The second spelling of x/a.yaml is the same file and is dropped.
	units, _, err := discover(root, []string{rel, filepath.Join(other, "x", "a.yaml"), filepath.Join(other, "y.yaml")}, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range units {
		got = append(got, fmt.Sprintf("%d %s", u.kind, u.display(u.rel)))
	}
	want := []string{
		fmt.Sprintf("%d %s", unitFile, filepath.ToSlash(filepath.Join(rel, "a.yaml"))),
		fmt.Sprintf("%d %s", unitKustomize, filepath.ToSlash(filepath.Join(rel, "k"))),
		fmt.Sprintf("%d %s", unitFile, filepath.ToSlash(filepath.Join(other, "y.yaml"))),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("units mismatch (-want +got):\n%s", diff)
	}
}
