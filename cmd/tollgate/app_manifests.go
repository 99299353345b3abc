package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/apptree"
	"github.com/tollgate-dev/tollgate/internal/objdiff"
)

// Sources of app manifests: argocd's.
const (
	manifestsGit  = "git"
	manifestsLive = "live"
)

// appManifestsOptions are the flags of `tollgate app manifests`: app
// diff's way to the desired state, and the source to print.
type appManifestsOptions struct {
	appDiffOptions
	source string
}

func newAppManifestsCmd() *cobra.Command {
	o := appManifestsOptions{appDiffOptions: appDiffOptions{repoOptions: defaultRepoOptions()}, source: manifestsGit}
	cmd := &cobra.Command{
		Use:   "manifests NAME",
		Short: "Print an Application's desired or live manifests, like argocd app manifests",
		Long: `Print the manifests of the Application NAME as argocd app manifests does,
each as a YAML document after a "---" line.

--source git (the default) prints its desired objects as the controller
builds them, by the same path as tollgate app diff: its sources fetched at
their target revisions (--revision another, for the first source) or the
files of --local, rendered in this process (each render in a child
process, with the repository credentials of the Argo CD Secrets in
--namespace), hooks and ignored objects left out, the destination
namespace defaulted and the tracking metadata set, sorted by group, kind,
namespace and name. Its AppProject must permit them (as for app diff: the
error names each object and rule).

--source live prints the live objects of status.resources, read from the
cluster with your kubeconfig (without metadata.managedFields); an
Application deployed to another cluster is refused.

A Secret's values are masked (++++++++) in both, as Argo CD's API server
masks them.

Exit status: 0 when the manifests were printed; 2 on usage errors, when
the Application does not exist, when its sources or the cluster cannot be
read, or when its project does not permit the objects.`,
		Example: `  tollgate app manifests guestbook
  tollgate app manifests guestbook --revision feature-x
  tollgate app manifests guestbook --source live`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return runAppManifests(cmd, o)
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.StringVar(&o.source, "source", o.source, "source of the manifests: git (desired) or live")
	f.StringVar(&o.revision, "revision", "", "with --source git, render this Git revision instead of the target revision (the first source's, for several)")
	f.StringVar(&o.local, "local", "", "with --source git, render the files of `DIR` instead of the source's path in Git")
	f.StringVar(&o.localRoot, "local-repo-root", "", "with --local, the repository checkout `DIR` that --local is part of (default: --local)")
	f.StringVar(&o.configFile, "config", "", "the controller's policy configuration `FILE` (implicitDefaultProject, trackingMethod, the boundary rules' settings)")
	f.StringVar(&o.trackingMethod, "tracking-method", "", "the controller's tracking method, which marks desired objects: annotation, label or annotation+label (default: trackingMethod of --config, else annotation)")
	addRepoFlags(f, &o.repoOptions)
	return cmd
}

// runAppManifests prints the desired or live manifests o asks for.
func runAppManifests(cmd *cobra.Command, o appManifestsOptions) error {
	ctx := cmd.Context()
	var objs []*unstructured.Unstructured
	switch o.source {
	case manifestsGit:
		comp, err := openComparison(ctx, o.appDiffOptions)
		if err != nil {
			return err
		}
		defer comp.close()
		objs, err = comp.differ.Desired(ctx, comp.app)
		if err != nil {
			return fmt.Errorf("render application %s: %w", o.name, err)
		}
	case manifestsLive:
		if o.revision != "" || o.local != "" {
			return usageError(errors.New("--revision and --local apply to --source git"))
		}
		c, kc, err := newAppClient(o.kubeconfig)
		if err != nil {
			return err
		}
		if objs, err = liveManifests(ctx, c, kc, o.key()); err != nil {
			return err
		}
	default:
		return usageError(fmt.Errorf("unknown source type '%s' (valid: git, live)", o.source))
	}
	return writeManifests(cmd.OutOrStdout(), objs)
}

// liveManifests reads the live objects of the Application key's
// status.resources, without metadata.managedFields and with Secret values
// masked; its destination must be the cluster of kc.
func liveManifests(ctx context.Context, c client.Client, kc kubeconfig, key client.ObjectKey) ([]*unstructured.Unstructured, error) {
	app, err := readApp(ctx, c, key)
	if err != nil {
		return nil, err
	}
	if err := checkLiveDestination(app, kc); err != nil {
		return nil, err
	}
	objs, err := apptree.LiveObjects(ctx, c, app)
	if err != nil {
		return nil, fmt.Errorf("read the live objects of application %s: %w", key.Name, err)
	}
	for _, o := range objs {
		unstructured.RemoveNestedField(o.Object, "metadata", "managedFields")
		if o.GroupVersionKind().Group == "" && o.GetKind() == "Secret" {
			objdiff.HideSecretData(o.Object, nil)
		}
	}
	return objs, nil
}

// writeManifests prints objs as argocd app manifests does: each after a
// "---" line, followed by an empty line.
func writeManifests(w io.Writer, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		out, err := yaml.Marshal(o.Object)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if _, err := fmt.Fprintf(w, "---\n%s\n", out); err != nil {
			return err
		}
	}
	return nil
}
