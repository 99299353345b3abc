package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
)

func newClusterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Register destination clusters (Argo CD cluster Secrets), like argocd cluster",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return usageError(errors.New("missing subcommand: see tollgate cluster --help"))
		},
	}
	cmd.AddCommand(newClusterAddCmd(), newClusterListCmd(), newClusterRmCmd())
	return cmd
}

func newClusterAddCmd() *cobra.Command {
	o := clusterAddOptions{}
	cmd := &cobra.Command{
		Use:   "add CONTEXT",
		Short: "Add the cluster of a kubeconfig context, like argocd cluster add",
		Long: `Register the cluster of the kubeconfig context CONTEXT as argocd cluster add
does. In that cluster it creates the ServiceAccount argocd-manager in
--system-namespace (kube-system), the ClusterRole argocd-manager-role (every
verb on every resource) and its ClusterRoleBinding, or, with --namespace,
a Role and RoleBinding of those names in each namespace; then the
service-account token Secret argocd-manager-long-lived-token, waiting up to
30s for its token. With --service-account it uses that account's token and
creates no RBAC.

It then writes the cluster Secret (label argocd.argoproj.io/secret-type:
cluster, named cluster-<host>-<hash> as Argo CD names it; keys name,
server, config with bearerToken and tlsClientConfig, namespaces,
clusterResources, project) into --argocd-namespace of the cluster the
kubeconfig's current context points at: the control plane. The Secret is
written last and whole. A Secret for the same server is left alone when
equal and refused when it differs, unless --upsert.

On a terminal it asks before creating argocd-manager; --yes does not ask.

Exit status: 0 when the cluster was added; 1 when the question was
answered no; 2 on usage errors, a missing context, a cluster that cannot
be reached or written, or an existing cluster Secret that differs.`,
		Example: `  tollgate cluster add prod-eu --yes
  tollgate cluster add prod-eu --name prod --project platform --label env=prod
  tollgate cluster add staging --namespace web --namespace api --cluster-resources`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			rules.ExplicitPath = o.kubeconfig
			raw, err := rules.Load()
			if err != nil {
				return usageError(fmt.Errorf("load kubeconfig: %w", err))
			}
			if len(args) == 0 {
				printKubeContexts(cmd.OutOrStdout(), raw)
				return usageError(errors.New("choose a context name from the kubeconfig"))
			}
			o.context = args[0]
			if raw.Contexts[o.context] == nil {
				return usageError(fmt.Errorf("context %s does not exist in kubeconfig", o.context))
			}
			conf, err := clientcmd.NewNonInteractiveClientConfig(*raw, o.context, &clientcmd.ConfigOverrides{}, rules).ClientConfig()
			if err != nil {
				return usageError(fmt.Errorf("context %s: %w", o.context, err))
			}
			scheme, err := newScheme()
			if err != nil {
				return err
			}
			target, err := client.New(conf, client.Options{Scheme: scheme})
			if err != nil {
				return fmt.Errorf("create client for context %s: %w", o.context, err)
			}
			cp, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			o.prompt = o.serviceAccount == "" && !o.yes && term.IsTerminal(int(os.Stdout.Fd()))
			return addCluster(cmd.Context(), target, conf, cp, o, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` holding CONTEXT; its current context is the control plane's cluster (default: $KUBECONFIG, ~/.kube/config)")
	f.StringVar(&o.argocdNamespace, "argocd-namespace", application.DefaultNamespace, "the control-plane namespace the cluster Secret is written to")
	f.BoolVar(&o.upsert, "upsert", false, "Override an existing cluster with the same name even if the spec differs")
	f.StringVar(&o.serviceAccount, "service-account", "", fmt.Sprintf("System namespace service account to use for kubernetes resource management. If not set then default %q SA will be created", managerServiceAccount))
	f.StringVar(&o.systemNamespace, "system-namespace", defaultSystemNS, "Use different system namespace")
	f.BoolVarP(&o.yes, "yes", "y", false, "Skip explicit confirmation")
	f.StringArrayVar(&o.labels, "label", nil, "Set metadata labels (e.g. --label key=value)")
	f.StringArrayVar(&o.annotations, "annotation", nil, "Set metadata annotations (e.g. --annotation key=value)")
	f.BoolVar(&o.inCluster, "in-cluster", false, "Indicates Argo CD resides inside this cluster and should connect using the internal k8s hostname (kubernetes.default.svc)")
	f.StringArrayVar(&o.namespaces, "namespace", nil, "List of namespaces which are allowed to manage")
	f.BoolVar(&o.clusterResources, "cluster-resources", false, "Indicates if cluster level resources should be managed. The setting is used only if list of managed namespaces is not empty.")
	f.StringVar(&o.name, "name", "", "Overwrite the cluster name")
	f.StringVar(&o.project, "project", "", "project of the cluster")
	f.Int64Var(&o.shard, "shard", -1, "Cluster shard number; inferred from hostname if not set")
	o.tokenTimeout = bearerTokenTimeout
	return cmd
}

// printKubeContexts prints the contexts of cfg as argocd does when cluster
// add is given none.
func printKubeContexts(w io.Writer, cfg *clientcmdapi.Config) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CURRENT\tNAME\tCLUSTER\tSERVER")
	names := make([]string, 0, len(cfg.Contexts))
	for n := range cfg.Contexts {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		c := cfg.Contexts[n]
		if c == nil || cfg.Clusters[c.Cluster] == nil {
			continue
		}
		cur := " "
		if cfg.CurrentContext == n {
			cur = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cur, n, c.Cluster, cfg.Clusters[c.Cluster].Server)
	}
	_ = tw.Flush()
}

// clusterTarget are the flags of cluster list and rm.
type clusterTarget struct {
	kubeconfig, namespace string
}

func (o *clusterTarget) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account)")
	cmd.Flags().StringVar(&o.namespace, "argocd-namespace", application.DefaultNamespace, "the control-plane namespace of the cluster Secrets")
}

// clusterSecrets lists the cluster Secrets of ns.
func clusterSecrets(ctx context.Context, c client.Client, ns string) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{argocd.SecretTypeLabel: secretTypeCluster}); err != nil {
		return nil, fmt.Errorf("list cluster secrets in %s: %w", ns, err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Secret) int {
		return strings.Compare(string(a.Data["server"]), string(b.Data["server"]))
	})
	return list.Items, nil
}

func newClusterListCmd() *cobra.Command {
	o := clusterTarget{}
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the registered clusters, like argocd cluster list",
		Long: `List the cluster Secrets of the control-plane namespace in argocd cluster
list's table (the implicit in-cluster destination first when no Secret
names it). VERSION, STATUS and MESSAGE are empty: tollgate keeps no
connection cache; the controller reports a cluster it cannot reach on the
Applications that use it.

Exit status: 0; 2 on usage errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "wide" && output != "server" {
				return usageError(fmt.Errorf("unknown output format: %s. Supported formats: server|wide", output))
			}
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			secrets, err := clusterSecrets(cmd.Context(), c, o.namespace)
			if err != nil {
				return err
			}
			return writeClusters(cmd.OutOrStdout(), secrets, output)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "Output format. One of: server|wide")
	return cmd
}

// writeClusters prints secrets as argocd cluster list does.
func writeClusters(w io.Writer, secrets []corev1.Secret, output string) error {
	type row struct{ server, name, project string }
	var rows []row
	if !slices.ContainsFunc(secrets, func(s corev1.Secret) bool {
		return strings.TrimRight(string(s.Data["server"]), "/") == inClusterServer
	}) {
		rows = append(rows, row{server: inClusterServer, name: application.InClusterName})
	}
	for _, s := range secrets {
		server := strings.TrimRight(string(s.Data["server"]), "/")
		if ns := strings.Split(string(s.Data["namespaces"]), ","); string(s.Data["namespaces"]) != "" {
			server = fmt.Sprintf("%s (%d namespaces)", server, len(ns))
		}
		rows = append(rows, row{server: server, name: string(s.Data["name"]), project: string(s.Data["project"])})
	}
	if output == "server" {
		for _, r := range rows {
			fmt.Fprintln(w, strings.SplitN(r.server, " ", 2)[0])
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tNAME\tVERSION\tSTATUS\tMESSAGE\tPROJECT")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t\t\t\t%s\n", r.server, r.name, r.project)
	}
	return tw.Flush()
}

func newClusterRmCmd() *cobra.Command {
	o := clusterTarget{}
	var yes bool
	cmd := &cobra.Command{
		Use:   "rm SERVER/NAME...",
		Short: "Remove registered clusters, like argocd cluster rm",
		Long: `Delete the cluster Secret of each cluster named by server URL (http:// or
https://) or by name, asking first on a terminal unless --yes, with
argocd's question. The argocd-manager RBAC cluster add made in the cluster
is left there (argocd removes it when a kubeconfig context has the
cluster's name): kubectl delete it if you want it gone.

Exit status: 0 when each was removed or its removal cancelled; 2 on usage
errors or when a cluster is not registered.`,
		Example: `  tollgate cluster rm https://12.34.567.89
  tollgate cluster rm cluster-name --yes`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			prompt := !yes && stdinIsTerminal()
			return removeClusters(cmd.Context(), c, o.namespace, args, prompt, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "Turn off prompting to confirm remove of cluster resources")
	return cmd
}

var serverRx = regexp.MustCompile(`^https?://`)

// removeClusters deletes the cluster Secrets of selectors (servers or
// names), asking on in first when prompt.
func removeClusters(ctx context.Context, c client.Client, ns string, selectors []string, prompt bool, in io.Reader, out io.Writer) error {
	secrets, err := clusterSecrets(ctx, c, ns)
	if err != nil {
		return err
	}
	answers := bufio.NewReader(in)
	all := false
	for _, sel := range selectors {
		i := slices.IndexFunc(secrets, func(s corev1.Secret) bool {
			if serverRx.MatchString(sel) {
				return strings.TrimRight(string(s.Data["server"]), "/") == strings.TrimRight(sel, "/")
			}
			return string(s.Data["name"]) == sel
		})
		if i < 0 {
			return usageError(fmt.Errorf("cluster %q not found in namespace %s", sel, ns))
		}
		if prompt && !all {
			q := "Are you sure you want to remove '" + sel + "'? Any Apps deploying to this cluster will go to health status Unknown.[y/n] "
			if len(selectors) > 1 {
				q = "Are you sure you want to remove '" + sel + "'? Any Apps deploying to this cluster will go to health status Unknown.[y/n/A] where 'A' is to remove all specified clusters without prompting. Any Apps deploying to these clusters will go to health status Unknown. "
			}
			ok, yesAll := askYesNoAll(answers, out, q, len(selectors) > 1)
			all = yesAll
			if !ok {
				fmt.Fprintf(out, "The command to remove '%s' was cancelled.\n", sel)
				continue
			}
		}
		if err := c.Delete(ctx, &secrets[i]); err != nil {
			return fmt.Errorf("delete cluster secret %s: %w", secrets[i].Name, err)
		}
		fmt.Fprintf(out, "Cluster '%s' removed\n", sel)
	}
	return nil
}

// askYesNoAll asks question until y, n or (with several) a is answered.
func askYesNoAll(in *bufio.Reader, out io.Writer, question string, several bool) (ok, all bool) {
	for {
		fmt.Fprint(out, question)
		line, err := in.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, false
		case "a":
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
