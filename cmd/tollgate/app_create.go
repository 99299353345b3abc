package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

// maxAppFileBytes bounds what app create reads from -f.
const maxAppFileBytes = 8 << 20

// appCreateOptions are the flags of `tollgate app create`, argocd app
// create's.
type appCreateOptions struct {
	appTarget
	spec         appSpecOptions
	file         string
	appName      string
	upsert       bool
	labels       []string
	annotations  []string
	setFinalizer bool
	// stdin is read for -f -.
	stdin io.Reader
}

func newAppCreateCmd() *cobra.Command {
	o := appCreateOptions{}
	cmd := &cobra.Command{
		Use:   "create [NAME]",
		Short: "Create an Application, like argocd app create",
		Long: `Create Applications as argocd app create does: from -f FILE (YAML or JSON,
several documents allowed; - reads stdin), or from NAME and the field flags
(--repo, --path, --revision, --dest-server or --dest-name,
--dest-namespace, --project, --sync-policy, the Helm, Kustomize, directory
and plugin flags). The field flags also override those of a single-source
Application read from FILE (not from stdin), as in argocd. An empty
project is "default".

An Application that exists already is left alone when its spec, labels,
annotations and finalizers are the ones asked (printed "unchanged"), and
refused when they differ, unless --upsert: then its spec and finalizers
are replaced and the labels and annotations merged ("updated").

The Application is created with your kubeconfig, so RBAC and the
admission webhook judge it. Each prints "application 'NAME' created"
(or unchanged, updated).

Exit status: 0 when every Application was created or left as asked; 2 on
usage errors, a file that cannot be read, or an existing Application
with another spec without --upsert.`,
		Example: `  tollgate app create guestbook --repo https://github.com/argoproj/argocd-example-apps.git --path guestbook --dest-namespace default --dest-server https://kubernetes.default.svc --directory-recurse
  tollgate app create helm-guestbook --repo https://github.com/argoproj/argocd-example-apps.git --path helm-guestbook --dest-namespace default --dest-server https://kubernetes.default.svc --helm-set replicaCount=2
  tollgate app create -f guestbook.yaml --upsert`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.stdin = cmd.InOrStdin()
			apps, err := o.construct(cmd.Flags(), args)
			if err != nil {
				return err
			}
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			return createApps(cmd.Context(), c, apps, o.upsert, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.StringVar(&o.appName, "name", "", "A name for the app, ignored if a file is set (DEPRECATED)")
	f.BoolVar(&o.upsert, "upsert", false, "Allows to override application with the same name even if supplied application spec is different from existing spec")
	f.StringVarP(&o.file, "file", "f", "", "Filename to Kubernetes manifests for the app (- for stdin)")
	f.StringArrayVarP(&o.labels, "label", "l", nil, "Labels to apply to the app")
	f.StringArrayVar(&o.annotations, "annotations", nil, "Set metadata annotations (e.g. example=value)")
	f.BoolVar(&o.setFinalizer, "set-finalizer", false, "Sets deletion finalizer on the application, application resources will be cascaded on deletion")
	addAppSpecFlags(f, &o.spec)
	return cmd
}

// createApps creates each of apps and says what became of it.
func createApps(ctx context.Context, c client.Client, apps []*v1alpha1.Application, upsert bool, out io.Writer) error {
	for _, app := range apps {
		action, err := appops.Create(ctx, c, app, upsert)
		if err != nil {
			return asUsage(err)
		}
		fmt.Fprintf(out, "application '%s' %s\n", app.Name, action)
	}
	return nil
}

// construct builds the Applications to create from the file or the name
// and the flags of f, as argocd's ConstructApps does.
func (o *appCreateOptions) construct(f *pflag.FlagSet, args []string) ([]*v1alpha1.Application, error) {
	labels, err := parseLabels(o.labels)
	if err != nil {
		return nil, usageError(fmt.Errorf("--label: %w", err))
	}
	var apps []*v1alpha1.Application
	switch o.file {
	case "-":
		if apps, err = readApps(o.stdin, "stdin"); err != nil {
			return nil, err
		}
	case "":
		name := o.appName
		if len(args) == 1 {
			if name != "" && name != args[0] {
				return nil, usageError(fmt.Errorf("--name argument '%s' does not match app name %s", name, args[0]))
			}
			name = args[0]
		}
		if name == "" {
			return nil, usageError(errors.New("name the Application: tollgate app create NAME, or -f FILE"))
		}
		app := &v1alpha1.Application{}
		if ns, n, ok := strings.Cut(name, "/"); ok {
			app.Namespace, app.Name = ns, n
		} else {
			app.Name = name
		}
		if err := o.override(f, app, labels); err != nil {
			return nil, err
		}
		apps = []*v1alpha1.Application{app}
	default:
		fh, err := os.Open(o.file)
		if err != nil {
			return nil, usageError(fmt.Errorf("--file: %w", err))
		}
		apps, err = readApps(fh, o.file)
		fh.Close()
		if err != nil {
			return nil, err
		}
		for _, app := range apps {
			if len(args) == 1 && args[0] != app.Name {
				return nil, usageError(fmt.Errorf("app name '%s' does not match app spec metadata.name '%s'", args[0], app.Name))
			}
			if o.appName != "" {
				app.Name = o.appName
			}
			if app.Name == "" {
				return nil, usageError(errors.New("app.Name is empty. --name argument can be used to provide app.Name"))
			}
			if err := o.override(f, app, labels); err != nil {
				return nil, err
			}
		}
	}
	for _, app := range apps {
		if o.appNamespace != "" {
			app.Namespace = o.appNamespace
		}
		if app.Namespace == "" {
			app.Namespace = o.namespace
		}
		if o.setFinalizer {
			app.Finalizers = append(app.Finalizers, v1alpha1.ResourcesFinalizerName)
		}
	}
	return apps, nil
}

// override sets the labels, annotations and, on a single-source
// Application, the spec fields the flags give.
func (o *appCreateOptions) override(f *pflag.FlagSet, app *v1alpha1.Application, labels map[string]string) error {
	if len(labels) > 0 || app.Labels != nil {
		merged := maps.Clone(app.Labels)
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, labels)
		app.Labels = merged
	}
	if len(o.annotations) > 0 && app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	for _, a := range o.annotations {
		k, v, _ := strings.Cut(a, "=")
		app.Annotations[k] = v
	}
	if app.Spec.HasMultipleSources() {
		return nil
	}
	_, err := o.spec.applySpec(f, &app.Spec, 0)
	return err
}

// readApps decodes the Applications of r (YAML or JSON documents), named
// from in errors.
func readApps(r io.Reader, from string) ([]*v1alpha1.Application, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxAppFileBytes+1))
	if err != nil {
		return nil, usageError(fmt.Errorf("read %s: %w", from, err))
	}
	if len(data) > maxAppFileBytes {
		return nil, usageError(fmt.Errorf("read %s: larger than %d bytes", from, maxAppFileBytes))
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var apps []*v1alpha1.Application
	for i := 1; ; i++ {
		var app v1alpha1.Application
		if err := dec.Decode(&app); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, usageError(fmt.Errorf("unable to read manifest from %s (document %d): %w", from, i, err))
		}
		if app.Kind == "" && app.Name == "" && app.APIVersion == "" {
			continue
		}
		if app.Kind != "" && app.Kind != "Application" {
			return nil, usageError(fmt.Errorf("%s (document %d): kind %s: want Application", from, i, app.Kind))
		}
		apps = append(apps, &app)
	}
	if len(apps) == 0 {
		return nil, usageError(fmt.Errorf("%s: no Application", from))
	}
	return apps, nil
}
