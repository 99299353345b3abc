package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// appSetDeleteOptions are the flags of `tollgate appset delete`, argocd
// appset delete's.
type appSetDeleteOptions struct {
	appSetTarget
	names []string
	yes   bool
	wait  bool
	// prompt asks before each deletion (a terminal, no --yes).
	prompt bool
}

func newAppSetDeleteCmd() *cobra.Command {
	o := appSetDeleteOptions{}
	cmd := &cobra.Command{
		Use:   "delete NAME...",
		Short: "Delete ApplicationSets and the Applications they generated, like argocd appset delete",
		Long: `Delete the ApplicationSets NAME... (NAMESPACE/NAME, or NAME in -N or
--namespace), as argocd appset delete does. The Applications an
ApplicationSet generated are owned by it, so Kubernetes' garbage collector
deletes them after it, each as its own finalizers say (with the resources
finalizer, what it deployed too).

On a terminal each deletion asks first ([y/n], or [y/n/a] for several,
where a deletes the rest without asking); --yes does not ask. --wait waits
until each ApplicationSet is gone.

The deletion is made through the Kubernetes API server with your
kubeconfig, so RBAC and the admission webhook judge it.

Exit status: 0 when every ApplicationSet asked was deleted (or the
deletion cancelled at the prompt); 2 on usage errors, a missing
ApplicationSet, or when the cluster cannot be written.`,
		Example: `  tollgate appset delete guestbook
  tollgate appset delete team-a/previews --yes --wait`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.names = args
			o.prompt = !o.yes && term.IsTerminal(int(os.Stdin.Fd()))
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			return deleteAppSets(cmd.Context(), c, o, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.BoolVarP(&o.yes, "yes", "y", false, "do not ask before deleting (an ApplicationSet's Applications are deleted with it)")
	f.BoolVar(&o.wait, "wait", false, "wait until each ApplicationSet is gone")
	return cmd
}

// appSetDeletePrompt is argocd appset delete's question about name.
func appSetDeletePrompt(name string, several bool) string {
	if several {
		return "Are you sure you want to delete '" + name + "' and all its Applications? [y/n/a] where 'a' is to delete all specified ApplicationSets and their Applications without prompting"
	}
	return "Are you sure you want to delete '" + name + "' and all its Applications? [y/n] "
}

// deleteAppSets deletes the ApplicationSets o names, asking on in first
// when o.prompt.
func deleteAppSets(ctx context.Context, c client.Client, o appSetDeleteOptions, in io.Reader, out io.Writer) error {
	answers := bufio.NewReader(in)
	all := false
	several := len(o.names) > 1
	for _, name := range o.names {
		key := o.key(name)
		if key.Name == "" || key.Namespace == "" {
			return usageError(fmt.Errorf("invalid ApplicationSet name %q: want NAME or NAMESPACE/NAME", name))
		}
		if o.prompt && !all {
			ok, yesAll := confirm(answers, out, appSetDeletePrompt(name, several), several)
			all = yesAll
			if !ok && !yesAll {
				fmt.Fprintf(out, "The command to delete '%s' was cancelled.\n", name)
				continue
			}
		}
		set := &v1alpha1.ApplicationSet{}
		set.Namespace, set.Name = key.Namespace, key.Name
		if err := c.Delete(ctx, set); err != nil {
			if apierrors.IsNotFound(err) {
				return usageError(fmt.Errorf("applicationset %s not found in namespace %s", key.Name, key.Namespace))
			}
			return usageError(fmt.Errorf("delete applicationset %s: %w", name, err))
		}
		if o.wait {
			if err := waitAppSetGone(ctx, c, key); err != nil {
				return err
			}
		}
		fmt.Fprintf(out, "applicationset '%s' deleted\n", name)
	}
	return nil
}

// waitAppSetGone waits, without a time limit as argocd does, until the
// ApplicationSet key no longer exists.
func waitAppSetGone(ctx context.Context, c client.Client, key types.NamespacedName) error {
	err := wait.PollUntilContextCancel(ctx, appSetPollInterval, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, key, &v1alpha1.ApplicationSet{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("wait for applicationset %s to be deleted: %w", key.Name, err)
	}
	return nil
}

// appSetPollInterval is how often --wait looks.
var appSetPollInterval = time.Second
