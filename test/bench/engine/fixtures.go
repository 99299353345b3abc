package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/test/envtest"
)

// writeRepo writes files (slash-separated path to content) into a new Git
// repository at dir with one commit on main, using go-git: no git binary,
// no server. It returns the repository's file:// URL.
func writeRepo(dir string, files map[string]string) (string, error) {
	repo, err := gogit.PlainInitWithOptions(dir, &gogit.PlainInitOptions{
		InitOptions: gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		return "", fmt.Errorf("init repository: %w", err)
	}
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", err
	}
	if err := wt.AddWithOptions(&gogit.AddOptions{All: true}); err != nil {
		return "", fmt.Errorf("stage files: %w", err)
	}
	sig := &object.Signature{Name: "bench", Email: "bench@example.com", When: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := wt.Commit("manifests", &gogit.CommitOptions{Author: sig}); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	return "file://" + dir, nil
}

// manifests writes n objects for one application under dir: a third
// ConfigMaps in wave 0, a third Services in wave 1, the rest Deployments in
// wave 2, several documents per file. Services are headless: the test
// control plane's service IP range has room for 254 addresses only.
func manifests(files map[string]string, dir, prefix string, n int) {
	perFile := 50
	var b strings.Builder
	file := 0
	flush := func() {
		if b.Len() > 0 {
			files[fmt.Sprintf("%s/objects-%03d.yaml", dir, file)] = b.String()
			b.Reset()
			file++
		}
	}
	for i := range n {
		name := fmt.Sprintf("%s-%04d", prefix, i)
		switch {
		case i < n/3:
			fmt.Fprintf(&b, `apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  annotations:
    argocd.argoproj.io/sync-wave: "0"
data:
  setting: value-%d
`, name, i)
		case i < 2*n/3:
			fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata:
  name: %[1]s
  annotations:
    argocd.argoproj.io/sync-wave: "1"
spec:
  clusterIP: None
  selector:
    app: %[1]s
  ports:
  - port: 80
    targetPort: 8080
`, name)
		default:
			fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  annotations:
    argocd.argoproj.io/sync-wave: "2"
spec:
  replicas: 1
  selector:
    matchLabels:
      app: %[1]s
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      containers:
      - name: web
        image: registry.example.com/web:1.0.0
        resources:
          requests:
            cpu: 10m
            memory: 16Mi
`, name)
		}
		b.WriteString("---\n")
		if (i+1)%perFile == 0 {
			flush()
		}
	}
	flush()
}

// fakeKubelet marks every Deployment of the cluster rolled out and available
// by writing its status subresource, standing in for the deployment
// controller and the kubelet that the benchmark's control plane does not
// run, every period. It uses its own client, whose calls are not counted.
func fakeKubelet(ctx context.Context, c client.Client, every time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		var deps appsv1.DeploymentList
		if err := c.List(ctx, &deps); err != nil {
			continue
		}
		for i := range deps.Items {
			envtest.MarkAvailable(ctx, c, &deps.Items[i])
		}
	}
}

// watchKubelet is fakeKubelet for large clusters: one list, then a watch,
// marking each Deployment available as it is created or changed, so that
// its cost follows the changes and not the cluster's size. It re-lists
// when the watch ends, until ctx ends.
func watchKubelet(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme) error {
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	go func() {
		for ctx.Err() == nil {
			var deps appsv1.DeploymentList
			if err := c.List(ctx, &deps); err != nil {
				_ = sleep(ctx, time.Second)
				continue
			}
			for i := range deps.Items {
				envtest.MarkAvailable(ctx, c, &deps.Items[i])
			}
			w, err := c.Watch(ctx, &appsv1.DeploymentList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: deps.ResourceVersion}})
			if err != nil {
				_ = sleep(ctx, time.Second)
				continue
			}
			for ev := range w.ResultChan() {
				if d, ok := ev.Object.(*appsv1.Deployment); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
					envtest.MarkAvailable(ctx, c, d)
				}
			}
			w.Stop()
		}
	}()
	return nil
}
