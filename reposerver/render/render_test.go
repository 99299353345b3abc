package render

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuildDetectsKind(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "both/Chart.yaml", "apiVersion: v2\nname: both\nversion: 0.1.0\n")
	mustWrite(t, root, "both/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-helm\n")
	mustWrite(t, root, "both/kustomization.yml", "resources:\n  - cm.yaml\n")
	mustWrite(t, root, "both/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-kustomize\n")
	mustWrite(t, root, "plain/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n")
	tests := []struct {
		name     string
		dir      string
		opts     Options
		wantKind string
		wantName string
	}{
		{"kustomization wins by default", "both", Options{}, KindKustomize, "from-kustomize"},
		{"helm options pick the chart", "both", Options{Helm: &HelmOptions{}}, KindHelm, "from-helm"},
		{"plain directory", "plain", Options{}, KindDirectory, "plain"},
		{"absolute dir inside root", root + "/plain", Options{}, KindDirectory, "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Build(t.Context(), root, tt.dir, tt.opts, Limits{})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			got := []string{res.Kind}
			for _, d := range res.Documents {
				got = append(got, fieldAt(d.Object, "metadata.name").(string))
			}
			if diff := cmp.Diff([]string{tt.wantKind, tt.wantName}, got); diff != "" {
				t.Errorf("kind and names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildKustomizeKeepsRequestedOriginAnnotations(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "app/kustomization.yaml", "buildMetadata: [originAnnotations]\nresources:\n  - cm.yaml\n")
	mustWrite(t, root, "app/cm.yaml", "# settings\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n")
	res, err := Build(t.Context(), root, "app", Options{}, Limits{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	want := []docRef{{File: "app/cm.yaml", Line: 2, Kind: "ConfigMap", Name: "settings"}}
	if diff := cmp.Diff(want, refs(res.Documents)); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
	if got := fieldAt(res.Documents[0].Object, "metadata.annotations"); got == nil {
		t.Error("origin annotation the kustomization asked for was stripped")
	}
}

func TestGuarded(t *testing.T) {
	t.Run("panic becomes an error", func(t *testing.T) {
		_, _, err := guarded(t.Context(), func() ([]Document, []Note, error) {
			var m map[string]int
			m["boom"]++
			return nil, nil, nil
		})
		if !errors.Is(err, errPanic) || !strings.Contains(err.Error(), "assignment to entry in nil map") {
			t.Errorf("error = %v, want errPanic with the panic value", err)
		}
	})
	t.Run("cancelled context returns early", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		release := make(chan struct{})
		defer close(release)
		cancel()
		_, _, err := guarded(ctx, func() ([]Document, []Note, error) {
			<-release
			return nil, nil, nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want context.Canceled", err)
		}
	})
	t.Run("result passes through", func(t *testing.T) {
		docs, notes, err := guarded(t.Context(), func() ([]Document, []Note, error) {
			return []Document{{File: "a.yaml"}}, []Note{{File: "b.yaml"}}, nil
		})
		if err != nil || len(docs) != 1 || len(notes) != 1 {
			t.Errorf("got %v %v %v", docs, notes, err)
		}
	})
}

func TestBuildCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Build(ctx, "testdata/directory", "app", Options{}, Limits{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}
