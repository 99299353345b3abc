package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

func TestMergeSourceOverrides(t *testing.T) {
	base := v1alpha1.ApplicationSource{
		RepoURL: "https://git.example.com/team.git", Path: "apps/web", TargetRevision: "main",
		Helm: &v1alpha1.ApplicationSourceHelm{ReleaseName: "web", ValueFiles: []string{"values.yaml"}},
	}
	tests := []struct {
		name     string
		files    map[string]string
		instance string
		want     func(s *v1alpha1.ApplicationSource)
		wantErr  string
	}{
		{name: "no override files", instance: "web", want: func(*v1alpha1.ApplicationSource) {}},
		{
			// argocd-image-updater's write-back file.
			name:     "shared file then the Application's own",
			instance: "web",
			files: map[string]string{
				".argocd-source.yaml":     "helm:\n  parameters:\n  - name: image.tag\n    value: v1\n  valueFiles: [values.yaml, prod.yaml]\n",
				".argocd-source-web.yaml": "helm:\n  parameters:\n  - name: image.tag\n    value: v2\n",
				".argocd-source-api.yaml": "helm:\n  releaseName: api\n",
			},
			want: func(s *v1alpha1.ApplicationSource) {
				s.Helm.Parameters = []v1alpha1.HelmParameter{{Name: "image.tag", Value: "v2"}}
				s.Helm.ValueFiles = []string{"values.yaml", "prod.yaml"}
			},
		},
		{
			name:     "an Application outside the control-plane namespace reads namespace_name",
			instance: "team_web",
			files: map[string]string{
				".argocd-source-web.yaml":      "helm:\n  releaseName: wrong\n",
				".argocd-source-team_web.yaml": "helm:\n  releaseName: right\n",
			},
			want: func(s *v1alpha1.ApplicationSource) { s.Helm.ReleaseName = "right" },
		},
		{
			name:     "what is fetched cannot be overridden",
			instance: "web",
			files: map[string]string{
				".argocd-source.yaml": "repoURL: https://evil.example.com/x.git\npath: /\ntargetRevision: v0\nchart: other\nkustomize:\n  namePrefix: p-\n",
			},
			want: func(s *v1alpha1.ApplicationSource) {
				s.Kustomize = &v1alpha1.ApplicationSourceKustomize{NamePrefix: "p-"}
			},
		},
		{
			// Argo CD decodes the patched document over the source: a
			// removed field keeps its value, an empty file changes nothing.
			name:     "null removes nothing",
			instance: "web",
			files:    map[string]string{".argocd-source.yaml": "helm:\n  releaseName: null\n", ".argocd-source-web.yaml": ""},
			want:     func(*v1alpha1.ApplicationSource) {},
		},
		{
			name:     "a directory of that name is skipped",
			instance: "web",
			files:    map[string]string{".argocd-source.yaml/x": "y"},
			want:     func(*v1alpha1.ApplicationSource) {},
		},
		{
			name:     "malformed YAML names the file",
			instance: "web",
			files:    map[string]string{".argocd-source-web.yaml": "helm: [unclosed\n"},
			wantErr:  "spec.source: override file apps/web/.argocd-source-web.yaml: ",
		},
		{
			name:     "a field of the wrong type names the file",
			instance: "web",
			files:    map[string]string{".argocd-source.yaml": "helm: 3\n"},
			wantErr:  "spec.source: override file apps/web/.argocd-source.yaml: ",
		},
		{
			name:     "too large",
			instance: "web",
			files:    map[string]string{".argocd-source.yaml": "# " + strings.Repeat("x", maxOverrideFileBytes) + "\n"},
			wantErr:  "file too large",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, body := range tt.files {
				p := filepath.Join(root, "apps/web", name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			src := *base.DeepCopy()
			got, err := MergeSourceOverrides(root, AppSource{Field: "spec.source", Source: src}, tt.instance)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := *base.DeepCopy()
			tt.want(&want)
			if d := cmp.Diff(want, got.Source); d != "" {
				t.Errorf("merged source (-want +got):\n%s", d)
			}
			if d := cmp.Diff(base, src); d != "" {
				t.Errorf("the Application's source changed (-before +after):\n%s", d)
			}
		})
	}
}

func TestMergeSourceOverridesSymlinkOutside(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.yaml")
	if err := os.WriteFile(outside, []byte("helm:\n  releaseName: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, SourceOverrideFile)); err != nil {
		t.Fatal(err)
	}
	_, err := MergeSourceOverrides(root, AppSource{Field: "spec.source", Source: v1alpha1.ApplicationSource{Path: "."}}, "web")
	if err == nil || !strings.Contains(err.Error(), "override file .argocd-source.yaml") || !strings.Contains(err.Error(), ErrOutsideRoot.Error()) {
		t.Fatalf("err = %v, want the file named and %v", err, ErrOutsideRoot)
	}
}

func TestInstanceNameVariables(t *testing.T) {
	// The release name is the name; ARGOCD_APP_NAME the instance name.
	src := AppSource{Field: "spec.source", Source: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{
		Parameters: []v1alpha1.HelmParameter{{Name: "app", Value: "$ARGOCD_APP_NAME"}},
	}}}
	opts, err := ApplicationOptions(AppInfo{Name: "team_web", Namespace: "web"}, src, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.AppName != "web" || opts.Helm.Parameters[0].Value != "team_web" {
		t.Errorf("AppName = %q, ARGOCD_APP_NAME = %q; want web and team_web", opts.AppName, opts.Helm.Parameters[0].Value)
	}
}
