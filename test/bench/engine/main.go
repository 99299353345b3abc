// Command engine benchmarks tollgate's sync engine against a real
// kube-apiserver and etcd (the test/envtest harness), on loopback only:
//
//  1. One Application of 500 rendered objects (ConfigMaps, Services and
//     Deployments in three sync waves) synced from a Git repository,
//     reporting wall time and API calls by kind, beside `kubectl apply
//     --server-side -f` of the same objects into a fresh namespace in the
//     same run (its calls counted by a reverse proxy on loopback).
//  2. 200 Applications of 20 objects each, all synced, then left idle: per
//     resync cycle, the controller's CPU seconds (getrusage), peak RSS
//     (VmHWM, reset before the window) and Go heap, API calls, and apply
//     calls (target 0).
//
// The Git repository is a file:// repository written with go-git in a
// temporary directory. There is no kubelet or deployment controller: a
// goroutine marks Deployments available by writing their status
// subresource, as the deployment controller would once pods ran.
//
// Usage: go run ./test/bench/engine [-objects 500] [-apps 200] [-app-objects 20] [-resync 10s] [-cycles 3]
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

// options are the command's flags.
type options struct {
	objects    int
	apps       int
	appObjects int
	resync     time.Duration
	cycles     int
	timeout    time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.objects, "objects", 500, "objects of the Application synced in part 1")
	flag.IntVar(&o.apps, "apps", 200, "Applications of part 2")
	flag.IntVar(&o.appObjects, "app-objects", 20, "objects of each Application of part 2")
	flag.DurationVar(&o.resync, "resync", 10*time.Second, "resync period of the controller")
	flag.IntVar(&o.cycles, "cycles", 3, "idle resync cycles measured in part 2")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "bound on the whole run")
	flag.Parse()
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
