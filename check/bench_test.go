package check

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeBenchRepo writes files YAML files of docs documents each (half
// Deployments with two containers, half Services), one Deployment in ten
// with a latest tag, spread over 20 team directories.
func writeBenchRepo(tb testing.TB, dir string, files, docs int) {
	tb.Helper()
	for f := range files {
		team := fmt.Sprintf("team%d", f%20)
		var b strings.Builder
		for i := range docs {
			if i > 0 {
				b.WriteString("---\n")
			}
			name := fmt.Sprintf("app-%d-%d", f, i)
			if i%2 == 1 {
				fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  selector: {app: %[1]s}
  ports:
    - port: 80
      targetPort: 8080
`, name, team)
				continue
			}
			tag := "1.2.3"
			if i == 4 {
				tag = "latest"
			}
			fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  namespace: %[2]s
  labels: {app: %[1]s, tier: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
        - name: main
          image: registry.example.com/%[2]s/%[1]s:%[3]s
          ports: [{containerPort: 8080}]
          resources: {limits: {memory: 128Mi}, requests: {cpu: 10m}}
        - name: sidecar
          image: registry.example.com/proxy:2.0.1
`, name, team, tag)
		}
		p := filepath.Join(dir, team, fmt.Sprintf("file%d.yaml", f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkRun10k checks 10,000 documents in 1,000 files, the size of
// the throughput target; run it with -benchtime=1x or 3x.
func BenchmarkRun10k(b *testing.B) {
	dir := b.TempDir()
	writeBenchRepo(b, dir, 1000, 10)
	o := Options{Paths: []string{dir}, RepoRoot: dir, RepoURL: "https://example.com/bench"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rep, _, err := Run(b.Context(), o)
		if err != nil {
			b.Fatal(err)
		}
		if got := rep.Summary.Documents; got != 10000 {
			b.Fatalf("checked %d documents, want 10000", got)
		}
		if got := rep.Summary.Denied; got != 1000 {
			b.Fatalf("denied %d, want 1000", got)
		}
	}
}
