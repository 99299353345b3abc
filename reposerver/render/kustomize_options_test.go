package render

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
)

func TestKustomizerOptions(t *testing.T) {
	tests := []struct {
		options string
		check   func(*krusty.Options) bool
		wantErr string
	}{
		{options: "", check: func(o *krusty.Options) bool {
			return o.LoadRestrictions == types.LoadRestrictionsRootOnly && o.Reorder == krusty.ReorderOptionUnspecified && !o.AddManagedbyLabel
		}},
		{options: "--load-restrictor LoadRestrictionsNone", check: func(o *krusty.Options) bool { return o.LoadRestrictions == types.LoadRestrictionsNone }},
		{options: "--load-restrictor=LoadRestrictionsNone --reorder=none", check: func(o *krusty.Options) bool {
			return o.LoadRestrictions == types.LoadRestrictionsNone && o.Reorder == krusty.ReorderOptionNone
		}},
		{options: "  --reorder legacy  --enable-managedby-label --stack-trace", check: func(o *krusty.Options) bool {
			return o.Reorder == krusty.ReorderOptionLegacy && o.AddManagedbyLabel
		}},
		{options: "--load-restrictor", wantErr: "argocd-cm kustomize.buildOptions --load-restrictor is not supported: it needs a value"},
		{options: "--load-restrictor LoadRestrictionsEverywhere", wantErr: "argocd-cm kustomize.buildOptions --load-restrictor LoadRestrictionsEverywhere is not supported: the load restrictor is LoadRestrictionsRootOnly or LoadRestrictionsNone"},
		{options: "--enable-helm --helm-command /usr/local/bin/helm --helm-debug", check: func(o *krusty.Options) bool {
			return !o.PluginConfig.HelmConfig.Enabled // krusty's own generator stays off
		}},
		{options: "--helm-kube-version", wantErr: "--helm-kube-version is not supported: it needs a value"},
		{options: "--enable-helm=maybe", wantErr: "--enable-helm=maybe is not supported: its value is true or false"},
		{options: "--load-restrictor LoadRestrictionsNone --enable-alpha-plugins", wantErr: "argocd-cm kustomize.buildOptions --enable-alpha-plugins is not supported: it would run programs or containers"},
		{options: "--enable-exec", wantErr: "--enable-exec is not supported: it would run programs"},
		{options: "--network", wantErr: "--network is not supported: it would run programs or containers"},
		{options: "--frobnicate", wantErr: "argocd-cm kustomize.buildOptions --frobnicate is not supported: tollgate does not know this kustomize build flag"},
	}
	for _, tt := range tests {
		t.Run(tt.options, func(t *testing.T) {
			o, _, err := kustomizerOptions(tt.options)
			if tt.wantErr != "" {
				var ue *UnsupportedError
				if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want an *UnsupportedError containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(o) {
				t.Errorf("options %+v", o)
			}
		})
	}
}

// TestBuildKustomizeLoadRestrictorNone: with --load-restrictor
// LoadRestrictionsNone a kustomization reads a file of another directory
// of its repository, as Argo CD's kustomize does; without it that is
// kustomize's own refusal, and with it a file outside the repository is
// still refused.
func TestBuildKustomizeLoadRestrictorNone(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"shared/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\n",
		"app/kustomization.yaml":    "resources: [../shared/cm.yaml]\n",
		"escape/kustomization.yaml": "resources: [../../outside.yaml]\n",
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(root), "outside.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: outside}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(t.Context(), root, "app", Options{}, Limits{}); err == nil || !strings.Contains(err.Error(), "security; file") {
		t.Errorf("without the option: error = %v, want kustomize's load restriction", err)
	}
	none := Options{KustomizeBuildOptions: "--load-restrictor LoadRestrictionsNone"}
	res, err := Build(t.Context(), root, "app", none, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Documents) != 1 || fieldAt(res.Documents[0].Object, "metadata.name") != "shared" {
		t.Errorf("documents %v, want the shared ConfigMap", res.Documents)
	}
	if _, err := Build(t.Context(), root, "escape", none, Limits{}); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("a file outside the repository: error = %v, want %v", err, ErrOutsideRoot)
	}
}
