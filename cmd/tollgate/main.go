// Command tollgate is the policy guard for Argo CD-style GitOps: a
// conftest-style checker for pull requests, a validating admission webhook
// and a sync engine, all judging with one evaluator.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(os.Stderr, "tollgate:", msg)
		}
		os.Exit(exitCode(err))
	}
}
