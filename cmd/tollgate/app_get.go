package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
	"github.com/tollgate-dev/tollgate/internal/apptext"
)

// Output formats of `tollgate app get`.
const (
	appGetFormatText = "text"
	appGetFormatYAML = "yaml"
	appGetFormatJSON = "json"
)

// appGetOptions are the flags of `tollgate app get`.
type appGetOptions struct {
	appTarget
	output string
	// refresh is "", or the refresh asked for first: normal or hard.
	refresh string
}

func newAppGetCmd() *cobra.Command {
	o := appGetOptions{}
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show an Application's state, like argocd app get",
		Long: `Show the Application NAME: its sources and destination, sync and health
status, conditions (a sync refused by policy says why there, with the rule
ids), the last operation, and its resources with their sync wave and, from
the last sync, their hook and message. --refresh (--hard-refresh) first asks
the controller to compare it with Git (render again) and waits until it has.

-o yaml and -o json print the whole Application as the API server stores it,
fields tollgate does not model included, without metadata.managedFields.

Exit status: 0 when the Application was shown, whatever its state; 2 on
usage errors, when the Application does not exist, or when the cluster
cannot be read.`,
		Example: `  tollgate app get billing
  tollgate app get billing --kubeconfig .tollgate/kubeconfig
  tollgate app get billing -o yaml
  tollgate app get billing --refresh`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return runAppGet(cmd, o)
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.StringVarP(&o.output, "output", "o", appGetFormatText, "output format: text, yaml or json")
	addRefreshFlags(f, &o.refresh)
	return cmd
}

// addRefreshFlags adds --refresh and --hard-refresh, which set into to the
// refresh type asked for ("" for none; hard wins).
func addRefreshFlags(f *pflag.FlagSet, into *string) {
	f.Var(refreshFlag{into, v1alpha1.RefreshTypeNormal}, "refresh", "compare with Git first: ask the controller for a refresh and wait for it, like argocd app get --refresh")
	f.Var(refreshFlag{into, v1alpha1.RefreshTypeHard}, "hard-refresh", "as --refresh, rendering again without the manifest cache")
	for _, name := range []string{"refresh", "hard-refresh"} {
		f.Lookup(name).NoOptDefVal = "true"
	}
}

// refreshFlag is a boolean flag that sets the refresh type (hard wins).
type refreshFlag struct {
	into *string
	typ  string
}

func (f refreshFlag) String() string { return strconv.FormatBool(f.into != nil && *f.into == f.typ) }
func (f refreshFlag) Type() string   { return "bool" }
func (f refreshFlag) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	if on && (*f.into == "" || f.typ == v1alpha1.RefreshTypeHard) {
		*f.into = f.typ
	}
	return nil
}

// appRefreshTimeout bounds the wait for a refresh.
const appRefreshTimeout = 2 * time.Minute

// refreshApp asks the controller to compare the Application key with Git
// and waits until it has (appops.Refresh).
func refreshApp(ctx context.Context, c client.Client, key types.NamespacedName, typ string, timeout time.Duration) error {
	return asUsage(appops.Refresh(ctx, c, key, typ, timeout))
}

// runAppGet reads the Application and prints it.
func runAppGet(cmd *cobra.Command, o appGetOptions) error {
	if err := checkAppGetFormat(o.output); err != nil {
		return err
	}
	c, _, err := newAppClient(o.kubeconfig)
	if err != nil {
		return err
	}
	if o.refresh != "" {
		if err := refreshApp(cmd.Context(), c, o.key(), o.refresh, appRefreshTimeout); err != nil {
			return err
		}
	}
	app, err := getApp(cmd.Context(), c, o.key())
	if err != nil {
		return err
	}
	return printApp(cmd.OutOrStdout(), app, o.output)
}

// checkAppGetFormat rejects an unknown --output format.
func checkAppGetFormat(format string) error {
	switch format {
	case appGetFormatText, appGetFormatYAML, appGetFormatJSON:
		return nil
	}
	return usageError(fmt.Errorf("invalid --output %q: valid formats are text, yaml, json", format))
}

// getApp reads the Application as the API server stores it: unstructured,
// so that -o yaml and -o json keep the fields tollgate's types do not
// model. A missing Application is a usage error.
func getApp(ctx context.Context, c client.Reader, key types.NamespacedName) (*unstructured.Unstructured, error) {
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(v1alpha1.ApplicationGroupVersionKind)
	if err := c.Get(ctx, key, app); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, usageError(fmt.Errorf("application %s not found in namespace %s", key.Name, key.Namespace))
		}
		return nil, fmt.Errorf("get application %s: %w", key.Name, err)
	}
	return app, nil
}

// printApp writes app to w in format: text (a summary like argocd app get),
// or yaml or json (the whole object without metadata.managedFields).
func printApp(w io.Writer, app *unstructured.Unstructured, format string) error {
	switch format {
	case appGetFormatText:
		var typed v1alpha1.Application
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(app.Object, &typed); err != nil {
			return fmt.Errorf("decode application %s: %w", app.GetName(), err)
		}
		return apptext.Write(w, &typed)
	case appGetFormatYAML, appGetFormatJSON:
	default:
		return checkAppGetFormat(format)
	}
	obj := app.DeepCopy()
	unstructured.RemoveNestedField(obj.Object, "metadata", "managedFields")
	var out []byte
	var err error
	if format == appGetFormatYAML {
		out, err = yaml.Marshal(obj.Object)
	} else {
		out, err = json.MarshalIndent(obj.Object, "", "  ")
		out = append(out, '\n')
	}
	if err != nil {
		return fmt.Errorf("encode application %s: %w", app.GetName(), err)
	}
	_, err = w.Write(out)
	return err
}
