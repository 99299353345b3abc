package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

// The emergency brake of a GitOps runbook: turn automation off (app set),
// see what was deployed (app history), roll back to it (app rollback), fix
// Git, turn automation on again.

// appSetOptions are the flags of `tollgate app set`: the brake's
// (syncPolicy, selfHeal, autoPrune) and argocd app set's field flags.
type appSetOptions struct {
	appTarget
	syncPolicy string
	selfHeal   bool
	autoPrune  bool
	// changed are the flags given on the command line.
	changed func(string) bool
	// spec are argocd's field flags; position is --source-position.
	spec     appSpecOptions
	position int
}

// setSyncPolicy sets spec.syncPolicy.automated and says what it did.
func setSyncPolicy(ctx context.Context, c client.Client, o appSetOptions) (string, error) {
	if err := o.checkBrake(); err != nil {
		return "", err
	}
	app, err := readApp(ctx, c, o.key())
	if err != nil {
		return "", err
	}
	msg, edit := o.brake(app)
	return msg, appops.Edit(ctx, c, app, "set sync policy of", edit)
}

// checkBrake refuses a --sync-policy tollgate does not know, or the
// automated flags with none.
func (o appSetOptions) checkBrake() error {
	switch o.syncPolicy {
	case "none", "automated":
	case "":
		return usageError(errors.New("--sync-policy is required: none or automated"))
	default:
		return usageError(fmt.Errorf("invalid --sync-policy %q: want none or automated", o.syncPolicy))
	}
	if o.syncPolicy == "none" && (o.isChanged("self-heal") || o.isChanged("auto-prune")) {
		return usageError(errors.New("--self-heal and --auto-prune need --sync-policy automated"))
	}
	return nil
}

func (o appSetOptions) isChanged(flag string) bool { return o.changed != nil && o.changed(flag) }

// brake is the change of the automated sync policy o asks of app, as read,
// and what it says: none removes it; automated sets it, keeping prune and
// selfHeal unless --auto-prune or --self-heal are given.
func (o appSetOptions) brake(app *v1alpha1.Application) (string, func(*v1alpha1.Application)) {
	if o.syncPolicy == "none" {
		return "automated sync turned off", func(a *v1alpha1.Application) {
			if a.Spec.SyncPolicy != nil {
				a.Spec.SyncPolicy.Automated = nil
			}
		}
	}
	var auto v1alpha1.SyncPolicyAutomated
	if sp := app.Spec.SyncPolicy; sp != nil && sp.Automated != nil {
		auto = *sp.Automated
	}
	if o.isChanged("self-heal") {
		auto.SelfHeal = o.selfHeal
	}
	if o.isChanged("auto-prune") {
		auto.Prune = o.autoPrune
	}
	auto.Enabled = nil
	return fmt.Sprintf("automated sync turned on (prune %t, selfHeal %t)", auto.Prune, auto.SelfHeal), func(a *v1alpha1.Application) {
		if a.Spec.SyncPolicy == nil {
			a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{}
		}
		a.Spec.SyncPolicy.Automated = &auto
	}
}

func newAppHistoryCmd() *cobra.Command {
	o := appTarget{}
	var output string
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "List an Application's deployments, like argocd app history",
		Long: `List the deployments recorded in the Application NAME's status.history, oldest
first: the ID a rollback takes, when the sync finished, who started it and the
revision (one per source for a multi-source Application).

Exit status: 0 when the history was shown; 2 on usage errors or when the
Application does not exist.`,
		Example: `  tollgate app history billing
  tollgate app history billing -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			if err := checkAppGetFormat(output); err != nil {
				return err
			}
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			app, err := readApp(cmd.Context(), c, o.key())
			if err != nil {
				return err
			}
			if output != appGetFormatText {
				return writeStructured(cmd.OutOrStdout(), output, app.Status.History)
			}
			return writeHistory(cmd.OutOrStdout(), app.Status.History)
		},
	}
	o.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&output, "output", "o", appGetFormatText, "output format: text, yaml or json")
	return cmd
}

// writeStructured prints v as YAML or JSON.
func writeStructured(w io.Writer, format string, v any) error {
	var out []byte
	var err error
	if format == appGetFormatYAML {
		out, err = yaml.Marshal(v)
	} else {
		out, err = json.MarshalIndent(v, "", "  ")
		out = append(out, '\n')
	}
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	_, err = w.Write(out)
	return err
}

// writeHistory prints a history as a table.
func writeHistory(w io.Writer, history []v1alpha1.RevisionHistory) error {
	if len(history) == 0 {
		_, err := fmt.Fprintln(w, "no deployments recorded")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tDEPLOYED\tINITIATED BY\tREVISION")
	for _, h := range history {
		by := appops.Initiator(h.InitiatedBy)
		revs := h.Revisions
		if len(revs) == 0 {
			revs = []string{h.Revision}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", h.ID, h.DeployedAt.UTC().Format(time.RFC3339), by, strings.Join(revs, ","))
	}
	return tw.Flush()
}

// appRollbackOptions are the flags of `tollgate app rollback`.
type appRollbackOptions struct {
	appTarget
	id    string
	prune bool
}

func newAppRollbackCmd() *cobra.Command {
	o := appRollbackOptions{}
	cmd := &cobra.Command{
		Use:   "rollback NAME [ID]",
		Short: "Sync an Application back to a deployment of its history, like argocd app rollback",
		Long: `Request a sync of the Application NAME to the sources and revisions of the
deployment ID of its history (tollgate app history; default: the one before
the last). Refused while automated sync is on, as Argo CD refuses it: the
next automated sync would undo the rollback. Turn it off first with
tollgate app set NAME --sync-policy none. The rollback is judged by the
policies like any sync, before anything is fetched.

Exit status: 0 when the rollback was requested; 2 on usage errors, when the
Application does not exist, has automated sync on, an operation in progress,
or no such deployment.`,
		Example: `  tollgate app set billing --sync-policy none
  tollgate app rollback billing 3`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			if len(args) == 2 {
				o.id = args[1]
			}
			c, kc, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			user := requester(kc)
			h, err := requestRollback(cmd.Context(), c, o, user)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application %s: rollback to deployment %d requested by %s\n", o.name, h.ID, user)
			return nil
		},
	}
	o.addFlags(cmd.Flags())
	cmd.Flags().BoolVar(&o.prune, "prune", false, "delete resources the deployment does not have")
	return cmd
}

// requestRollback sets operation.sync to the deployment's sources and
// revisions and returns the deployment.
func requestRollback(ctx context.Context, c client.Client, o appRollbackOptions, user string) (*v1alpha1.RevisionHistory, error) {
	h, err := appops.Rollback(ctx, c, o.key(), o.id, o.prune, user)
	return h, asUsage(err)
}
