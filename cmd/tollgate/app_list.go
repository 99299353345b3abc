package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

func newAppListCmd() *cobra.Command {
	var namespace, kubeconfig, output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List Applications with their sync and health, like argocd app list",
		Long: `List the Applications of --namespace, sorted by name: project, sync status,
health, the revision last compared and the conditions they carry.

Exit status: 0 when the list was shown; 2 on usage errors or when the
cluster cannot be read.`,
		Example: `  tollgate app list
  tollgate app list -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkAppGetFormat(output); err != nil {
				return err
			}
			c, _, err := newAppClient(kubeconfig)
			if err != nil {
				return err
			}
			var list v1alpha1.ApplicationList
			if err := c.List(cmd.Context(), &list, client.InNamespace(namespace)); err != nil {
				return fmt.Errorf("list applications in %s: %w", namespace, err)
			}
			slices.SortFunc(list.Items, func(a, b v1alpha1.Application) int { return strings.Compare(a.Name, b.Name) })
			if output != appGetFormatText {
				return writeStructured(cmd.OutOrStdout(), output, list.Items)
			}
			return writeAppList(cmd.OutOrStdout(), list.Items)
		},
	}
	cmd.Flags().StringVar(&namespace, "namespace", application.DefaultNamespace, "namespace of the Applications")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig `FILE` (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account)")
	cmd.Flags().StringVarP(&output, "output", "o", appGetFormatText, "output format: text, yaml or json")
	return cmd
}

// writeAppList prints Applications as a table.
func writeAppList(w io.Writer, apps []v1alpha1.Application) error {
	if len(apps) == 0 {
		_, err := fmt.Fprintln(w, "no applications")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROJECT\tSYNC\tHEALTH\tREVISION\tCONDITIONS")
	for _, a := range apps {
		project := a.Spec.Project
		if project == "" {
			project = "default"
		}
		revs := a.Status.Sync.Revisions
		if len(revs) == 0 {
			revs = []string{a.Status.Sync.Revision}
		}
		short := make([]string, len(revs))
		for i, r := range revs {
			short[i] = v1alpha1.ShortRevision(r)
		}
		rev := strings.Join(short, ",")
		conds := "-"
		if len(a.Status.Conditions) > 0 {
			var types []string
			for _, c := range a.Status.Conditions {
				types = append(types, c.Type)
			}
			conds = strings.Join(types, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.Name, project, orDash(string(a.Status.Sync.Status)), orDash(string(a.Status.Health.Status)), orDash(rev), conds)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// appWaitOptions are the flags of `tollgate app wait`.
type appWaitOptions struct {
	appTarget
	sync, health bool
	timeout      time.Duration
}

func newAppWaitCmd() *cobra.Command {
	o := appWaitOptions{}
	cmd := &cobra.Command{
		Use:   "wait NAME",
		Short: "Wait until an Application is synced and healthy, like argocd app wait",
		Long: `Wait until the Application NAME has no operation in progress and, with
--sync, is Synced and, with --health, is Healthy (neither flag: both).

Exit status: 0 when the Application got there; 1 when --timeout passed
first; 2 on usage errors or when the Application does not exist or is
deleted.`,
		Example: `  tollgate app wait billing --health --timeout 5m`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			if o.timeout <= 0 {
				return usageError(fmt.Errorf("invalid --timeout %s: must be positive", o.timeout))
			}
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			return waitForApp(cmd.Context(), c, o, appops.DefaultWaitOptions().Interval, cmd.OutOrStdout())
		},
	}
	o.addFlags(cmd.Flags())
	cmd.Flags().BoolVar(&o.sync, "sync", false, "wait until Synced")
	cmd.Flags().BoolVar(&o.health, "health", false, "wait until Healthy")
	cmd.Flags().DurationVar(&o.timeout, "timeout", appops.DefaultWaitOptions().Timeout, "how long to wait")
	return cmd
}

// waitForApp waits, reading every interval, until the Application is where
// o asks (appops.Wait); neither --sync nor --health waits for both.
func waitForApp(ctx context.Context, c client.Client, o appWaitOptions, interval time.Duration, out io.Writer) error {
	key := o.key()
	app, err := appops.Wait(ctx, c, key, appops.WaitOptions{
		Sync: o.sync || !o.health, Health: o.health || !o.sync, Interval: interval, Timeout: o.timeout,
	})
	if err != nil {
		var te *appops.TimeoutError
		if errors.As(err, &te) && te.Last != nil {
			return &exitError{code: exitDenied, err: fmt.Errorf("application %s: still %s and %s after %s", key.Name,
				orDash(string(te.Last.Status.Sync.Status)), orDash(string(te.Last.Status.Health.Status)), o.timeout)}
		}
		return asUsage(err)
	}
	fmt.Fprintf(out, "application %s: %s and %s\n", key.Name, app.Status.Sync.Status, app.Status.Health.Status)
	return nil
}
