package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
	"github.com/tollgate-dev/tollgate/engine/health"
	"github.com/tollgate-dev/tollgate/internal/apptree"
)

// Tree formats of app get and app resources: argocd's.
const (
	formatTree         = "tree"
	formatTreeDetailed = "tree=detailed"
)

// appResourcesOptions are the flags of `tollgate app resources`.
type appResourcesOptions struct {
	appTarget
	orphaned bool
	// listAll is set when --orphaned is not given: managed and orphaned.
	listAll bool
	output  string
	project string
}

func newAppResourcesCmd() *cobra.Command {
	o := appResourcesOptions{}
	cmd := &cobra.Command{
		Use:   "resources NAME",
		Short: "List an Application's resources, like argocd app resources",
		Long: `List the resources of the Application NAME as argocd app resources does:
the live objects of its status.resources, read from the cluster with your
kubeconfig, in the table GROUP KIND NAMESPACE NAME ORPHANED. --output tree
adds under each the objects it owns (a Deployment's ReplicaSets and their
Pods), --output tree=detailed their age, health and its reason.

tollgate does not monitor orphaned resources (an AppProject's
orphanedResources is not acted on), so none is ever listed: --orphaned
prints the header alone.

Only the cluster of your kubeconfig is read: an Application whose
destination is another cluster is refused.

Exit status: 0 when the resources were listed; 2 on usage errors, when the
Application does not exist, its destination is another cluster, or the
cluster cannot be read.`,
		Example: `  tollgate app resources guestbook
  tollgate app resources guestbook --output tree
  tollgate app resources guestbook --output tree=detailed`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			o.listAll = !cmd.Flags().Changed("orphaned")
			switch o.output {
			case "", formatTree, formatTreeDetailed:
			default:
				return usageError(fmt.Errorf("unknown output format: %s (valid: tree, tree=detailed)", o.output))
			}
			c, kc, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			app, err := readApp(cmd.Context(), c, o.key())
			if err != nil {
				return err
			}
			if o.project != "" && app.ProjectName() != o.project {
				return usageError(fmt.Errorf("application %s not found in project %s", o.name, o.project))
			}
			tree, err := liveTree(cmd.Context(), c, kc, app)
			if err != nil {
				return err
			}
			warnTree(cmd.ErrOrStderr(), tree)
			return writeResources(cmd.OutOrStdout(), tree, o, time.Now())
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.BoolVar(&o.orphaned, "orphaned", false, "list only orphaned resources (tollgate finds none)")
	f.StringVar(&o.output, "output", "", "output format: tree (the hierarchy of owners and owned objects) or tree=detailed (with age, health and reason)")
	f.StringVar(&o.project, "project", "", "the Application's project: another project reports it as not found")
	return cmd
}

// liveTree checks that app's destination is the cluster of kc and builds
// its resource tree from it.
func liveTree(ctx context.Context, c client.Client, kc kubeconfig, app *v1alpha1.Application) (*apptree.Tree, error) {
	if err := checkLiveDestination(app, kc); err != nil {
		return nil, err
	}
	opts := apptree.DefaultOptions()
	opts.Health = childHealth
	tree, err := apptree.Build(ctx, c, app, opts)
	if err != nil {
		return nil, fmt.Errorf("read the resources of application %s: %w", app.Name, err)
	}
	return tree, nil
}

// childHealth is an owned object's health by the built-in checks.
func childHealth(obj *unstructured.Unstructured) (string, string) {
	res, _ := health.Assess(obj) // an error is reported as Unknown with its message
	return string(res.Status), res.Message
}

// checkLiveDestination refuses an Application whose destination is not
// the cluster of the kubeconfig: the in-cluster destination (by URL or
// name), or a server URL equal to the kubeconfig's.
func checkLiveDestination(app *v1alpha1.Application, kc kubeconfig) error {
	d := app.Spec.Destination
	switch {
	case d.Server == application.InClusterServer, d.Server == "" && d.Name == application.InClusterName:
		return nil
	case d.Server != "" && kc.rest != nil && strings.TrimSuffix(d.Server, "/") == strings.TrimSuffix(kc.rest.Host, "/"):
		return nil
	}
	dest := d.Server
	if dest == "" {
		dest = d.Name
	}
	return usageError(fmt.Errorf("application %s deploys to cluster %s: only the cluster of your kubeconfig (the in-cluster destination) can be read", app.Name, dest))
}

// warnTree prints the tree's warnings to w.
func warnTree(w io.Writer, t *apptree.Tree) {
	for _, msg := range t.Warnings {
		fmt.Fprintln(w, "warning:", msg)
	}
}

// writeResources prints tree as argocd app resources does (printResources):
// the managed resources (not with --orphaned), then the orphaned ones
// (tollgate has none), as a table of the roots or as a tree.
func writeResources(w io.Writer, t *apptree.Tree, o appResourcesOptions, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	managed := !o.orphaned || o.listAll
	switch o.output {
	case formatTreeDetailed:
		fmt.Fprint(tw, "GROUP\tKIND\tNAMESPACE\tNAME\tORPHANED\tAGE\tHEALTH\tREASON\n")
	default:
		fmt.Fprint(tw, "GROUP\tKIND\tNAMESPACE\tNAME\tORPHANED\n")
	}
	if managed {
		for _, n := range t.Roots {
			switch o.output {
			case "":
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", n.Group, n.Kind, n.Namespace, n.Name, "No")
			default:
				walkTree(n, func(prefix string, n *apptree.Node) {
					if o.output == formatTree {
						fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\n", prefix, n.Group, n.Kind, n.Namespace, n.Name, "No")
						return
					}
					fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", prefix, n.Group, n.Kind, n.Namespace, n.Name, "No", age(n, now), n.Health, oneLineCell(n.HealthMessage))
				})
			}
		}
	}
	return tw.Flush()
}

// Tree connectors, argocd's.
const (
	treeMid  = "├─"
	treeLast = "└─"
	treePipe = "│ "
	treeGap  = "  "
)

// walkTree calls fn for root and each node under it, depth first, with
// the prefix argocd draws before it: for each ancestor below the root a
// pipe (more siblings follow) or a gap, then the node's own connector.
func walkTree(root *apptree.Node, fn func(prefix string, n *apptree.Node)) {
	var walk func(n *apptree.Node, indent, connector string)
	walk = func(n *apptree.Node, indent, connector string) {
		fn(indent+connector, n)
		for i, child := range n.Children {
			next := indent
			switch connector {
			case treeMid:
				next += treePipe
			case treeLast:
				next += treeGap
			}
			c := treeMid
			if i == len(n.Children)-1 {
				c = treeLast
			}
			walk(child, next, c)
		}
	}
	walk(root, "", "")
}

// age is how long ago n was created, as kubectl and argocd print it;
// <unknown> without a creation time.
func age(n *apptree.Node, now time.Time) string {
	if n.CreatedAt.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(n.CreatedAt))
}

// resourceState is what argocd's app get tree prints for a managed
// resource: its sync status and health, and the message of the last sync.
type resourceState struct{ status, health, message string }

// resourceStates are the states of app's managed resources by group,
// kind, namespace and name (argocd's getResourceStates).
func resourceStates(app *v1alpha1.Application) map[[4]string]resourceState {
	out := map[[4]string]resourceState{}
	for _, r := range app.Status.Resources {
		s := resourceState{status: string(r.Status)}
		if r.Health != nil {
			s.health = string(r.Health.Status)
		}
		out[[4]string{r.Group, r.Kind, r.Namespace, r.Name}] = s
	}
	if st := app.Status.OperationState; st != nil && st.SyncResult != nil {
		for _, r := range st.SyncResult.Resources {
			k := [4]string{r.Group, r.Kind, r.Namespace, r.Name}
			if s, ok := out[k]; ok && r.HookType == "" {
				s.message = r.Message
				out[k] = s
			}
		}
	}
	return out
}

// writeAppTree prints app's tree as argocd app get -o tree (detailed: -o
// tree=detailed) does: KIND/NAME with the sync status, health and
// last-sync message of a managed resource, the health of an owned one.
func writeAppTree(w io.Writer, app *v1alpha1.Application, t *apptree.Tree, detailed bool, now time.Time) error {
	if len(t.Roots) == 0 {
		return nil
	}
	states := resourceStates(app)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if detailed {
		fmt.Fprint(tw, "KIND/NAME\tSTATUS\tHEALTH\tAGE\tMESSAGE\tREASON\n")
	} else {
		fmt.Fprint(tw, "KIND/NAME\tSTATUS\tHEALTH\tMESSAGE\n")
	}
	for _, root := range t.Roots {
		walkTree(root, func(prefix string, n *apptree.Node) {
			s := resourceState{health: n.Health}
			if n.Managed {
				s = states[[4]string{n.Group, n.Kind, n.Namespace, n.Name}]
			}
			if detailed {
				fmt.Fprintf(tw, "%s%s/%s\t%s\t%s\t%s\t%s\t%s\n", prefix, n.Kind, n.Name, s.status, s.health, age(n, now), oneLineCell(s.message), oneLineCell(n.HealthMessage))
				return
			}
			fmt.Fprintf(tw, "%s%s/%s\t%s\t%s\t%s\n", prefix, n.Kind, n.Name, s.status, s.health, oneLineCell(s.message))
		})
	}
	return tw.Flush()
}
