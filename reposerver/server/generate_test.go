package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/appset"
	"github.com/tollgate-dev/tollgate/reposerver/source"
)

// configRepo is the only repository the git generators of these tests
// read.
const configRepo = "https://git.example.com/config.git"

// slowRepo serves dir as configRepo after delay, counting checkouts and
// the repositories judged.
type slowRepo struct {
	dir       string
	delay     time.Duration
	checkouts atomic.Int32
	permits   atomic.Int32
}

func (r *slowRepo) Checkout(ctx context.Context, repoURL, _ string) (string, error) {
	r.checkouts.Add(1)
	if strings.Contains(repoURL, "huge") {
		return "", &source.LimitError{Limit: "size", Value: "16 MiB"}
	}
	if repoURL != configRepo {
		return "", fmt.Errorf("fetch %s: %w", repoURL, reposerver.ErrRepoUnreachable)
	}
	select {
	case <-time.After(r.delay):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return r.dir, nil
}

func (r *slowRepo) permit(_ context.Context, field, repoURL string) error {
	r.permits.Add(1)
	if strings.Contains(repoURL, "forbidden") {
		return fmt.Errorf("%s: repository %s is not permitted", field, repoURL)
	}
	return nil
}

func newSlowRepo(t *testing.T, delay time.Duration) *slowRepo {
	t.Helper()
	dir := t.TempDir()
	for _, team := range []string{"red", "blue"} {
		if err := os.MkdirAll(filepath.Join(dir, "teams", team), 0o755); err != nil {
			t.Fatal(err)
		}
		cfg := fmt.Sprintf("namespace: %s-apps\n", team)
		if err := os.WriteFile(filepath.Join(dir, "teams", team, "config.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &slowRepo{dir: dir, delay: delay}
}

func (r *slowRepo) sources() appset.Sources {
	cluster := corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-prod", Namespace: "argocd", Labels: map[string]string{reposerver.SecretTypeLabel: reposerver.SecretTypeCluster, "env": "prod"}},
		Data:       map[string][]byte{"name": []byte("prod"), "server": []byte("https://prod.example.com")},
	}
	return appset.Sources{
		Git:      r,
		Permit:   r.permit,
		Clusters: func(context.Context) ([]corev1.Secret, error) { return []corev1.Secret{cluster}, nil },
	}
}

func decodeSet(t *testing.T, manifest string) *v1alpha1.ApplicationSet {
	t.Helper()
	var set v1alpha1.ApplicationSet
	if err := yaml.UnmarshalStrict([]byte(manifest), &set); err != nil {
		t.Fatalf("decode ApplicationSet: %v", err)
	}
	return &set
}

// setWith is an ApplicationSet with generators and a template whose name
// is name.
func setWith(t *testing.T, generators, name string) *v1alpha1.ApplicationSet {
	t.Helper()
	return decodeSet(t, `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: apps, namespace: argocd}
spec:
  goTemplate: true
  generators:
`+generators+`
  template:
    metadata: {name: '`+name+`'}
    spec:
      project: default
      source: {repoURL: `+configRepo+`, path: apps}
      destination: {server: https://kubernetes.default.svc, namespace: apps}
`)
}

// everyGenerator uses a git files, a clusters and a list generator in a
// matrix.
const everyGenerator = `  - matrix:
      generators:
      - git:
          repoURL: ` + configRepo + `
          files: [{path: "teams/*/config.yaml"}]
      - clusters: {selector: {matchLabels: {env: prod}}}
  - list:
      elements: [{name: one}, {name: two, replicas: 2}]`

// TestGenerateMatchesInProcess: the child generates what appset.Generate
// generates in process, asking the parent for each repository it judges
// and checks out.
func TestGenerateMatchesInProcess(t *testing.T) {
	set := setWith(t, everyGenerator, `{{ coalesce .name (printf "%s-%s" .path.basename .nameNormalized) }}`)
	in := newSlowRepo(t, 0)
	want, err := appset.Generate(t.Context(), set, in.sources())
	if err != nil {
		t.Fatal(err)
	}
	isolated := newSlowRepo(t, 0)
	isolated.dir = in.dir
	got, err := runner(DefaultLimits()).Generate(t.Context(), set, isolated.sources())
	if err != nil {
		t.Fatal(err)
	}
	// The Applications cross the process boundary as JSON, their wire
	// form, as they cross it from a repo-server.
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	want = nil
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("isolated generation differs (-in-process +isolated):\n%s", diff)
	}
	if len(got) != 4 {
		t.Errorf("got %d Applications, want 4", len(got))
	}
	if p, c := isolated.permits.Load(), isolated.checkouts.Load(); p != 1 || c != 1 {
		t.Errorf("the child asked %d judgments and %d checkouts, want 1 and 1", p, c)
	}
}

// TestGenerateApplicationsErrors: an error comes back with its message, its
// ApplicationSet reason and whether a repository was unreachable; a
// repository the parent refuses is never checked out.
func TestGenerateApplicationsErrors(t *testing.T) {
	gitGen := func(repoURL string) string {
		return "  - git:\n      repoURL: " + repoURL + "\n      directories: [{path: 'teams/*'}]"
	}
	tests := []struct {
		name, generators, template string
		reason                     string
		unreachable, fetchLimit    bool
		checkouts                  int32
	}{
		{"a template that does not parse", everyGenerator, `{{ .name `, v1alpha1.ApplicationSetReasonRenderTemplateParamsError, false, false, 1},
		{"a template that fails", "  - list: {elements: [{a: 1}]}", `{{ fail "no" }}`, v1alpha1.ApplicationSetReasonRenderTemplateParamsError, false, false, 0},
		{"a repository the parent refuses", gitGen("https://git.example.com/forbidden.git"), `{{ .path.basename }}`, v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError, false, false, 0},
		{"an unreachable repository", gitGen("https://git.example.com/gone.git"), `{{ .path.basename }}`, v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError, true, false, 1},
		{"a repository past the fetch limit", gitGen("https://git.example.com/huge.git"), `{{ .path.basename }}`, v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError, false, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := setWith(t, tt.generators, tt.template)
			_, want := appset.Generate(t.Context(), set, newSlowRepo(t, 0).sources())
			repo := newSlowRepo(t, 0)
			_, got := runner(DefaultLimits()).Generate(t.Context(), set, repo.sources())
			if want == nil || got == nil || got.Error() != want.Error() {
				t.Fatalf("got error %v, want %v", got, want)
			}
			if r := appset.ReasonOf(got); r != tt.reason {
				t.Errorf("reason %q, want %q", r, tt.reason)
			}
			if u := errors.Is(got, reposerver.ErrRepoUnreachable); u != tt.unreachable {
				t.Errorf("unreachable: %v, want %v", u, tt.unreachable)
			}
			var fl *source.LimitError
			if f := errors.As(got, &fl); f != tt.fetchLimit {
				t.Errorf("fetch limit: %v, want %v", f, tt.fetchLimit)
			}
			if c := repo.checkouts.Load(); c != tt.checkouts {
				t.Errorf("%d checkouts, want %d", c, tt.checkouts)
			}
		})
	}
}

// TestGenerateLimits: a hostile template is stopped by the limit it
// passes, with a LimitError naming it, and the time the parent spends on
// checkouts does not count against the time limit.
func TestGenerateLimits(t *testing.T) {
	list := "  - list: {elements: [{name: a}]}"
	tests := []struct {
		name       string
		generators string
		template   string
		lim        Limits
		want       LimitError
		ceiling    time.Duration
	}{
		{"loops", list, `{{ range until 2000 }}{{ range until 2000 }}{{ range until 2000 }}{{ end }}{{ end }}{{ end }}x`,
			Limits{Timeout: 2 * time.Second, MemoryBytes: 1 << 30, OutputBytes: 1 << 20, Objects: 10}, LimitError{Limit: "time", Value: "2s", Work: workGeneration}, 20 * time.Second},
		{"allocates", list, `{{ $s := repeat 1000000 "x" }}{{ range until 4000 }}{{ $s = print $s $s }}{{ end }}x`,
			Limits{Timeout: time.Minute, MemoryBytes: 256 << 20, OutputBytes: 1 << 20, Objects: 10}, LimitError{Limit: "memory", Value: "256 MiB", Work: workGeneration}, time.Minute},
		// One allocation past the limit, which RLIMIT_DATA alone lets
		// through: the parent sees the child's resident memory.
		{"allocates at once", list, `{{ $s := repeat 1000000 "x" }}{{ $s = repeat 1000 $s }}n{{ len $s }}`,
			Limits{Timeout: time.Minute, MemoryBytes: 512 << 20, OutputBytes: 1 << 20, Objects: 10}, LimitError{Limit: "memory", Value: "512 MiB", Work: workGeneration}, time.Minute},
		{"answers too much", list, `{{ repeat 200000 "x" }}`,
			Limits{Timeout: time.Minute, MemoryBytes: 1 << 30, OutputBytes: 64 << 10, Objects: 10}, LimitError{Limit: "output", Value: "0 MiB", Work: workGeneration}, time.Minute},
		{"generates too many", "  - list: {elements: [{name: a}, {name: b}, {name: c}]}", `{{ .name }}`,
			Limits{Timeout: time.Minute, MemoryBytes: 1 << 30, OutputBytes: 1 << 20, Objects: 2}, LimitError{Limit: "objects", Value: "2", Work: workGeneration}, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := runner(tt.lim).Generate(t.Context(), setWith(t, tt.generators, tt.template), newSlowRepo(t, 0).sources())
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("got error %v, want a LimitError", err)
			}
			if diff := cmp.Diff(tt.want, *le); diff != "" {
				t.Errorf("limit (-want +got):\n%s", diff)
			}
			if took := time.Since(start); took > tt.ceiling {
				t.Errorf("took %s, want the limit to stop it within %s", took, tt.ceiling)
			}
		})
	}
	t.Run("a slow checkout is not the template's time", func(t *testing.T) {
		repo := newSlowRepo(t, 3*time.Second)
		lim := DefaultLimits()
		lim.Timeout = time.Second
		gen, err := runner(lim).Generate(t.Context(), setWith(t, everyGenerator, `{{ coalesce .name .path.basename }}`), repo.sources())
		if err != nil || len(gen) != 4 {
			t.Fatalf("got %d Applications and error %v, want 4 and none", len(gen), err)
		}
	})
}

// BenchmarkGenerateApplications compares a generation in process with the same
// generation in a child process (a matrix of a git files and a clusters
// generator, and a list): the difference is the sandbox's cost per
// ApplicationSet, its checkout round trip included.
func BenchmarkGenerateApplications(b *testing.B) {
	dir := b.TempDir()
	for _, team := range []string{"red", "blue"} {
		if err := os.MkdirAll(filepath.Join(dir, "teams", team), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "teams", team, "config.yaml"), []byte("namespace: "+team+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var set v1alpha1.ApplicationSet
	manifest := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: apps, namespace: argocd}
spec:
  goTemplate: true
  generators:
` + everyGenerator + `
  template:
    metadata: {name: '{{ coalesce .name .path.basename }}'}
    spec:
      project: default
      source: {repoURL: ` + configRepo + `, path: apps}
      destination: {server: https://kubernetes.default.svc, namespace: apps}
`
	if err := yaml.UnmarshalStrict([]byte(manifest), &set); err != nil {
		b.Fatal(err)
	}
	repo := &slowRepo{dir: dir}
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			if _, err := appset.Generate(b.Context(), &set, repo.sources()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("child-process", func(b *testing.B) {
		r := runner(DefaultLimits())
		for b.Loop() {
			if _, err := r.Generate(b.Context(), &set, repo.sources()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
