package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
)

func newAppWindowsCmd() *cobra.Command {
	o := appTarget{}
	cmd := &cobra.Command{
		Use:   "windows NAME",
		Short: "Show the sync windows that apply to an Application now, like argocd proj windows list",
		Long: `Show the sync windows of the Application NAME's AppProject that apply to it:
kind, schedule, duration, whether each is open now, manualSync, time zone and
description, then whether a manual and an automated sync may run now, by the
rules the sync engine applies.

Exit status: 0 when shown; 2 on usage errors, when the Application or its
AppProject does not exist, or when a window cannot be read.`,
		Example: `  tollgate app windows billing`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			app, err := readApp(cmd.Context(), c, o.key())
			if err != nil {
				return err
			}
			proj, err := argocd.Project(cmd.Context(), o.namespace, app.ProjectName(), []client.Reader{c})
			if err != nil {
				return err
			}
			if proj == nil {
				return usageError(fmt.Errorf("appproject %s of application %s not found in namespace %s", app.ProjectName(), o.name, o.namespace))
			}
			return writeWindows(cmd.OutOrStdout(), proj, app, time.Now())
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// writeWindows prints the windows of proj that apply to app at now.
func writeWindows(w io.Writer, proj *v1alpha1.AppProject, app *v1alpha1.Application, now time.Time) error {
	states, manual, automated, err := application.SyncWindows(proj, app, now)
	if err != nil {
		return usageError(err)
	}
	if len(states) == 0 {
		fmt.Fprintf(w, "no sync window of appproject %s applies to application %s\n", proj.Name, app.Name)
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tSCHEDULE\tDURATION\tACTIVE\tMANUAL SYNC\tTIME ZONE\tDESCRIPTION")
		for _, s := range states {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%t\t%s\t%s\n", s.Window.Kind, s.Window.Schedule, s.Window.Duration, s.Active, s.Window.ManualSync,
				orDash(s.Window.TimeZone), orDash(s.Window.Description))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, line := range []struct{ what, reason string }{{"manual sync", manual}, {"automated sync", automated}} {
		if line.reason == "" {
			fmt.Fprintf(w, "%s: allowed now\n", line.what)
		} else {
			fmt.Fprintf(w, "%s: held back now (%s)\n", line.what, line.reason)
		}
	}
	return nil
}
