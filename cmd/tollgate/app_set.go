package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

func newAppSetCmd() *cobra.Command {
	o := appSetOptions{}
	cmd := &cobra.Command{
		Use:   "set NAME",
		Short: "Set an Application's fields, like argocd app set",
		Long: `Set fields of the Application NAME's spec, like argocd app set: each flag
given sets its field (--repo, --path, --revision, --dest-*, --project, the
Helm, Kustomize, directory, Jsonnet and plugin flags, --sync-option,
--sync-retry-*), mapped to the spec as argocd maps them; fields no flag
names are left alone. For a multi-source Application, --source-position N
(counting from 1) or --source-name NAME says which source the source flags
change.

The emergency brake: --sync-policy none removes spec.syncPolicy.automated
(nothing syncs by itself until it is turned on again, and a rollback
becomes possible); --sync-policy automated sets it, with --self-heal and
--auto-prune when given (their current values are kept otherwise). Given
alone, these print what they did.

The change is one JSON merge patch under the Application's
resourceVersion, made with your kubeconfig, so RBAC and the admission
webhook judge it.

Exit status: 0 when the Application was changed; 2 on usage errors, a bad
flag value, or when the Application does not exist.`,
		Example: `  tollgate app set billing --sync-policy none
  tollgate app set billing --sync-policy automated --self-heal --auto-prune
  tollgate app set billing --revision v1.4.0 --helm-set image.tag=v1.4.0
  tollgate app set billing --source-position 2 --path overlays/prod --kustomize-image web=web:v2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			o.name, o.changed = args[0], f.Changed
			o.syncPolicy, o.selfHeal, o.autoPrune = o.spec.syncPolicy, o.spec.selfHeal, o.spec.autoPrune
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			if len(specFlagsGiven(f)) == 0 && o.position == -1 {
				msg, err := setSyncPolicy(cmd.Context(), c, o)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "application %s: %s\n", o.name, msg)
				return nil
			}
			return setAppSpec(cmd.Context(), c, o, f)
		},
	}
	o.addFlags(cmd.Flags())
	addAppSpecFlags(cmd.Flags(), &o.spec)
	cmd.Flags().IntVar(&o.position, "source-position", -1, "Position of the source from the list of sources of the app. Counting starts at 1.")
	return cmd
}

// setAppSpec sets the fields the flags of f given on the command line
// name, as argocd app set does, with the brake's meaning of
// --sync-policy; nothing is written when a flag's value is bad.
func setAppSpec(ctx context.Context, c client.Client, o appSetOptions, f *pflag.FlagSet) error {
	if o.isChanged("sync-policy") {
		if err := o.checkBrake(); err != nil {
			return err
		}
	}
	app, err := readApp(ctx, c, o.key())
	if err != nil {
		return err
	}
	pos, err := sourcePosition(&app.Spec, o.position, o.spec.sourceName)
	if err != nil {
		return err
	}
	spec := app.Spec.DeepCopy()
	if _, err := o.spec.applySpec(f, spec, pos); err != nil {
		return err
	}
	var brake func(*v1alpha1.Application)
	if o.isChanged("sync-policy") {
		_, brake = o.brake(app)
	}
	return appops.Edit(ctx, c, app, "set", func(a *v1alpha1.Application) {
		a.Spec = *spec
		if brake != nil {
			brake(a)
			if o.isChanged("allow-empty") && a.Spec.SyncPolicy != nil && a.Spec.SyncPolicy.Automated != nil {
				a.Spec.SyncPolicy.Automated.AllowEmpty = o.spec.allowEmpty
			}
		}
	})
}
