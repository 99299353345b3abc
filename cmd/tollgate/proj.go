package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
)

func newProjCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "proj",
		Short: "Read Argo CD AppProjects",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(errors.New("missing subcommand: see tollgate proj --help"))
		},
	}
	windows := &cobra.Command{
		Use:   "windows",
		Short: "Read an AppProject's sync windows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(errors.New("missing subcommand: see tollgate proj windows --help"))
		},
	}
	var namespace, kubeconfig string
	list := &cobra.Command{
		Use:   "list PROJECT",
		Short: "List an AppProject's sync windows, like argocd proj windows list",
		Long: `List the sync windows of the AppProject PROJECT in argocd proj windows list's
table: each window's index, whether it is open now (Active or Inactive, by
the rules the sync engine applies), kind, schedule, duration, the
applications, namespaces and clusters it matches, manualSync, syncOverrun,
time zone and andOperator.

Exit status: 0 when shown; 2 on usage errors, when the AppProject does not
exist, or when the cluster cannot be read.`,
		Example: `  tollgate proj windows list team-web`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := newAppClient(kubeconfig)
			if err != nil {
				return err
			}
			proj, err := argocd.Project(cmd.Context(), namespace, args[0], []client.Reader{c})
			if err != nil {
				return err
			}
			if proj == nil {
				return usageError(fmt.Errorf("appproject %s not found in namespace %s", args[0], namespace))
			}
			return writeProjWindows(cmd.OutOrStdout(), proj, time.Now())
		},
	}
	list.Flags().StringVar(&namespace, "namespace", application.DefaultNamespace, "the control-plane namespace: its AppProjects")
	list.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig `FILE` (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account)")
	windows.AddCommand(list)
	cmd.AddCommand(windows)
	return cmd
}

// writeProjWindows prints proj's sync windows at now as argocd's
// printSyncWindows does; a window that cannot be read is Inactive, as
// there.
func writeProjWindows(w io.Writer, proj *v1alpha1.AppProject, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tKIND\tSCHEDULE\tDURATION\tAPPLICATIONS\tNAMESPACES\tCLUSTERS\tMANUALSYNC\tSYNCOVERRUN\tTIMEZONE\tUSEANDOPERATOR\t")
	for i, win := range proj.Spec.SyncWindows {
		active, _ := application.WindowActive(win, now)
		fmt.Fprintln(tw, strings.Join([]string{strconv.Itoa(i), pick(active, "Active", "Inactive"), win.Kind, win.Schedule, win.Duration,
			orDash(strings.Join(win.Applications, ",")), orDash(strings.Join(win.Namespaces, ",")), orDash(strings.Join(win.Clusters, ",")),
			pick(win.ManualSync, "Enabled", "Disabled"), pick(win.SyncOverrun, "Enabled", "Disabled"), win.TimeZone,
			pick(win.AndOperator, "Enabled", "Disabled")}, "\t")+"\t")
	}
	return tw.Flush()
}

func pick(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
