// Command engine benchmarks tollgate's sync engine against a real
// kube-apiserver and etcd (the test/envtest harness), on loopback only. The
// controller is the real binary (-tollgate, default bin/tollgate from `make
// build`) running `tollgate controller` in its own process, so the CPU and
// memory figures are its own, not this harness's:
//
//  1. One Application of 500 rendered objects (ConfigMaps, Services and
//     Deployments in three sync waves) synced from a Git repository,
//     reporting wall time and API calls by kind, beside `kubectl apply
//     --server-side -f` of the same objects into a fresh namespace in the
//     same run.
//  2. 200 Applications of 20 objects each, all synced, then left idle: per
//     resync cycle, the controller process's CPU seconds (utime+stime from
//     /proc/<pid>/stat), peak RSS (VmHWM of /proc/<pid>/status, reset
//     through clear_refs before the window), peak Go heap in use (sampled
//     from its /metrics every 500 ms), API calls, and apply calls (target 0).
//
// With -part scale it measures scale out instead: -apps Applications of
// -app-objects objects synced by one replica (time to the first full sync,
// then idle cycles: CPU, peak RSS and API calls), then a second replica
// sharing the same Applications (--sharding dynamic; idle cycles per
// replica), then -step more at a time for the two replicas (the time to
// sync them, then idle cycles), until a replica misses the idle goal or -max-apps is reached (see
// scale.go for the goal). make bench-scale runs it with 2,000
// Applications of 10 objects.
//
// The controller and kubectl each reach the API server through a counting
// reverse proxy of their own on loopback (plain HTTP; the proxy holds the
// admin credentials), which classifies every request. The engine's
// comparison counters and Go heap are scraped from the controller's
// /metrics; with -memprofile its heap profiles come from its
// /debug/pprof/heap (--pprof-addr). The controller's output goes to
// controller.log in the run's temporary directory; its last lines are
// printed when the run fails (BENCH_LOG=1 also copies it to stderr, at
// -v 1). It gets SIGTERM at the end, on an error, on Ctrl-C and when this
// process dies.
//
// The Git repository is a file:// repository written with go-git in a
// temporary directory. There is no kubelet or deployment controller: a
// goroutine marks Deployments available by writing their status
// subresource, as the deployment controller would once pods ran.
//
// Usage: go run ./test/bench/engine [-tollgate bin/tollgate] [-objects 500] [-apps 200] [-app-objects 20] [-resync 10s] [-cycles 3] [-memprofile FILE]
//
//	go run ./test/bench/engine -part scale [-apps 2000] [-app-objects 10] [-step 1000] [-max-apps 4000] [-resync 60s] [-cycles 2]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

// Parts of -part.
const (
	partEngine = "engine"
	partScale  = "scale"
	partFirst  = "firstsync"
)

// options are the command's flags.
type options struct {
	// part is partEngine (parts 1 and 2) or partScale.
	part string
	// step and maxApps: the scale part adds step Applications at a time to
	// the two replicas, up to maxApps, while the idle goal holds.
	step, maxApps int
	// counts are the Application counts of the firstsync part.
	counts     string
	objects    int
	apps       int
	appObjects int
	resync     time.Duration
	cycles     int
	timeout    time.Duration
	// tollgate is the tollgate binary run as the controller.
	tollgate string
	// memProfile, when set, receives heap profiles of the controller taken
	// at the start (memProfile.base) and the end of the idle window.
	memProfile string
	// cpuProfile, when set, receives a CPU profile of the controller over
	// the idle window.
	cpuProfile string
}

func main() {
	var o options
	flag.StringVar(&o.tollgate, "tollgate", "bin/tollgate", "tollgate binary run as the controller (make build writes bin/tollgate)")
	flag.IntVar(&o.objects, "objects", 500, "objects of the Application synced in part 1")
	flag.IntVar(&o.apps, "apps", 200, "Applications of part 2")
	flag.IntVar(&o.appObjects, "app-objects", 20, "objects of each Application of part 2")
	flag.DurationVar(&o.resync, "resync", 10*time.Second, "resync period of the controller")
	flag.IntVar(&o.cycles, "cycles", 3, "idle resync cycles measured in part 2")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "bound on the whole run")
	flag.StringVar(&o.memProfile, "memprofile", "", "fetch heap profiles of the controller process (/debug/pprof/heap?gc=1) at the start (FILE.base) and the end (FILE) of the idle window; compare them with go tool pprof -base FILE.base FILE")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "fetch a CPU profile of the controller process over the idle window (/debug/pprof/profile) into FILE")
	flag.StringVar(&o.part, "part", partEngine, "engine: parts 1 and 2; scale: -apps Applications with 1 replica, then with 2, then steps of -step up to -max-apps while the idle goal holds; firstsync: the first sync of -counts Applications of healthy-at-once objects beside kubectl")
	flag.IntVar(&o.step, "step", 1000, "scale: Applications added per step after the 2-replica phase (0: no steps)")
	flag.StringVar(&o.counts, "counts", "200,1000", "firstsync: Application counts synced in turn, each beside kubectl")
	flag.IntVar(&o.maxApps, "max-apps", 4000, "scale: the most Applications the steps go to")
	flag.Parse()
	if o.part != partEngine && o.part != partScale && o.part != partFirst {
		fmt.Fprintln(os.Stderr, "bench-engine: -part must be engine, scale or firstsync")
		os.Exit(2)
	}
	if o.objects < 3 || o.apps < 1 || o.appObjects < 3 || o.resync <= 0 || o.cycles < 1 {
		fmt.Fprintln(os.Stderr, "bench-engine: -objects and -app-objects must be at least 3, -apps and -cycles at least 1, -resync positive")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	err := run(ctx, o, os.Stdout)
	cancel()
	stop()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (the run is bounded by -timeout %s)", err, o.timeout)
		}
		fmt.Fprintln(os.Stderr, "bench-engine:", err)
		os.Exit(1)
	}
}
