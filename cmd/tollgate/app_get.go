package main

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/tollgate-dev/tollgate/internal/apptree"
)

// Output formats of `tollgate app get`.
const (
	// appGetFormatWide is argocd's name of the text, and its default.
	appGetFormatWide = "wide"
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
	// showOperation is accepted for argocd's sake: the text always shows
	// the current or last operation.
	showOperation bool
	showParams    bool
	// sourcePosition (from 1) or sourceName choose the source of a
	// multi-source Application whose parameters --show-params shows.
	sourcePosition int
	sourceName     string
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

-o wide, the default, is the text (argocd's name for it; -o text says the
same). -o tree prints, in place of the resources table, the live objects of
status.resources and under each the objects it owns (a Deployment's
ReplicaSets and their Pods), read from the cluster with your kubeconfig, as
argocd app get -o tree does; -o tree=detailed adds their age and the reason
for their health. The tree reads only the cluster of your kubeconfig: an
Application deployed to another cluster is refused.

--show-params adds the Helm parameters of the source (of the one
--source-position or --source-name names, for several sources). The last
operation is always shown; --show-operation is accepted as argocd's.

-o yaml and -o json print the whole Application as the API server stores it,
fields tollgate does not model included, without metadata.managedFields.

Exit status: 0 when the Application was shown, whatever its state; 2 on
usage errors, when the Application does not exist, or when the cluster
cannot be read (with a tree, when its destination is another cluster).`,
		Example: `  tollgate app get billing
  tollgate app get billing --kubeconfig .tollgate/kubeconfig
  tollgate app get billing -o yaml
  tollgate app get billing --refresh
  tollgate app get billing -o tree
  tollgate app get billing --show-params`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return runAppGet(cmd, o)
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.StringVarP(&o.output, "output", "o", appGetFormatWide, "output format: wide (text), tree, tree=detailed, yaml or json")
	f.BoolVar(&o.showOperation, "show-operation", false, "show the current or last operation (always shown)")
	f.BoolVar(&o.showParams, "show-params", false, "show the Helm parameters of the source")
	f.IntVar(&o.sourcePosition, "source-position", -1, "with --show-params, the position (from 1) of the source of a multi-source Application")
	f.StringVar(&o.sourceName, "source-name", "", "with --show-params, the name of the source of a multi-source Application")
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
	c, kc, err := newAppClient(o.kubeconfig)
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
	switch o.output {
	case appGetFormatYAML, appGetFormatJSON:
		return printApp(cmd.OutOrStdout(), app, o.output)
	}
	typed, err := typedApp(app)
	if err != nil {
		return err
	}
	var tree *apptree.Tree
	if o.output == formatTree || o.output == formatTreeDetailed {
		if tree, err = liveTree(cmd.Context(), c, kc, typed); err != nil {
			return err
		}
		warnTree(cmd.ErrOrStderr(), tree)
	}
	return writeAppText(cmd.OutOrStdout(), typed, tree, o, time.Now())
}

// checkAppGetFormat rejects an unknown --output format.
func checkAppGetFormat(format string) error {
	switch format {
	case appGetFormatWide, appGetFormatText, appGetFormatYAML, appGetFormatJSON, formatTree, formatTreeDetailed:
		return nil
	}
	return usageError(fmt.Errorf("unknown output format: %s (valid: wide, text, tree, tree=detailed, yaml, json)", format))
}

// typedApp decodes an Application read unstructured.
func typedApp(app *unstructured.Unstructured) (*v1alpha1.Application, error) {
	var typed v1alpha1.Application
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(app.Object, &typed); err != nil {
		return nil, fmt.Errorf("decode application %s: %w", app.GetName(), err)
	}
	return &typed, nil
}

// writeAppText prints app as argocd app get's wide or tree output: the
// header (summary, conditions, operation), with o.showParams the source's
// Helm parameters, then the resources table, or the tree when given.
func writeAppText(w io.Writer, app *v1alpha1.Application, tree *apptree.Tree, o appGetOptions, now time.Time) error {
	var src *v1alpha1.ApplicationSource
	if o.showParams {
		var err error
		if src, err = paramsSource(app, o.sourcePosition, o.sourceName); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(w, apptext.Header(app)); err != nil {
		return err
	}
	if src != nil && src.Helm != nil {
		if err := writeHelmParams(w, src.Helm); err != nil {
			return err
		}
	}
	if tree != nil {
		if len(tree.Roots) == 0 {
			return nil
		}
		fmt.Fprintln(w)
		return writeAppTree(w, app, tree, o.output == formatTreeDetailed, now)
	}
	if res := apptext.Resources(app); res != "" {
		_, err := io.WriteString(w, "\n"+res)
		return err
	}
	return nil
}

// paramsSource is the source whose parameters --show-params shows: the
// only one, or of several the one position (from 1) or name names, as
// argocd app get requires.
func paramsSource(app *v1alpha1.Application, position int, name string) (*v1alpha1.ApplicationSource, error) {
	if name != "" && position != -1 {
		return nil, usageError(errors.New("only one of --source-position and --source-name can be specified"))
	}
	if name != "" {
		position = 0
		for i, s := range app.Spec.Sources {
			if s.Name == name {
				position = i + 1
			}
		}
		if position == 0 {
			return nil, usageError(fmt.Errorf("unknown source name '%s'", name))
		}
	}
	if !app.Spec.HasMultipleSources() {
		return app.Spec.Source, nil
	}
	if position <= 0 {
		return nil, usageError(errors.New("source position should be specified and must be greater than 0 for applications with multiple sources"))
	}
	if position > len(app.Spec.Sources) {
		return nil, usageError(errors.New("source position should be less than the number of sources in the application"))
	}
	return &app.Spec.Sources[position-1], nil
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
	case appGetFormatText, appGetFormatWide:
		typed, err := typedApp(app)
		if err != nil {
			return err
		}
		return apptext.Write(w, typed)
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
