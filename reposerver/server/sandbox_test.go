package server

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tollgate-dev/tollgate/reposerver/render"
)

func runner(l Limits) *Runner {
	return &Runner{Path: os.Args[0], Env: []string{workerEnv}, Limits: l}
}

// TestBuildMatchesInProcess: the child's result is render.Build's, value
// types included.
func TestBuildMatchesInProcess(t *testing.T) {
	root, _ := filepath.Abs("testdata")
	want, err := render.Build(t.Context(), root, "plain", render.Options{}, render.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	got, err := runner(DefaultLimits()).Build(t.Context(), root, "plain", render.Options{}, render.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(render.Document{})); diff != "" {
		t.Errorf("isolated render differs (-in-process +isolated):\n%s", diff)
	}
	if len(got.Documents) != 2 {
		t.Fatalf("got %d documents, want 2", len(got.Documents))
	}
}

// TestLimits: each hostile input is stopped by the limit it passes, with a
// LimitError naming it, and the runner keeps working afterwards.
func TestLimits(t *testing.T) {
	root, _ := filepath.Abs("testdata")
	helm := render.Options{Helm: &render.HelmOptions{}, AppName: "x", Namespace: "x"}
	tests := []struct {
		name  string
		dir   string
		opts  render.Options
		lim   Limits
		want  LimitError
		ceilg time.Duration
	}{
		{"a chart that loops forever", "loop-chart", helm, Limits{Timeout: 3 * time.Second, MemoryBytes: 1 << 30, OutputBytes: 1 << 20, Objects: 10}, LimitError{Limit: "time", Value: "3s", Work: "render"}, 20 * time.Second},
		{"a chart that allocates without bound", "hog-chart", helm, Limits{Timeout: time.Minute, MemoryBytes: 512 << 20, OutputBytes: 1 << 20, Objects: 10}, LimitError{Limit: "memory", Value: "512 MiB", Work: "render"}, time.Minute},
		{"more output than allowed", "plain", render.Options{}, Limits{Timeout: time.Minute, MemoryBytes: 1 << 30, OutputBytes: 100, Objects: 10}, LimitError{Limit: "output", Value: "0 MiB", Work: "render"}, time.Minute},
		{"more objects than allowed", "plain", render.Options{}, Limits{Timeout: time.Minute, MemoryBytes: 1 << 30, OutputBytes: 1 << 20, Objects: 1}, LimitError{Limit: "objects", Value: "1", Work: "render"}, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := runner(tt.lim).Build(t.Context(), root, tt.dir, tt.opts, render.DefaultLimits())
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("got error %v, want a LimitError", err)
			}
			if diff := cmp.Diff(tt.want, *le); diff != "" {
				t.Errorf("limit (-want +got):\n%s", diff)
			}
			if took := time.Since(start); took > tt.ceilg {
				t.Errorf("took %s, want the limit to stop it within %s", took, tt.ceilg)
			}
		})
	}
	if _, err := runner(DefaultLimits()).Build(t.Context(), root, "plain", render.Options{}, render.DefaultLimits()); err != nil {
		t.Errorf("render after the limits: %v", err)
	}
}

// TestRenderError: an ordinary render error comes back as it would in
// process.
func TestRenderError(t *testing.T) {
	root, _ := filepath.Abs("testdata")
	_, want := render.Build(t.Context(), root, "missing", render.Options{}, render.DefaultLimits())
	_, got := runner(DefaultLimits()).Build(t.Context(), root, "missing", render.Options{}, render.DefaultLimits())
	if want == nil || got == nil || got.Error() != want.Error() {
		t.Errorf("got error %v, want %v", got, want)
	}
}

// BenchmarkBuild compares a render in process with the same render in a
// child process: the difference is the sandbox's cost per render.
func BenchmarkBuild(b *testing.B) {
	root, _ := filepath.Abs("testdata")
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			if _, err := render.Build(b.Context(), root, "plain", render.Options{}, render.DefaultLimits()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("child-process", func(b *testing.B) {
		r := runner(DefaultLimits())
		for b.Loop() {
			if _, err := r.Build(b.Context(), root, "plain", render.Options{}, render.DefaultLimits()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
