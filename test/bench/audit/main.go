// Command audit measures `tollgate audit` over 10,000 stored objects on the
// test control plane beside a plain list of the same objects (kubectl get
// of their kinds, in the same pages), in the same run: wall time and peak
// RSS of each process, and their ratios. Rounds alternate so that the
// machine's noise falls on both; the median round is reported. Its last
// line reads
//
//	audit: N objects in X s (goal < 30 s), peak RSS Y MiB (goal < 200 MiB); plain list A s, B MiB: C x the time, D x the memory
//
// Run it with `make bench-audit` (it needs bin/k8s from `make tools` and
// the binary the target builds).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tollgate-dev/tollgate/test/envtest"
)

func main() {
	objects := flag.Int("objects", 10000, "objects to store (Deployments, ConfigMaps, Secrets, Services; a tenth violate a rule)")
	namespaces := flag.Int("namespaces", 20, "namespaces they spread over")
	rounds := flag.Int("rounds", 3, "rounds of each (audit, plain list), alternating")
	chunk := flag.Int("chunk-size", 500, "list page size of both")
	tollgate := flag.String("tollgate", "bin/tollgate-nodev", "tollgate binary")
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	if err := run(*objects, *namespaces, *rounds, *chunk, *tollgate); err != nil {
		log.Fatal(err)
	}
}

// kinds are the kinds the objects are of, for the plain list.
const kinds = "deployments.apps,configmaps,secrets,services"

func run(objects, namespaces, rounds, chunk int, tollgate string) error {
	ctx := context.Background()
	env, err := envtest.Start(envtest.Options{CRDDirectoryPaths: []string{"config/crd/bases", "config/policyreport/bases"}})
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	dir, err := os.MkdirTemp("", "bench-audit-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	kc, err := env.KubeConfig("admin")
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return err
	}
	start := time.Now()
	if err := populate(ctx, env.Client, objects, namespaces); err != nil {
		return err
	}
	fmt.Printf("stored %d objects in %d namespaces in %s\n", objects, namespaces, time.Since(start).Round(time.Second))

	kubectl := filepath.Join(envtest.BinaryDir(), "kubectl")
	audit := []string{tollgate, "audit", "--kubeconfig", kubeconfig, "--audit-chunk-size", fmt.Sprint(chunk), "-o", "json", "--write-reports"}
	list := []string{kubectl, "--kubeconfig", kubeconfig, "get", kinds, "-A", "--chunk-size", fmt.Sprint(chunk), "-o", "name"}
	var audits, lists []measure
	for range rounds {
		m, err := measureRun(audit, 1) // exit 1: the tenth that violates is denied
		if err != nil {
			return fmt.Errorf("tollgate audit: %w", err)
		}
		audits = append(audits, m)
		if m, err = measureRun(list, 0); err != nil {
			return fmt.Errorf("kubectl get: %w", err)
		}
		lists = append(lists, m)
	}
	a, l := median(audits), median(lists)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\twall time (median)\tpeak RSS (median)\t")
	fmt.Fprintf(tw, "tollgate audit\t%.2f s\t%.0f MiB\t\n", a.wall.Seconds(), a.rssMiB)
	fmt.Fprintf(tw, "kubectl get (plain list)\t%.2f s\t%.0f MiB\t\n", l.wall.Seconds(), l.rssMiB)
	_ = tw.Flush()
	fmt.Printf("audit: %d objects in %.1f s (goal < 30 s), peak RSS %.0f MiB (goal < 200 MiB); plain list %.1f s, %.0f MiB: %.1f x the time, %.1f x the memory\n",
		objects, a.wall.Seconds(), a.rssMiB, l.wall.Seconds(), l.rssMiB, a.wall.Seconds()/l.wall.Seconds(), a.rssMiB/l.rssMiB)
	return nil
}

// measure is one process's wall time and peak RSS.
type measure struct {
	wall   time.Duration
	rssMiB float64
}

// measureRun runs args, wanting exit status want, and measures it.
func measureRun(args []string, want int) (measure, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout = io.Discard
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return measure{}, err
	}
	if code != want {
		return measure{}, fmt.Errorf("exit status %d, want %d: %s", code, want, stderr.String())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return measure{wall: wall, rssMiB: float64(ru.Maxrss) / 1024}, nil
}

// median returns the round with the median wall time.
func median(ms []measure) measure {
	s := slices.Clone(ms)
	slices.SortFunc(s, func(a, b measure) int { return int(a.wall - b.wall) })
	return s[len(s)/2]
}

// populate stores objects spread over namespaces, four kinds in turn; one
// in ten violates a rule (a latest-tagged Deployment, a plaintext Secret).
func populate(ctx context.Context, c client.Client, objects, namespaces int) error {
	for i := range namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("team-%02d", i)}}
		if err := c.Create(ctx, ns); err != nil {
			return err
		}
	}
	work := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := c.Create(ctx, object(i, namespaces)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
loop:
	for i := range objects {
		select {
		case work <- i:
		case err = <-errs:
			break loop
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	return errors.Join(err, <-errs)
}

// object is the i-th object.
func object(i, namespaces int) client.Object {
	md := metav1.ObjectMeta{Namespace: fmt.Sprintf("team-%02d", i%namespaces), Name: fmt.Sprintf("obj-%05d", i)}
	bad := (i/4)%10 == 0 // of each kind, one in ten
	labels := map[string]string{"app": md.Name}
	switch i % 4 {
	case 0:
		image := "registry.example.com/web:1.0.0"
		if bad {
			image = "registry.example.com/web:latest"
		}
		return &appsv1.Deployment{ObjectMeta: md, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
			},
		}}
	case 1:
		return &corev1.ConfigMap{ObjectMeta: md, Data: map[string]string{"settings.yaml": "replicas: 3\nlog: info\n"}}
	case 2:
		s := &corev1.Secret{ObjectMeta: md}
		if bad {
			s.StringData = map[string]string{"password": "hunter2"}
		}
		return s
	}
	u := &unstructured.Unstructured{}
	// Headless: the test API server's service range holds a few hundred
	// addresses.
	u.SetUnstructuredContent(map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{
		"clusterIP": "None", "ports": []any{map[string]any{"port": int64(80)}}, "selector": map[string]any{"app": md.Name},
	}})
	u.SetNamespace(md.Namespace)
	u.SetName(md.Name)
	return u
}

// limitedBuffer keeps the first 64 KiB written to it.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 64<<10 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }
