package check

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// TestSignatureNote: an AppProject with signatureKeys, among the files or
// given with --project, gets one note saying tollgate test does not verify
// commit signatures; without one there is none.
func TestSignatureNote(t *testing.T) {
	const note = "spec.signatureKeys: Git commit signatures are verified by the controller only, not by tollgate test"
	project := func(name, keys string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: " + name + ", namespace: argocd}\n" +
			"spec:\n  sourceRepos: ['*']\n  destinations: [{server: '*', namespace: '*'}]\n" + keys
	}
	signed := "  signatureKeys: [{keyID: 4AEE18F83AFDEB23}]\n"
	tests := []struct {
		name     string
		files    map[string]string
		projects []string
		want     []string
	}{
		{name: "no signatureKeys", files: map[string]string{"p.yaml": project("plain", "")}},
		{name: "empty signatureKeys", files: map[string]string{"p.yaml": project("plain", "  signatureKeys: []\n")}},
		{
			name:  "one project",
			files: map[string]string{"p.yaml": project("payments", signed), "q.yaml": project("plain", "")},
			want:  []string{`AppProject "payments" sets ` + note},
		},
		{
			name:  "several projects, one note",
			files: map[string]string{"p.yaml": project("payments", signed), "q.yaml": project("shop", signed) + "---\n" + project("payments", signed)},
			want:  []string{`AppProjects "payments", "shop" set ` + note},
		},
		{
			name:     "a --project file",
			files:    map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n"},
			projects: []string{"projects/p.yaml"},
			want:     []string{`AppProject "payments" sets ` + note},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo, outside := t.TempDir(), t.TempDir()
			testutil.WriteFiles(t, repo, tt.files)
			testutil.WriteFiles(t, outside, map[string]string{"projects/p.yaml": project("payments", signed)})
			var projects []string
			for _, p := range tt.projects {
				projects = append(projects, filepath.Join(outside, p))
			}
			_, notes, err := Run(t.Context(), Options{Paths: []string{repo}, RepoRoot: repo, Projects: projects})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, noteLines(notes)); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}
