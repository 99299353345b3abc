package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

// appDeleteOptions are the flags of `tollgate app delete`, argocd app
// delete's.
type appDeleteOptions struct {
	appTarget
	names []string
	// cascade and policy are sent only when given, as argocd sends them.
	cascade  *bool
	policy   string
	yes      bool
	selector string
	wait     bool
	timeout  time.Duration
	// prompt asks before a cascaded deletion (a terminal, no --yes).
	prompt bool
}

func newAppDeleteCmd() *cobra.Command {
	o := appDeleteOptions{}
	var cascade bool
	cmd := &cobra.Command{
		Use:   "delete NAME...",
		Short: "Delete Applications and, by default, what they deployed, like argocd app delete",
		Long: `Delete Applications as argocd app delete does. By default the deletion
cascades: the resources finalizer of --propagation-policy (foreground, the
default, or background) is added first, so that the controller deletes
what the Application deployed (through the same authority as a sync: only
objects its project permits) before the Application goes. --cascade=false
removes the cascade finalizers first, so that its resources stay.

On a terminal, a cascaded deletion asks first (y, n, and a for all of
several); --yes does not ask. -l deletes the Applications a label selector
matches. --wait waits until each is gone.

Every write goes through the Kubernetes API server with your kubeconfig,
so RBAC and the admission webhook judge it.

Exit status: 0 when every Application asked was deleted (or the deletion
cancelled at the prompt); 1 when --wait's timeout passed; 2 on usage
errors, a missing Application, or when the cluster cannot be written.`,
		Example: `  tollgate app delete web
  tollgate app delete team-a/web --cascade=false
  tollgate app delete -l app.kubernetes.io/instance=platform --yes --wait`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && o.selector == "" {
				return usageError(errors.New("name an Application or give --selector"))
			}
			if f := cmd.Flags().Lookup("cascade"); f.Changed {
				o.cascade = &cascade
			}
			if !cmd.Flags().Lookup("propagation-policy").Changed {
				o.policy = ""
			}
			o.names = args
			o.prompt = cascade && !o.yes && term.IsTerminal(int(os.Stdin.Fd()))
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			return deleteApps(cmd.Context(), c, o, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.BoolVar(&cascade, "cascade", true, "delete the Application's resources too")
	f.StringVarP(&o.policy, "propagation-policy", "p", appops.PropagationForeground, "propagation policy of the deletion of its resources: foreground or background")
	f.BoolVarP(&o.yes, "yes", "y", false, "do not ask before a cascaded deletion")
	f.StringVarP(&o.selector, "selector", "l", "", "delete the Applications with matching labels (=, ==, !=, in, notin, exists, !exists)")
	f.BoolVar(&o.wait, "wait", false, "wait until each Application is gone")
	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long --wait waits for each")
	return cmd
}

// deleteApps deletes the Applications o names or selects, asking on in
// first when o.prompt.
func deleteApps(ctx context.Context, c client.Client, o appDeleteOptions, in io.Reader, out io.Writer) error {
	keys, err := o.namedOrSelected(ctx, c, o.names, o.selector)
	if err != nil {
		return err
	}
	answers := bufio.NewReader(in)
	all := false
	for _, key := range keys {
		name := key.Name
		if key.Namespace != o.namespace {
			name = key.Namespace + "/" + key.Name
		}
		if o.prompt && !all {
			ok, yesAll := confirm(answers, out, appDeletePrompt(name, len(keys) > 1), len(keys) > 1)
			all = yesAll
			if !ok && !yesAll {
				fmt.Fprintf(out, "The command to delete '%s' was cancelled.\n", name)
				continue
			}
		}
		if err := appops.Delete(ctx, c, key, o.cascade, o.policy); err != nil {
			return asUsage(err)
		}
		if o.wait {
			if err := waitGone(ctx, c, key, o.timeout); err != nil {
				return err
			}
		}
		fmt.Fprintf(out, "application '%s' deleted\n", name)
	}
	return nil
}

// appDeletePrompt is argocd app delete's question about name.
func appDeletePrompt(name string, several bool) string {
	if several {
		return fmt.Sprintf("Are you sure you want to delete '%s' and all its resources? [y/n/a] where 'a' is to delete all specified apps and their resources without prompting ", name)
	}
	return fmt.Sprintf("Are you sure you want to delete '%s' and all its resources? [y/n] ", name)
}

// confirm asks question and reads the answer: y, n, and, when several
// are deleted, a for all.
func confirm(in *bufio.Reader, out io.Writer, question string, several bool) (ok, all bool) {
	for {
		fmt.Fprint(out, question)
		line, err := in.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, false
		case "a", "all":
			if several {
				return true, true
			}
		case "n", "no":
			return false, false
		}
		if err != nil {
			return false, false
		}
	}
}

// waitGone waits until the Application key no longer exists.
func waitGone(ctx context.Context, c client.Client, key types.NamespacedName, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		var app v1alpha1.Application
		err := c.Get(ctx, key, &app)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return &exitError{code: exitDenied, err: fmt.Errorf("application %s: not gone after %s: %w", key.Name, timeout, err)}
	}
	return nil
}
