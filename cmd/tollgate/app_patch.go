package main

import (
	"errors"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/appops"
)

func newAppPatchCmd() *cobra.Command {
	o := appTarget{}
	var patch, typ string
	cmd := &cobra.Command{
		Use:   "patch NAME",
		Short: "Patch an Application, like argocd app patch",
		Long: `Apply --patch to the Application NAME as argocd app patch does: a JSON patch
(RFC 6902, --type json, the default) or a JSON merge patch (--type merge),
applied to the Application as read; the spec, labels, annotations and
finalizers of the result are written, under the resourceVersion read, with
your kubeconfig (RBAC and the admission webhook judge it). The patched
Application is printed as YAML.

Exit status: 0 when the Application was patched; 2 on usage errors, a
patch that does not decode or apply, or when the Application does not
exist.`,
		Example: `  tollgate app patch myapplication --patch='[{"op": "replace", "path": "/spec/source/path", "value": "newPath"}]' --type json
  tollgate app patch myapplication --patch '{"spec": { "source": { "targetRevision": "master" } }}' --type merge`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			if patch == "" {
				return usageError(errors.New("--patch is required: a JSON patch, or a merge patch with --type merge"))
			}
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			app, err := appops.PatchRequest(cmd.Context(), c, o.key(), patch, typ)
			if err != nil {
				return asUsage(err)
			}
			out, err := yaml.Marshal(app)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(append(out, '\n'))
			return err
		},
	}
	o.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&patch, "patch", "", "Patch body")
	cmd.Flags().StringVar(&typ, "type", appops.PatchTypeJSON, "The type of patch being provided; one of [json merge]")
	return cmd
}
