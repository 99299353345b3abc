package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/render"
	"github.com/tollgate-dev/tollgate/engine/source"
)

func TestRenderOptions(t *testing.T) {
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook"}}
	app.Spec.Destination.Namespace = "web"
	tests := []struct {
		name    string
		src     v1alpha1.ApplicationSource
		want    render.Options
		wantErr string
	}{
		{
			name: "plain",
			want: render.Options{Namespace: "web", AppName: "guestbook"},
		},
		{
			name: "directory, kustomize and helm options",
			src: v1alpha1.ApplicationSource{
				Directory: &v1alpha1.ApplicationSourceDirectory{Recurse: true, Include: "*.yaml"},
				Kustomize: &v1alpha1.ApplicationSourceKustomize{NamePrefix: "p-", Images: []string{"web=web:2"}},
				Helm: &v1alpha1.ApplicationSourceHelm{
					ValueFiles: []string{"prod.yaml"}, ReleaseName: "gb",
					Parameters:   []v1alpha1.HelmParameter{{Name: "a", Value: "1", ForceString: true}},
					ValuesObject: &runtime.RawExtension{Raw: []byte(`{"replicas":3}`)},
				},
			},
			want: render.Options{
				Namespace: "web", AppName: "guestbook",
				Directory: &render.DirectoryOptions{Recurse: true, Include: "*.yaml"},
				Kustomize: &render.KustomizeOptions{NamePrefix: "p-", Images: []string{"web=web:2"}},
				Helm: &render.HelmOptions{
					ValueFiles: []string{"prod.yaml"}, ReleaseName: "gb",
					Parameters:   []render.HelmParameter{{Name: "a", Value: "1", ForceString: true}},
					ValuesObject: map[string]any{"replicas": float64(3)},
				},
			},
		},
		{name: "plugin", src: v1alpha1.ApplicationSource{Plugin: &runtime.RawExtension{Raw: []byte(`{"name":"cmp"}`)}}, wantErr: "config management plugins are not supported"},
		{name: "jsonnet", src: v1alpha1.ApplicationSource{Directory: &v1alpha1.ApplicationSourceDirectory{Jsonnet: &runtime.RawExtension{Raw: []byte(`{"tlas":[]}`)}}}, wantErr: "directory.jsonnet is not supported"},
		{name: "kustomize patches", src: v1alpha1.ApplicationSource{Kustomize: &v1alpha1.ApplicationSourceKustomize{Patches: []v1alpha1.KustomizePatch{{Patch: "x"}}}}, wantErr: "kustomize.patches is not supported"},
		{name: "helm file parameters", src: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{FileParameters: []v1alpha1.HelmFileParameter{{Name: "a", Path: "b"}}}}, wantErr: "helm.fileParameters is not supported"},
		{name: "bad valuesObject", src: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{ValuesObject: &runtime.RawExtension{Raw: []byte(`[1]`)}}}, wantErr: "decode helm.valuesObject"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := renderOptions(app, tc.src)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestResolveValueFiles(t *testing.T) {
	chartRepo := writeFiles(t, map[string]string{
		"chart/values-prod.yaml": "replicas: 2\nimage: {tag: local}\n",
		"shared/common.yaml":     "team: web\n",
	})
	valuesRepo := writeFiles(t, map[string]string{"envs/prod.yaml": "image: {tag: \"1.2\"}\nregion: eu\n"})
	outside := writeFiles(t, map[string]string{"secret.yaml": "stolen: true\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(valuesRepo, "envs", "escape.yaml")); err != nil {
		t.Fatal(err)
	}
	chart := fetched{source: v1alpha1.ApplicationSource{Path: "chart"}, checkout: source.Checkout{Dir: chartRepo}}
	refs := map[string]fetched{"values": {source: v1alpha1.ApplicationSource{Ref: "values"}, checkout: source.Checkout{Dir: valuesRepo}}}
	tests := []struct {
		name          string
		helm          render.HelmOptions
		ignoreMissing bool
		want          render.HelmOptions
		wantErr       string
	}{
		{
			name: "no ref, nothing to do",
			helm: render.HelmOptions{ValueFiles: []string{"values-prod.yaml"}},
			want: render.HelmOptions{ValueFiles: []string{"values-prod.yaml"}},
		},
		{
			name: "ref files merged in order with local, absolute, values and valuesObject",
			helm: render.HelmOptions{
				ValueFiles:   []string{"values-prod.yaml", "/shared/common.yaml", "$values/envs/prod.yaml"},
				Values:       "region: us\n",
				ValuesObject: map[string]any{"extra": true},
				Parameters:   []render.HelmParameter{{Name: "x", Value: "1"}},
			},
			want: render.HelmOptions{
				ValuesObject: map[string]any{
					"replicas": float64(2), "team": "web", "region": "us", "extra": true,
					"image": map[string]any{"tag": "1.2"},
				},
				Parameters: []render.HelmParameter{{Name: "x", Value: "1"}},
			},
		},
		{
			name:          "missing files skipped with ignoreMissingValueFiles",
			helm:          render.HelmOptions{ValueFiles: []string{"nope.yaml", "$values/envs/prod.yaml"}},
			ignoreMissing: true,
			want:          render.HelmOptions{ValuesObject: map[string]any{"image": map[string]any{"tag": "1.2"}, "region": "eu"}},
		},
		{name: "missing file", helm: render.HelmOptions{ValueFiles: []string{"$values/envs/none.yaml"}}, wantErr: "read helm value file $values/envs/none.yaml"},
		{name: "unknown ref", helm: render.HelmOptions{ValueFiles: []string{"$other/x.yaml"}}, wantErr: `no source of the application has ref "other"`},
		{name: "symlink out of the repository", helm: render.HelmOptions{ValueFiles: []string{"$values/envs/escape.yaml"}}, wantErr: "read helm value file $values/envs/escape.yaml: symlink target is outside the repository root"},
		{name: "dot-dot out of the repository", helm: render.HelmOptions{ValueFiles: []string{"$values/../../secret.yaml"}}, wantErr: "read helm value file $values/../../secret.yaml: outside the repository root"},
		{name: "dot-dot out of the repository, ignoring missing files", helm: render.HelmOptions{ValueFiles: []string{"../../secret.yaml"}}, ignoreMissing: true, wantErr: "outside the repository root"},
		{name: "remote value file", helm: render.HelmOptions{ValueFiles: []string{"https://example.com/v.yaml", "$values/envs/prod.yaml"}}, wantErr: "remote value files are not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := chart
			f.source.Helm = &v1alpha1.ApplicationSourceHelm{IgnoreMissingValueFiles: tc.ignoreMissing}
			h := tc.helm
			err := (&Reconciler{}).resolveValueFiles(f, refs, &h)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, h); diff != "" {
				t.Errorf("helm options (-want +got):\n%s", diff)
			}
		})
	}
}
