// Command corpus writes the benchmark corpus for `make bench`: N files of M
// YAML documents each (Deployments with init containers and sidecars,
// CronJobs, ConfigMaps and Secrets), deterministic for a given seed, with a
// few latest/untagged images and plaintext Secrets so both tools have work.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

func main() {
	out := flag.String("out", "", "output directory (required)")
	files := flag.Int("files", 1000, "number of files")
	docs := flag.Int("docs", 10, "documents per file")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "corpus: -out is required")
		os.Exit(2)
	}
	if err := write(*out, *files, *docs, rand.New(rand.NewPCG(*seed, 0))); err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(1)
	}
}

func write(dir string, files, docs int, r *rand.Rand) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for f := range files {
		path := filepath.Join(dir, fmt.Sprintf("team-%03d", f%50), fmt.Sprintf("app-%04d.yaml", f))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		fh, err := os.Create(path)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(fh)
		for d := range docs {
			if d > 0 {
				fmt.Fprintln(w, "---")
			}
			name := fmt.Sprintf("app-%04d-%02d", f, d)
			switch {
			case d%10 == 9:
				writeSecret(w, name)
			case d%10 == 7 || d%10 == 8:
				writeConfigMap(w, name)
			case d%10 == 6:
				writeCronJob(w, name, image(r))
			default:
				writeDeployment(w, name, image(r), image(r))
			}
		}
		if err := w.Flush(); err != nil {
			fh.Close()
			return err
		}
		if err := fh.Close(); err != nil {
			return err
		}
	}
	return nil
}

// image returns a pinned image most of the time, and sometimes a latest or
// untagged one.
func image(r *rand.Rand) string {
	switch n := r.IntN(100); {
	case n < 3:
		return "registry.example.com/team/api:latest"
	case n < 5:
		return "registry.example.com:5000/team/api"
	case n < 15:
		return "registry.example.com/team/api@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	default:
		return fmt.Sprintf("registry.example.com/team/api:v1.%d.%d", r.IntN(20), r.IntN(10))
	}
}

func writeDeployment(w *bufio.Writer, name, img, sidecar string) {
	fmt.Fprintf(w, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  namespace: shop
  labels:
    app.kubernetes.io/name: %[1]s
    app.kubernetes.io/part-of: shop
spec:
  replicas: 3
  selector:
    matchLabels:
      app.kubernetes.io/name: %[1]s
  template:
    metadata:
      labels:
        app.kubernetes.io/name: %[1]s
    spec:
      serviceAccountName: %[1]s
      initContainers:
        - name: migrate
          image: %[2]s
          args: ["migrate", "--to", "latest-schema"]
      containers:
        - name: app
          image: %[2]s
          ports:
            - containerPort: 8080
              name: http
          env:
            - name: LOG_LEVEL
              value: info
            - name: DB_HOST
              valueFrom:
                configMapKeyRef:
                  name: %[1]s
                  key: db-host
          resources:
            requests: {cpu: 100m, memory: 128Mi}
            limits: {memory: 256Mi}
          readinessProbe:
            httpGet: {path: /healthz, port: http}
        - name: proxy
          image: %[3]s
          ports:
            - containerPort: 15001
`, name, img, sidecar)
}

func writeCronJob(w *bufio.Writer, name, img string) {
	fmt.Fprintf(w, `apiVersion: batch/v1
kind: CronJob
metadata:
  name: %[1]s
  namespace: shop
spec:
  schedule: "*/15 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: job
              image: %[2]s
              args: ["report"]
`, name, img)
}

func writeConfigMap(w *bufio.Writer, name string) {
	fmt.Fprintf(w, `apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s
  namespace: shop
data:
  db-host: db.shop.svc
  feature-flags: |
    checkout=true
    search=false
`, name)
}

func writeSecret(w *bufio.Writer, name string) {
	fmt.Fprintf(w, `apiVersion: v1
kind: Secret
metadata:
  name: %[1]s
  namespace: shop
type: Opaque
stringData:
  password: not-in-git-please
`, name)
}
