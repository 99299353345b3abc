package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
)

// appListOptions are the flags of `tollgate app list`, argocd app list's.
type appListOptions struct {
	namespace, appNamespace, kubeconfig, output string
	allNamespaces                               bool
	selector, repo, cluster, path               string
	projects                                    []string
}

// App list formats: argocd app list's.
const (
	appListWide = "wide"
	appListName = "name"
)

func newAppListCmd() *cobra.Command {
	o := appListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List Applications with their sync and health, like argocd app list",
		Long: `List the Applications of --namespace (of -N NAMESPACE, or of every namespace
with -A), sorted by namespace and name, in argocd app list's table: name
(NAMESPACE/NAME outside --namespace), cluster, destination namespace,
project, sync status, health, sync policy and conditions; -o wide adds the
source's repository, path and target revision, -o name prints the names
only, -o json|yaml the Applications.

-l selects by label (=, ==, !=, in, notin, exists, !exists), -p by project
(repeatable), -r by source repository, -c by destination cluster (URL or
name), -P by source path, as argocd app list does.

Exit status: 0 when the list was shown; 2 on usage errors or when the
cluster cannot be read.`,
		Example: `  tollgate app list
  tollgate app list -l app.kubernetes.io/instance=platform -o name
  tollgate app list -A -p team-a -o wide`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			return listApps(cmd.Context(), cmd.OutOrStdout(), c, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.namespace, "namespace", application.DefaultNamespace, "the control-plane namespace: its Applications are listed, by their name alone")
	f.StringVarP(&o.appNamespace, "app-namespace", "N", "", "list the Applications of this namespace instead")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list the Applications of every namespace")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account)")
	f.StringVarP(&o.output, "output", "o", appListWide, "output format: wide, name, json or yaml (text is the table without wide's columns)")
	f.StringVarP(&o.selector, "selector", "l", "", "list Applications by label (=, ==, !=, in, notin, exists, !exists)")
	f.StringArrayVarP(&o.projects, "project", "p", nil, "list Applications of this project (repeatable)")
	f.StringVarP(&o.repo, "repo", "r", "", "list Applications with a source of this repository URL")
	f.StringVarP(&o.cluster, "cluster", "c", "", "list Applications of this destination cluster (URL or name)")
	f.StringVarP(&o.path, "path", "P", "", "list Applications with a source of this path")
	return cmd
}

// check refuses an unknown output format or label selector.
func (o appListOptions) check() error {
	switch o.output {
	case appListWide, appListName, appGetFormatText, appGetFormatJSON, appGetFormatYAML:
	default:
		return usageError(fmt.Errorf("unknown output format: %s (valid: wide, name, json, yaml)", o.output))
	}
	if _, err := labels.Parse(o.selector); err != nil {
		return usageError(fmt.Errorf("invalid --selector %q: %w", o.selector, err))
	}
	return nil
}

// listApps lists the Applications o selects with c and prints them.
func listApps(ctx context.Context, out io.Writer, c client.Client, o appListOptions) error {
	opts := []client.ListOption{}
	ns := cmp.Or(o.appNamespace, o.namespace)
	if !o.allNamespaces {
		opts = append(opts, client.InNamespace(ns))
	}
	if o.selector != "" {
		sel, err := labels.Parse(o.selector)
		if err != nil {
			return usageError(fmt.Errorf("invalid --selector %q: %w", o.selector, err))
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	var list v1alpha1.ApplicationList
	if err := c.List(ctx, &list, opts...); err != nil {
		if o.allNamespaces {
			return fmt.Errorf("list applications: %w", err)
		}
		return fmt.Errorf("list applications in %s: %w", ns, err)
	}
	apps := slices.DeleteFunc(list.Items, func(a v1alpha1.Application) bool { return !o.matches(&a) })
	slices.SortFunc(apps, func(a, b v1alpha1.Application) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	switch o.output {
	case appGetFormatJSON, appGetFormatYAML:
		return writeStructured(out, o.output, apps)
	case appListName:
		for _, a := range apps {
			if _, err := fmt.Fprintln(out, a.QualifiedName(o.namespace)); err != nil {
				return err
			}
		}
		return nil
	}
	return writeAppList(out, apps, o.namespace, o.output == appListWide)
}

// matches applies argocd app list's filters (argo.FilterByProjects,
// FilterByRepo, FilterByCluster, FilterByPath).
func (o appListOptions) matches(a *v1alpha1.Application) bool {
	if len(o.projects) > 0 && !slices.Contains(o.projects, a.ProjectName()) {
		return false
	}
	if o.cluster != "" && a.Spec.Destination.Server != o.cluster && a.Spec.Destination.Name != o.cluster {
		return false
	}
	if o.repo == "" && o.path == "" {
		return true
	}
	for _, src := range a.Sources() {
		if (o.repo == "" || src.RepoURL == o.repo) && (o.path == "" || src.Path == o.path) {
			return true
		}
	}
	return false
}

// writeAppList prints Applications as argocd app list does
// (printApplicationTable): names qualified outside controlNS, wide with
// the first source's repository, path and target revision.
func writeAppList(w io.Writer, apps []v1alpha1.Application, controlNS string, wide bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	headers := "NAME\tCLUSTER\tNAMESPACE\tPROJECT\tSTATUS\tHEALTH\tSYNCPOLICY\tCONDITIONS"
	if wide {
		headers += "\tREPO\tPATH\tTARGET"
	}
	fmt.Fprintln(tw, headers)
	for _, a := range apps {
		cluster := cmp.Or(a.Spec.Destination.Server, a.Spec.Destination.Name)
		row := []string{a.QualifiedName(controlNS), cluster, a.Spec.Destination.Namespace, a.ProjectName(),
			string(a.Status.Sync.Status), string(a.Status.Health.Status), syncPolicySummary(&a), conditionsSummary(&a)}
		if wide {
			var src v1alpha1.ApplicationSource
			if srcs := a.Sources(); len(srcs) > 0 {
				src = srcs[0]
			}
			row = append(row, src.RepoURL, src.Path, src.TargetRevision)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// syncPolicySummary is argocd's formatSyncPolicy: Manual, Auto or
// Auto-Prune.
func syncPolicySummary(a *v1alpha1.Application) string {
	sp := a.Spec.SyncPolicy
	if sp == nil || !sp.Automated.IsEnabled() {
		return "Manual"
	}
	if sp.Automated.Prune {
		return "Auto-Prune"
	}
	return "Auto"
}

// conditionsSummary is argocd's formatConditionsSummary: the condition
// types, sorted, each with its count when above one; <none> without.
func conditionsSummary(a *v1alpha1.Application) string {
	counts := map[string]int{}
	for _, c := range a.Status.Conditions {
		counts[c.Type]++
	}
	if len(counts) == 0 {
		return "<none>"
	}
	items := make([]string, 0, len(counts))
	for typ, n := range counts {
		if n > 1 {
			typ = fmt.Sprintf("%s(%d)", typ, n)
		}
		items = append(items, typ)
	}
	slices.Sort(items)
	return strings.Join(items, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
