package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	cmd.AddCommand(newAppSyncCmd(), newAppGetCmd(), newAppSetCmd(), newAppHistoryCmd(), newAppRollbackCmd(), newAppConfirmDeletionCmd(), newAppListCmd(), newAppWaitCmd(), newAppWindowsCmd(), newAppTerminateOpCmd(), newAppDiffCmd(), newAppDeleteCmd())
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

// appSyncOptions are the flags of `tollgate app sync`.
type appSyncOptions struct {
	appTarget
	prune    bool
	revision string
	wait     bool
	timeout  time.Duration
}

func newAppSyncCmd() *cobra.Command {
	o := appSyncOptions{}
	cmd := &cobra.Command{
		Use:   "sync NAME",
		Short: "Request a sync of an Application, like argocd app sync",
		Long: `Request a sync of the Application NAME: set its operation.sync (a merge patch),
which the controller picks up, runs and clears. The initiator is the
kubeconfig user, or "` + cliUsername + `".

With --wait, poll until the operation finished and print its result. Exit
status: 0 when the sync was requested (with --wait: succeeded), 1 when it
failed or was refused by policy, 2 on usage errors or when the Application
does not exist or already has an operation in progress.`,
		Example: `  tollgate app sync guestbook
  tollgate app sync guestbook --prune --revision v1.2.0 --wait --timeout 5m`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return runAppSync(cmd, o)
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.BoolVar(&o.prune, "prune", false, "delete resources the Application no longer renders")
	f.StringVar(&o.revision, "revision", "", "sync this Git revision instead of the target revision")
	f.BoolVar(&o.wait, "wait", false, "wait until the sync finished and print its result")
	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "with --wait, how long to wait")
	return cmd
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

// runAppSync requests the sync and, with --wait, waits for its result.
func runAppSync(cmd *cobra.Command, o appSyncOptions) error {
	if o.wait && o.timeout <= 0 {
		return usageError(fmt.Errorf("invalid --timeout %s: must be positive", o.timeout))
	}
	c, kc, err := newAppClient(o.kubeconfig)
	if err != nil {
		return err
	}
	user := requester(kc)
	ctx := cmd.Context()
	key := o.key()
	if err := requestSync(ctx, c, key, o, user); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "application %s: sync requested by %s\n", o.name, user)
	if !o.wait {
		return nil
	}
	return waitForSync(ctx, c, key, o.timeout, cmd.OutOrStdout())
}

// requestSync sets operation.sync on the Application with a merge patch
// guarded by its resourceVersion.
func requestSync(ctx context.Context, c client.Client, key types.NamespacedName, o appSyncOptions, user string) error {
	return asUsage(appops.Sync(ctx, c, key, appops.SyncOptions{Prune: o.prune, Revision: o.revision}, user))
}

// waitForSync waits until the requested operation is over
// (appops.WaitForOperation) and prints its final state. A failed sync is
// exit status 1.
func waitForSync(ctx context.Context, c client.Client, key types.NamespacedName, timeout time.Duration, out io.Writer) error {
	done, err := appops.WaitForOperation(ctx, c, key, appops.DefaultWaitOptions().Interval, timeout)
	if err != nil {
		var te *appops.TimeoutError
		if errors.As(err, &te) {
			return &exitError{code: exitDenied, err: fmt.Errorf("application %s: sync did not finish within %s", key.Name, timeout)}
		}
		return asUsage(err)
	}
	fmt.Fprintf(out, "application %s: %s: %s\n", key.Name, done.Phase, done.Message)
	if !done.Phase.Successful() {
		return deniedError()
	}
	return nil
}
