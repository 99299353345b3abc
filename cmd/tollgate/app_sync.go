package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

// appSyncOptions are the flags of `tollgate app sync`, argocd app sync's.
type appSyncOptions struct {
	appTarget
	names                                     []string
	selector                                  string
	projects                                  []string
	prune, dryRun, force, async               bool
	replace, serverSide, applyOutOfSyncOnly   bool
	revision, strategy                        string
	resources                                 []string
	timeout                                   secondsOrDuration
	retryLimit                                int64
	retryBackoffDuration, retryBackoffMaxTime time.Duration
	retryBackoffFactor                        int64
}

func newAppSyncCmd() *cobra.Command {
	o := appSyncOptions{}
	var wait bool
	cmd := &cobra.Command{
		Use:   "sync [NAME... | -l SELECTOR | --project PROJECT]",
		Short: "Sync Applications and wait for the result, like argocd app sync",
		Long: `Request a sync of each Application named (or selected by -l and --project),
as argocd app sync does: its operation.sync is set (a merge patch guarded by
the resourceVersion, judged by the admission webhook), and the controller
runs it. Unless --async, wait for the operation to end (--timeout, seconds
or a duration, 0 for no bound) and print its result, then go on to the next.

--resource GROUP:KIND:NAME (or GROUP:KIND:NAMESPACE/NAME; '*' matches
anything, a leading '!' excludes) syncs only those resources; --dry-run
applies nothing; --strategy apply skips hooks, hook (the default) runs
them; --force forces the apply; --replace, --server-side and
--apply-out-of-sync-only set the sync options of that name; --retry-limit
and the backoff flags retry a failed sync. The initiator is the kubeconfig
user, or "` + cliUsername + `".

Exit status: 0 when every sync was requested (and, waiting, succeeded, or
was a dry run); 1 when one failed or was refused by policy, did not end
within --timeout, or left resources that need pruning; 2 on usage errors,
a missing Application, or one with an operation in progress.`,
		Example: `  tollgate app sync guestbook
  tollgate app sync guestbook --prune --revision v1.2.0 --timeout 300
  tollgate app sync guestbook --resource apps:Deployment:web --dry-run
  tollgate app sync -l app.kubernetes.io/instance=platform --async`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && o.selector == "" && len(o.projects) == 0 {
				return usageError(errors.New("name an Application, or give --selector or --project"))
			}
			o.names = args
			if _, err := o.request(); err != nil {
				return err
			}
			c, kc, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			return syncApps(cmd.Context(), c, o, requester(kc), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.BoolVar(&o.prune, "prune", false, "delete resources the Application no longer renders")
	f.StringVar(&o.revision, "revision", "", "sync this revision instead of the target revision")
	f.BoolVar(&o.dryRun, "dry-run", false, "preview the apply without changing the cluster")
	f.StringArrayVar(&o.resources, "resource", nil, "sync only these resources: GROUP:KIND:NAME or !GROUP:KIND:NAME to exclude ('*' matches anything; repeatable)")
	f.StringVarP(&o.selector, "selector", "l", "", "sync the Applications with matching labels (=, ==, !=, in, notin, exists, !exists)")
	f.StringArrayVar(&o.projects, "project", nil, "sync the Applications of this project (repeatable)")
	f.StringVar(&o.strategy, "strategy", "", "sync strategy: apply (no hooks) or hook")
	f.BoolVar(&o.force, "force", false, "use a force apply")
	f.BoolVar(&o.replace, "replace", false, "replace (kubectl replace/create) instead of apply: sync option Replace=true")
	f.BoolVar(&o.serverSide, "server-side", false, "sync option ServerSideApply=true")
	f.BoolVar(&o.applyOutOfSyncOnly, "apply-out-of-sync-only", false, "sync only out-of-sync resources: sync option ApplyOutOfSyncOnly=true")
	f.BoolVar(&o.async, "async", false, "do not wait for the sync to end")
	f.Var(&o.timeout, "timeout", "how long to wait for each sync: seconds (argocd's) or a duration; 0 waits without bound")
	f.Int64Var(&o.retryLimit, "retry-limit", 0, "retries of a failed sync")
	f.DurationVar(&o.retryBackoffDuration, "retry-backoff-duration", 5*time.Second, "first retry's delay")
	f.DurationVar(&o.retryBackoffMaxTime, "retry-backoff-max-duration", 3*time.Minute, "longest retry delay")
	f.Int64Var(&o.retryBackoffFactor, "retry-backoff-factor", 2, "factor of each retry's delay")
	f.BoolVar(&wait, "wait", true, "wait for the result (the default; --async does not)")
	_ = f.MarkDeprecated("wait", "app sync waits by default, as argocd app sync; --async returns at once")
	return cmd
}

// request is the sync o asks for.
func (o appSyncOptions) request() (appops.SyncOptions, error) {
	out := appops.SyncOptions{Prune: o.prune, Revision: o.revision, DryRun: o.dryRun}
	for _, r := range o.resources {
		res, err := parseSyncResource(r)
		if err != nil {
			return out, usageError(err)
		}
		out.Resources = append(out.Resources, res)
	}
	switch o.strategy {
	case "apply":
		out.Strategy = &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{Force: o.force}}
	case "", "hook":
		out.Strategy = &v1alpha1.SyncStrategy{Hook: &v1alpha1.SyncStrategyHook{SyncStrategyApply: v1alpha1.SyncStrategyApply{Force: o.force}}}
	default:
		return out, usageError(fmt.Errorf("unknown sync strategy: '%s'", o.strategy))
	}
	for opt, on := range map[string]bool{"Replace=true": o.replace, "ServerSideApply=true": o.serverSide, "ApplyOutOfSyncOnly=true": o.applyOutOfSyncOnly} {
		if on {
			out.SyncOptions = append(out.SyncOptions, opt)
		}
	}
	slices.Sort(out.SyncOptions)
	if o.retryLimit != 0 {
		factor := o.retryBackoffFactor
		out.Retry = &v1alpha1.RetryStrategy{Limit: o.retryLimit, Backoff: &v1alpha1.Backoff{
			Duration: o.retryBackoffDuration.String(), MaxDuration: o.retryBackoffMaxTime.String(), Factor: &factor,
		}}
	}
	return out, nil
}

// parseSyncResource reads argocd's GROUP:KIND:NAME, GROUP:KIND:NAMESPACE/NAME
// and their '!' exclusions.
func parseSyncResource(s string) (v1alpha1.SyncOperationResource, error) {
	r := v1alpha1.SyncOperationResource{}
	spec, excluded := strings.CutPrefix(s, "!")
	r.Exclude = excluded
	fields := strings.Split(spec, ":")
	if len(fields) != 3 {
		return r, fmt.Errorf("resource should have GROUP:KIND:NAME, but instead got: %s", spec)
	}
	r.Group, r.Kind, r.Name = fields[0], fields[1], fields[2]
	if ns, name, ok := strings.Cut(r.Name, "/"); ok {
		if strings.Contains(name, "/") {
			return r, fmt.Errorf("resource with namespace should have GROUP:KIND:NAMESPACE/NAME, but instead got: %s", spec)
		}
		r.Namespace, r.Name = ns, name
	}
	return r, nil
}

// syncApps requests the sync of each Application o names or selects and,
// unless o.async, waits for it before the next.
func syncApps(ctx context.Context, c client.Client, o appSyncOptions, user string, out io.Writer) error {
	req, err := o.request()
	if err != nil {
		return err
	}
	keys, err := o.targets(ctx, c)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return usageError(errors.New("no Application matches"))
	}
	for _, key := range keys {
		if err := asUsage(appops.Sync(ctx, c, key, req, user)); err != nil {
			return err
		}
		fmt.Fprintf(out, "application %s: sync requested by %s\n", key.Name, user)
		if o.async {
			continue
		}
		if err := waitForSync(ctx, c, key, time.Duration(o.timeout), syncCheck{dryRun: o.dryRun, partial: len(req.Resources) > 0}, out); err != nil {
			return err
		}
	}
	return nil
}

// targets are the Applications o names, then those its selector and
// projects select (argocd app sync adds them to the names).
func (o appSyncOptions) targets(ctx context.Context, c client.Client) ([]types.NamespacedName, error) {
	keys := o.namedApps(o.names)
	if o.selector == "" && len(o.projects) == 0 {
		return keys, nil
	}
	selected, err := o.selectedApps(ctx, c, o.selector, o.projects)
	return append(keys, selected...), err
}

// syncCheck says what of a sync's result fails the command, as argocd
// app sync decides: nothing of a dry run; the pruning a whole sync left
// undone, not that of a partial one.
type syncCheck struct{ dryRun, partial bool }

// waitForSync waits until the requested operation is over
// (appops.WaitForOperation) and prints its final state: a failed sync is
// exit status 1, and so is a whole sync that left resources needing
// pruning; a dry run's result is only printed.
func waitForSync(ctx context.Context, c client.Client, key types.NamespacedName, timeout time.Duration, check syncCheck, out io.Writer) error {
	if timeout <= 0 {
		timeout = unbounded
	}
	done, err := appops.WaitForOperation(ctx, c, key, appops.DefaultWaitOptions().Interval, timeout)
	if err != nil {
		var te *appops.TimeoutError
		if errors.As(err, &te) {
			return &exitError{code: exitDenied, err: fmt.Errorf("application %s: sync did not finish within %s", key.Name, timeout)}
		}
		return asUsage(err)
	}
	fmt.Fprintf(out, "application %s: %s: %s\n", key.Name, done.Phase, done.Message)
	switch {
	case check.dryRun:
		return nil
	case !done.Phase.Successful():
		return deniedError()
	case check.partial || done.SyncResult == nil:
		return nil
	}
	prune := 0
	for _, r := range done.SyncResult.Resources {
		if r.Status == v1alpha1.ResultCodePruneSkipped {
			prune++
		}
	}
	if prune > 0 {
		return &exitError{code: exitDenied, err: fmt.Errorf("application %s: %d resources require pruning", key.Name, prune)}
	}
	return nil
}

// unbounded is the wait of a --timeout of 0.
const unbounded = 100 * 365 * 24 * time.Hour

// secondsOrDuration is a --timeout of argocd's (a number of seconds) or
// a Go duration.
type secondsOrDuration time.Duration

func (d *secondsOrDuration) String() string { return time.Duration(*d).String() }
func (d *secondsOrDuration) Type() string   { return "duration" }
func (d *secondsOrDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if n, nerr := strconv.ParseUint(s, 10, 32); nerr == nil {
		v, err = time.Duration(n)*time.Second, nil
	}
	if err != nil {
		return fmt.Errorf("want seconds or a duration such as 5m")
	}
	if v < 0 {
		return fmt.Errorf("must not be negative")
	}
	*d = secondsOrDuration(v)
	return nil
}
