// Command diff measures `tollgate diff` on a generated GitOps repository:
// N Applications, half Kustomize overlays and half Helm charts, each in
// its own directory, committed on main, then a change to a few of them in
// the work tree (an image tag, a Helm value, a tag moved to latest). It
// prints the diff's best wall time of -runs beside its peer, rendering
// every Application at both revisions (`tollgate test` over a checkout of
// the base and over the work tree, the renders the diff would make without
// reusing what the change does not touch), and the ratio of the two in the
// same run. `make bench` runs it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tollgate-dev/tollgate/reposerver/source"
)

const repoURL = "https://git.example.com/platform/estate.git"

func main() {
	tollgate := flag.String("tollgate", "bin/tollgate", "the tollgate binary")
	apps := flag.Int("apps", 200, "Applications in the repository")
	changed := flag.Int("changed", 3, "Applications the change touches")
	runs := flag.Int("runs", 3, "runs of each, best wall time kept")
	flag.Parse()
	if err := run(*tollgate, *apps, *changed, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench-diff:", err)
		os.Exit(1)
	}
}

func run(tollgate string, apps, changed, runs int) error {
	bin, err := filepath.Abs(tollgate)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "tollgate-bench-diff-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	repoDir := filepath.Join(work, "repo")
	repo, base, err := generate(repoDir, apps)
	if err != nil {
		return err
	}
	for i := range min(changed, apps) {
		if err := change(repoDir, i); err != nil {
			return err
		}
	}
	// The peer's base checkout, written from Git as the diff writes it.
	baseDir := filepath.Join(work, "base")
	if err := os.Mkdir(baseDir, 0o755); err != nil {
		return err
	}
	if err := source.WriteCommit(context.Background(), repo, base, baseDir, source.DefaultOptions()); err != nil {
		return err
	}
	var report struct {
		ReusedRenders int `json:"reusedRenders"`
		Summary       struct {
			Applications struct{ Changed int } `json:"applications"`
		} `json:"summary"`
	}
	diff := func() error {
		out, err := tolerate(exec.Command(bin, "diff", "-o", "json", repoDir))
		if err != nil {
			return err
		}
		return json.Unmarshal(out, &report)
	}
	peer := func() error {
		for _, dir := range []string{baseDir, repoDir} {
			if _, err := tolerate(exec.Command(bin, "test", "-o", "json", "--repo-url", repoURL, "--repo-root", dir, dir)); err != nil {
				return err
			}
		}
		return nil
	}
	d, err := best(runs, diff)
	if err != nil {
		return fmt.Errorf("tollgate diff: %w", err)
	}
	p, err := best(runs, peer)
	if err != nil {
		return fmt.Errorf("tollgate test at both revisions: %w", err)
	}
	fmt.Printf("%d Applications (%d Kustomize, %d Helm), %d changed:\n", apps, (apps+1)/2, apps/2, min(changed, apps))
	fmt.Printf("  tollgate diff                                          %6.2f s (goal < 5 s; %d Applications changed, %d renders reused)\n", d.Seconds(), report.Summary.Applications.Changed, report.ReusedRenders)
	fmt.Printf("  every Application rendered at both revisions (peer)    %6.2f s\n", p.Seconds())
	fmt.Printf("  ratio peer/diff: %.1fx\n", p.Seconds()/d.Seconds())
	return nil
}

// tolerate runs cmd and returns its standard output; exit status 1
// (denials found, introduced or not) is expected.
func tolerate(cmd *exec.Cmd) ([]byte, error) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return out, nil
	}
	if err != nil {
		tail := stderr.String()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return nil, fmt.Errorf("%w\n%s", err, tail)
	}
	return out, nil
}

// best runs fn n times and returns the shortest wall time.
func best(n int, fn func() error) (time.Duration, error) {
	var b time.Duration
	for i := range n {
		start := time.Now()
		if err := fn(); err != nil {
			return 0, err
		}
		if d := time.Since(start); i == 0 || d < b {
			b = d
		}
	}
	return b, nil
}

// generate writes the repository and commits it on main.
func generate(dir string, apps int) (*git.Repository, plumbing.Hash, error) {
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.Main}})
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{repoURL}}); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	for i := range apps {
		files := kustomizeApp(i)
		if i%2 == 1 {
			files = helmApp(i)
		}
		files[fmt.Sprintf("argocd/app-%03d.yaml", i)] = application(i)
		for name, content := range files {
			if err := write(dir, name, content); err != nil {
				return nil, plumbing.ZeroHash, err
			}
		}
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	sig := &object.Signature{Name: "bench", Email: "bench@example.com", When: time.Now()}
	h, err := wt.Commit("estate", &git.CommitOptions{Author: sig, Committer: sig})
	return repo, h, err
}

// change edits Application i in the work tree: a new image tag or Helm
// value, or (every third) a tag moved to latest.
func change(dir string, i int) error {
	name, from, to := appDir(i)+"/kustomization.yaml", "newTag: 1.0.0", "newTag: 1.1.0"
	switch {
	case i%2 == 1 && i%3 == 2:
		name, from, to = appDir(i)+"/values.yaml", "app:1.0.0", "app:latest"
	case i%2 == 1:
		name, from, to = appDir(i)+"/values.yaml", "replicas: 2", "replicas: 3"
	case i%3 == 2:
		to = "newTag: latest"
	}
	p := filepath.Join(dir, filepath.FromSlash(name))
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	return os.WriteFile(p, []byte(strings.Replace(string(data), from, to, 1)), 0o644)
}

func appDir(i int) string {
	if i%2 == 1 {
		return fmt.Sprintf("charts/app-%03d", i)
	}
	return fmt.Sprintf("apps/app-%03d", i)
}

func write(dir, name, content string) error {
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

func application(i int) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: app-%03d
  namespace: argocd
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: default
  source:
    repoURL: %s
    targetRevision: main
    path: %s
  destination:
    server: https://kubernetes.default.svc
    namespace: team-%03d
`, i, repoURL, appDir(i), i)
}

func kustomizeApp(i int) map[string]string {
	d := appDir(i)
	return map[string]string{
		d + "/kustomization.yaml": fmt.Sprintf(`resources:
- deployment.yaml
- service.yaml
labels:
- pairs: {team: team-%03d}
images:
- name: registry.example.com/app
  newTag: 1.0.0
`, i),
		d + "/deployment.yaml": fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%03d
spec:
  replicas: 2
  selector:
    matchLabels: {app: app-%03d}
  template:
    metadata:
      labels: {app: app-%03d}
    spec:
      containers:
      - name: app
        image: registry.example.com/app:1.0.0
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {memory: 256Mi}
`, i, i, i),
		d + "/service.yaml": fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: app-%03d
spec:
  selector: {app: app-%03d}
  ports:
  - port: 80
    targetPort: 8080
`, i, i),
	}
}

func helmApp(i int) map[string]string {
	d := appDir(i)
	return map[string]string{
		d + "/Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: app-%03d\nversion: 0.1.0\n", i),
		d + "/values.yaml": `replicas: 2
image: registry.example.com/app:1.0.0
port: 8080
`,
		d + "/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {app: {{ .Release.Name }}, chart: {{ .Chart.Name }}}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
      - name: app
        image: {{ .Values.image }}
        ports:
        - containerPort: {{ .Values.port }}
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {memory: 256Mi}
`,
		d + "/templates/service.yaml": `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {app: {{ .Release.Name }}}
  ports:
  - port: 80
    targetPort: {{ .Values.port }}
`,
	}
}
