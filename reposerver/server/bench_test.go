package server

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"

	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/source"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// workerEnv makes the test binary a render child: TestMain serves one
// render, as `tollgate render-worker` does.
const workerEnv = "TOLLGATE_REPOSERVER_TEST_WORKER=1"

func TestMain(m *testing.M) {
	if os.Getenv("TOLLGATE_REPOSERVER_TEST_WORKER") == "1" {
		if err := Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// benchRepo is a repository with a kustomization of 20 objects, what one
// Application of bench-engine renders.
func benchRepo(b *testing.B) string {
	files := map[string]string{}
	res := ""
	for i := range 20 {
		name := fmt.Sprintf("cm-%02d.yaml", i)
		files["app/"+name] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%02d}\ndata: {index: %q}\n", i, fmt.Sprint(i))
		res += name + ", "
	}
	files["app/kustomization.yaml"] = "resources: [" + res + "]\nlabels: [{pairs: {team: web}}]\n"
	return gitserver.New(b).CreateRepo(b, "bench", files)
}

// newBenchService returns a Service rendering in-process, or in sandbox
// children when sandboxed, with at most parallelism renders at once.
func newBenchService(b *testing.B, sandboxed bool, parallelism int) *Service {
	cache, err := source.NewCache(b.TempDir(), source.Options{AllowInsecure: true})
	if err != nil {
		b.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Parallelism = parallelism
	if sandboxed {
		opts.Renderer = &Runner{Path: os.Args[0], Env: []string{workerEnv}, Limits: DefaultLimits()}
	}
	svc, err := New(cache, opts)
	if err != nil {
		b.Fatal(err)
	}
	return svc
}

// BenchmarkGenerate measures one Application's request (one source, 20
// objects) four ways, for a cached revision (the render cache answers) and
// an uncached one (NoCache: fetched revision, rendered again):
//
//   - in-process: Service.Generate called directly, rendering in this
//     process (what the cost of the sandbox and the wire is added to);
//   - sandbox: the same, each render in a child process (the controller
//     without --repo-server);
//   - https: through reposerver.Client and Handler over TLS on loopback, rendering in
//     a child process (the controller with --repo-server).
//
// The differences are the added latency of the out-of-process render
// (https - in-process) and the child-process overhead per render (sandbox
// - in-process, uncached).
func BenchmarkGenerate(b *testing.B) {
	url := benchRepo(b)
	for _, mode := range []string{"in-process", "sandbox", "https"} {
		svc := newBenchService(b, mode != "in-process", 0)
		var g reposerver.Generator = svc
		if mode == "https" {
			ca := newTestCA(b)
			addr := ca.serve(b, "repo.test", NewHandler(svc, logr.Discard()))
			c, err := reposerver.NewClient(reposerver.ClientOptions{Addresses: []string{addr}, RootCAs: ca.roots, Certificate: ca.clientCert(b), Resolver: loopback{}})
			if err != nil {
				b.Fatal(err)
			}
			g = c
		}
		for _, cached := range []bool{true, false} {
			name := mode + "/uncached"
			if cached {
				name = mode + "/cached"
			}
			b.Run(name, func(b *testing.B) {
				req := &reposerver.Request{AppName: "web", Namespace: "web", Sources: []reposerver.Source{src(url, "app")}, NoCache: !cached, ListingMaxAge: 1 << 62}
				if _, err := g.Generate(b.Context(), req); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for b.Loop() {
					if _, err := g.Generate(b.Context(), req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkReplicas measures renders per second through 1 and 2
// repo-servers behind one reposerver.Client, each allowed one render at a time
// (--parallelism 1), with GOMAXPROCS requests in flight: the controller's
// view of scaling the repo-server out. Every request renders
// (NoCache) in a child process.
func BenchmarkReplicas(b *testing.B) {
	url := benchRepo(b)
	ca := newTestCA(b)
	var addrs []string
	for i := range 2 {
		svc := newBenchService(b, true, 1)
		addrs = append(addrs, ca.serve(b, fmt.Sprintf("repo-%d.test", i), NewHandler(svc, logr.Discard())))
	}
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			c, err := reposerver.NewClient(reposerver.ClientOptions{Addresses: addrs[:n], RootCAs: ca.roots, Certificate: ca.clientCert(b), Resolver: loopback{}})
			if err != nil {
				b.Fatal(err)
			}
			req := &reposerver.Request{AppName: "web", Namespace: "web", Sources: []reposerver.Source{src(url, "app")}, NoCache: true, ListingMaxAge: 1 << 62}
			for range n { // fetch once on each replica
				if _, err := c.Generate(b.Context(), req); err != nil {
					b.Fatal(err)
				}
			}
			var failed atomic.Value
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Generate(context.Background(), req); err != nil {
						failed.Store(err)
					}
				}
			})
			b.StopTimer()
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "renders/s")
		})
	}
}
