package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/internal/appops"
)

// appWaitOptions are the flags of `tollgate app wait`, argocd app wait's.
type appWaitOptions struct {
	appTarget
	names                                                []string
	selector                                             string
	sync, health, operation, suspended, degraded, delete bool
	timeout                                              secondsOrDuration
}

func newAppWaitCmd() *cobra.Command {
	o := appWaitOptions{}
	cmd := &cobra.Command{
		Use:   "wait [NAME... | -l SELECTOR]",
		Short: "Wait until Applications are synced, healthy and done operating, like argocd app wait",
		Long: `Wait until each Application named (or selected by -l) is where the flags say,
as argocd app wait does: --sync Synced, --health Healthy (--suspended and
--degraded accept those health statuses too), --operation no operation
requested or running; no flag waits for --sync, --health and --operation.
--delete waits until the Application is gone.

Exit status: 0 when every Application got there; 1 when --timeout
(seconds or a duration; 0, the default, waits without bound) passed first;
2 on usage errors or when an Application does not exist or is deleted
(unless --delete).`,
		Example: `  tollgate app wait billing --health --timeout 300
  tollgate app wait -l app.kubernetes.io/instance=platform --sync
  tollgate app wait web --delete`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && o.selector == "" {
				return usageError(errors.New("name an Application or give --selector"))
			}
			o.names = args
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			return waitForApps(cmd.Context(), c, o, appops.DefaultWaitOptions().Interval, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.BoolVar(&o.sync, "sync", false, "wait until Synced")
	f.BoolVar(&o.health, "health", false, "wait until Healthy")
	f.BoolVar(&o.operation, "operation", false, "wait until no operation is requested or running")
	f.BoolVar(&o.suspended, "suspended", false, "accept Suspended health")
	f.BoolVar(&o.degraded, "degraded", false, "accept Degraded health")
	f.BoolVar(&o.delete, "delete", false, "wait until the Application is deleted")
	f.StringVarP(&o.selector, "selector", "l", "", "wait for the Applications with matching labels (=, ==, !=, in, notin, exists, !exists)")
	f.Var(&o.timeout, "timeout", "how long to wait for each: seconds (argocd's) or a duration; 0 waits without bound")
	return cmd
}

// waitOptions are the appops.WaitOptions of o: argocd's default (sync,
// health and operation) when no flag asks for anything.
func (o appWaitOptions) waitOptions(interval time.Duration) appops.WaitOptions {
	w := appops.WaitOptions{Sync: o.sync, Health: o.health, Operation: o.operation, Suspended: o.suspended, Degraded: o.degraded, Interval: interval}
	if !w.Sync && !w.Health && !w.Operation && !w.Suspended && !w.Degraded {
		w.Sync, w.Health, w.Operation = true, true, true
	}
	w.Timeout = time.Duration(o.timeout)
	if w.Timeout <= 0 {
		w.Timeout = unbounded
	}
	return w
}

// waitForApps waits, reading every interval, until each Application o
// names or selects is where o asks (appops.Wait), or gone with --delete.
func waitForApps(ctx context.Context, c client.Client, o appWaitOptions, interval time.Duration, out io.Writer) error {
	keys, err := o.namedOrSelected(ctx, c, o.names, o.selector)
	if err != nil {
		return err
	}
	w := o.waitOptions(interval)
	for _, key := range keys {
		if o.delete {
			if err := waitGone(ctx, c, key, w.Timeout); err != nil {
				return err
			}
			fmt.Fprintf(out, "application %s: deleted\n", key.Name)
			continue
		}
		app, err := appops.Wait(ctx, c, key, w)
		if err != nil {
			var te *appops.TimeoutError
			if errors.As(err, &te) && te.Last != nil {
				return &exitError{code: exitDenied, err: fmt.Errorf("application %s: still %s and %s after %s", key.Name,
					orDash(string(te.Last.Status.Sync.Status)), orDash(string(te.Last.Status.Health.Status)), time.Duration(o.timeout))}
			}
			return asUsage(err)
		}
		fmt.Fprintf(out, "application %s: %s and %s\n", key.Name, app.Status.Sync.Status, app.Status.Health.Status)
	}
	return nil
}
