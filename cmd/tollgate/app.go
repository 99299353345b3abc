package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

// cliUsername is the initiator recorded when the kubeconfig names no user.
const cliUsername = "tollgate-cli"

// requester is who an operation requested with kc is recorded as started
// by: the kubeconfig's user, else cliUsername.
func requester(kc kubeconfig) string {
	if kc.user == "" {
		return cliUsername
	}
	return kc.user
}

func newAppCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "app",
		Short: "Act on Argo CD Applications",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(errors.New("missing subcommand: see tollgate app --help"))
		},
	}
	cmd.AddCommand(newAppSyncCmd(), newAppGetCmd(), newAppSetCmd(), newAppHistoryCmd(), newAppRollbackCmd(), newAppConfirmDeletionCmd(), newAppListCmd(), newAppWaitCmd(), newAppWindowsCmd(), newAppTerminateOpCmd(), newAppDiffCmd(), newAppDeleteCmd(), newAppResourcesCmd(), newAppManifestsCmd())
	cmd.AddCommand(newAppCreateCmd(), newAppUnsetCmd(), newAppPatchCmd())
	return cmd
}

// appTarget are the flags every app subcommand has.
type appTarget struct {
	name string
	// namespace is the control-plane namespace (its AppProjects), and the
	// Application's unless appNamespace or a NAMESPACE/NAME says another.
	namespace    string
	appNamespace string
	kubeconfig   string
}

func (o *appTarget) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.namespace, "namespace", application.DefaultNamespace, "the control-plane namespace (Argo CD's): its AppProjects, and the Application's unless -N or NAMESPACE/NAME")
	f.StringVarP(&o.appNamespace, "app-namespace", "N", "", "namespace of an Application outside the control-plane namespace (applications in any namespace); NAMESPACE/NAME says the same")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account)")
}

// key is the Application's: NAME in -N or the control-plane namespace, or
// NAMESPACE/NAME (Argo CD's qualified name).
func (o *appTarget) key() types.NamespacedName {
	if ns, name, ok := strings.Cut(o.name, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	return types.NamespacedName{Namespace: cmp.Or(o.appNamespace, o.namespace), Name: o.name}
}

// namedApps are the Applications names name (NAME or NAMESPACE/NAME), as
// key reads one.
func (o appTarget) namedApps(names []string) []types.NamespacedName {
	keys := make([]types.NamespacedName, len(names))
	for i, n := range names {
		o.name = n
		keys[i] = o.key()
	}
	return keys
}

// selectedApps lists the Applications of o's Application namespace whose
// labels match selector and, when projects are given, of one of them, as
// argocd's -l and --project select them.
func (o appTarget) selectedApps(ctx context.Context, c client.Client, selector string, projects []string) ([]types.NamespacedName, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, usageError(fmt.Errorf("invalid --selector %q: %w", selector, err))
	}
	o.name = ""
	ns := o.key().Namespace
	var list v1alpha1.ApplicationList
	if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("list applications in %s: %w", ns, err)
	}
	var keys []types.NamespacedName
	for _, a := range list.Items {
		if len(projects) == 0 || slices.Contains(projects, a.ProjectName()) {
			keys = append(keys, types.NamespacedName{Namespace: a.Namespace, Name: a.Name})
		}
	}
	return keys, nil
}

// namedOrSelected are the Applications names name, or, with a selector,
// those it matches instead (as argocd app delete and app wait take them).
func (o appTarget) namedOrSelected(ctx context.Context, c client.Client, names []string, selector string) ([]types.NamespacedName, error) {
	if selector == "" {
		return o.namedApps(names), nil
	}
	return o.selectedApps(ctx, c, selector, nil)
}

// readApp reads the Application key, typed; a missing one is a usage
// error.
func readApp(ctx context.Context, c client.Client, key types.NamespacedName) (*v1alpha1.Application, error) {
	app, err := appops.Get(ctx, c, key)
	return app, asUsage(err)
}

// asUsage makes a request appops refused a usage error (exit 2).
func asUsage(err error) error {
	var re *appops.RefusedError
	if errors.As(err, &re) {
		return usageError(err)
	}
	return err
}

// newAppClient loads the kubeconfig (a usage error when it cannot) and
// builds a client that knows Applications.
func newAppClient(path string) (client.Client, kubeconfig, error) {
	kc, err := loadKubeconfig(path)
	if err != nil {
		return nil, kc, usageError(err)
	}
	scheme, err := newScheme()
	if err != nil {
		return nil, kc, err
	}
	c, err := client.New(kc.rest, client.Options{Scheme: scheme})
	if err != nil {
		return nil, kc, fmt.Errorf("create client: %w", err)
	}
	return c, kc, nil
}
