package policies

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-policy-agent/opa/v1/topdown"
)

// benchApplication is an Application in a dedicated project, as most
// rendered objects have.
func benchApplication() map[string]any {
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Application",
		"metadata": map[string]any{
			"name": "shop", "namespace": "argocd",
			"finalizers": []any{"resources-finalizer.argocd.argoproj.io"},
		},
		"spec": map[string]any{
			"project": "team",
			"source": map[string]any{
				"repoURL": "https://git.example.com/shop.git", "path": "deploy", "targetRevision": "main",
			},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "shop"},
		},
	}
}

// benchProject is the AppProject of benchApplication.
func benchProject() map[string]any {
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "AppProject",
		"metadata":   map[string]any{"name": "team", "namespace": "argocd"},
		"spec": map[string]any{
			"sourceRepos":  []any{"https://git.example.com/*"},
			"destinations": []any{map[string]any{"server": "https://kubernetes.default.svc", "namespace": "shop"}},
			"namespaceResourceWhitelist": []any{
				map[string]any{"group": "*", "kind": "*"},
			},
		},
	}
}

// benchDeployment is a realistic Deployment with an init container and a
// sidecar.
func benchDeployment(name string) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": name, "namespace": "shop",
			"labels":      map[string]any{"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "shop"},
			"annotations": map[string]any{"argocd.argoproj.io/sync-wave": "1"},
		},
		"spec": map[string]any{
			"replicas": int64(3),
			"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": name}},
				"spec": map[string]any{
					"serviceAccountName": name,
					"initContainers": []any{map[string]any{
						"name": "migrate", "image": "registry.example.com/shop/migrate:1.4.2",
						"command": []any{"/migrate", "--up"},
					}},
					"containers": []any{
						map[string]any{
							"name": "app", "image": "registry.example.com/shop/app:1.4.2",
							"ports": []any{map[string]any{"containerPort": int64(8080), "name": "http"}},
							"env": []any{
								map[string]any{"name": "LOG_LEVEL", "value": "info"},
								map[string]any{"name": "DB_PASSWORD", "valueFrom": map[string]any{
									"secretKeyRef": map[string]any{"name": "db", "key": "password"},
								}},
							},
							"resources": map[string]any{
								"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
								"limits":   map[string]any{"memory": "256Mi"},
							},
						},
						map[string]any{
							"name": "proxy", "image": "envoyproxy/envoy@sha256:" + fmt.Sprintf("%064x", 42),
							"args": []any{"-c", "/etc/envoy/envoy.yaml"},
						},
					},
				},
			},
		},
	}
}

// benchItems is a mixed review of n objects rendered by one Application.
func benchItems(n int) []Item {
	app := benchApplication()
	items := []Item{{Object: app}, {Object: benchProject()}}
	for i := 0; len(items) < n; i++ {
		name := fmt.Sprintf("svc-%d", i)
		var obj map[string]any
		switch i % 5 {
		case 0, 1:
			obj = benchDeployment(name)
		case 2:
			obj = map[string]any{
				"apiVersion": "v1", "kind": "Service",
				"metadata": map[string]any{"name": name, "namespace": "shop"},
				"spec": map[string]any{
					"selector": map[string]any{"app.kubernetes.io/name": name},
					"ports":    []any{map[string]any{"port": int64(80), "targetPort": "http"}},
				},
			}
		case 3:
			obj = map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": name, "namespace": "shop"},
				"data":     map[string]any{"config.yaml": "level: info\n"},
			}
		case 4:
			obj = hpa("shop", "apps/v1", "Deployment", fmt.Sprintf("svc-%d", i-4))
		}
		items = append(items, Item{Object: obj, Application: app})
	}
	return items[:n]
}

// BenchmarkEvaluateDeployment is one decision: a Deployment rendered by an
// Application, through every built-in rule (input conversion included). The
// contract is under 100µs on one core. The evaluator's caches of pure
// function results and of converted Applications, AppProjects and review
// contexts are warm after the first evaluation, as they are for the second
// and later objects of an Application; the Deployment itself is converted
// every time. See BenchmarkEvaluateDeploymentCold. On a shared machine
// compare it with BenchmarkEvaluateYardstick in the same run.
func BenchmarkEvaluateDeployment(b *testing.B) {
	e, err := New(b.Context(), DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	app := benchApplication()
	in := BuildInputs(InputOptions{Point: PointAdmission, Projects: []map[string]any{benchProject()}}, []Item{{Object: benchDeployment("web"), Application: app}})[0]
	if _, err := e.Evaluate(b.Context(), in); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Evaluate(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvaluateDeploymentCold is BenchmarkEvaluateDeployment with the
// caches of pure function results and of converted Applications and
// AppProjects emptied before every evaluation: the first object of an
// Application, images never seen before.
func BenchmarkEvaluateDeploymentCold(b *testing.B) {
	e, err := New(b.Context(), DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	app := benchApplication()
	in := BuildInputs(InputOptions{Point: PointAdmission, Projects: []map[string]any{benchProject()}}, []Item{{Object: benchDeployment("web"), Application: app}})[0]
	b.ReportAllocs()
	for b.Loop() {
		e.shared.mu.Lock()
		e.shared.values, e.shared.entries = topdown.NewVirtualCache(), 0
		e.shared.mu.Unlock()
		e.inputs.docs = newDocumentCache(defaultDocumentCacheEntries)
		if _, err := e.Evaluate(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvaluateYardstick is the yardstick for the benchmarks above on a
// noisy machine: the same Input (converted the same way) through a single
// trivial user rule and no built-in rules.
func BenchmarkEvaluateYardstick(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package main\n\ndeny contains \"x\" if input.kind == \"Nothing\"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	e, err := New(b.Context(), Options{PolicyDirs: []string{dir}})
	if err != nil {
		b.Fatal(err)
	}
	app := benchApplication()
	in := BuildInputs(InputOptions{Point: PointAdmission, Projects: []map[string]any{benchProject()}}, []Item{{Object: benchDeployment("web"), Application: app}})[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Evaluate(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvaluateAll(b *testing.B) {
	e, err := New(b.Context(), DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	ins := BuildInputs(InputOptions{Point: PointSync, ImplicitDefaultProject: true}, benchItems(1000))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.EvaluateAll(b.Context(), ins); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ins)), "ns/input")
}
