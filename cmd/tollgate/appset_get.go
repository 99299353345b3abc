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
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
)

// appSetTarget are the flags every appset subcommand that reads the
// cluster has: argocd's --appset-namespace (-N), with tollgate's
// --namespace and --kubeconfig.
type appSetTarget struct {
	namespace, appSetNamespace, kubeconfig string
}

func (o *appSetTarget) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.namespace, "namespace", application.DefaultNamespace, "the control-plane namespace (Argo CD's): its ApplicationSets are read unless -N or NAMESPACE/NAME says another")
	f.StringVarP(&o.appSetNamespace, "appset-namespace", "N", "", "namespace of the ApplicationSets (ignored when NAMESPACE/NAME is given)")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account)")
}

// key is the ApplicationSet name names: NAME in -N or the control-plane
// namespace, or NAMESPACE/NAME (argocd's qualified name).
func (o appSetTarget) key(name string) types.NamespacedName {
	if ns, n, ok := strings.Cut(name, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: n}
	}
	return types.NamespacedName{Namespace: cmp.Or(o.appSetNamespace, o.namespace), Name: name}
}

// Output formats of appset get and appset list: argocd's.
const (
	appSetFormatWide = "wide"
	appSetFormatName = "name"
)

// appSetGetOptions are the flags of `tollgate appset get`.
type appSetGetOptions struct {
	appSetTarget
	output     string
	showParams bool
}

func newAppSetGetCmd() *cobra.Command {
	o := appSetGetOptions{}
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show an ApplicationSet, like argocd appset get",
		Long: `Show the ApplicationSet NAME (NAMESPACE/NAME, or NAME in -N or --namespace)
as argocd appset get does: its template's project, destination and sources,
its health, the template's sync policy, and its conditions. --show-params
adds the template's Helm parameters. -o yaml and -o json print the whole
ApplicationSet as the API server stores it, without metadata.managedFields.

Exit status: 0 when the ApplicationSet was shown; 2 on usage errors, when it
does not exist, or when the cluster cannot be read.`,
		Example: `  tollgate appset get guestbook
  tollgate appset get team-a/previews -o yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkAppSetFormat(o.output, false); err != nil {
				return err
			}
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			return getAppSet(cmd.Context(), cmd.OutOrStdout(), c, o.key(args[0]), o)
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.StringVarP(&o.output, "output", "o", appSetFormatWide, "output format: json, yaml or wide")
	f.BoolVar(&o.showParams, "show-params", false, "show the template's Helm parameters")
	return cmd
}

// checkAppSetFormat refuses an output format argocd's appset get (or, with
// list, appset list) does not know.
func checkAppSetFormat(format string, list bool) error {
	switch format {
	case appSetFormatWide, "", appGetFormatJSON, appGetFormatYAML:
		return nil
	case appSetFormatName:
		if list {
			return nil
		}
	}
	if list {
		return usageError(fmt.Errorf("unknown output format: %s (valid: wide, name, json, yaml)", format))
	}
	return usageError(fmt.Errorf("unknown output format: %s (valid: wide, json, yaml)", format))
}

// getAppSet reads the ApplicationSet key and prints it as o says.
func getAppSet(ctx context.Context, w io.Writer, c client.Reader, key types.NamespacedName, o appSetGetOptions) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(v1alpha1.ApplicationSetGroupVersionKind)
	if err := c.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return usageError(fmt.Errorf("applicationset %s not found in namespace %s", key.Name, key.Namespace))
		}
		return fmt.Errorf("get applicationset %s: %w", key.Name, err)
	}
	if o.output == appGetFormatJSON || o.output == appGetFormatYAML {
		return writeStructured(w, o.output, withoutManagedFields(obj))
	}
	set, err := typedAppSet(obj)
	if err != nil {
		return err
	}
	return writeAppSet(w, set, appSetHealth(obj), o.showParams)
}

// withoutManagedFields is obj's content without metadata.managedFields.
func withoutManagedFields(obj *unstructured.Unstructured) map[string]any {
	c := obj.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	return c.Object
}

// typedAppSet decodes an ApplicationSet read unstructured.
func typedAppSet(obj *unstructured.Unstructured) (*v1alpha1.ApplicationSet, error) {
	var set v1alpha1.ApplicationSet
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &set); err != nil {
		return nil, fmt.Errorf("decode applicationset %s: %w", obj.GetName(), err)
	}
	return &set, nil
}

// appSetHealth is status.health.status, as the controller sets it from
// the conditions (v1alpha1.ApplicationSetStatus.CalculateHealth).
func appSetHealth(obj *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(obj.Object, "status", "health", "status")
	return s
}

// appSetQualifiedName is argocd's ApplicationSet.QualifiedName:
// NAMESPACE/NAME, or NAME without a namespace.
func appSetQualifiedName(set *v1alpha1.ApplicationSet) string {
	if set.Namespace == "" {
		return set.Name
	}
	return set.Namespace + "/" + set.Name
}

// templateProject is the template's project, "default" when unset, as
// argocd's GetProject.
func templateProject(set *v1alpha1.ApplicationSet) string {
	return cmp.Or(set.Spec.Template.Spec.Project, "default")
}

// opField is argocd's printOpFmtStr: the key padded to 20 columns.
const opField = "%-20s%s\n"

// writeAppSet prints set as argocd appset get's wide output
// (printAppSetSummaryTable, then the conditions table and, with params,
// the template's Helm parameters).
func writeAppSet(w io.Writer, set *v1alpha1.ApplicationSet, health string, params bool) error {
	spec := set.Spec.Template.Spec
	fmt.Fprintf(w, opField, "Name:", appSetQualifiedName(set))
	fmt.Fprintf(w, opField, "Project:", templateProject(set))
	fmt.Fprintf(w, opField, "Server:", cmp.Or(spec.Destination.Server, spec.Destination.Name))
	fmt.Fprintf(w, opField, "Namespace:", spec.Destination.Namespace)
	fmt.Fprintf(w, opField, "Health Status:", health)
	srcs := spec.Sources
	if len(srcs) == 0 {
		fmt.Fprintln(w, "Source:")
		srcs = []v1alpha1.ApplicationSource{{}}
		if spec.Source != nil {
			srcs[0] = *spec.Source
		}
	} else {
		fmt.Fprintln(w, "Sources:")
	}
	for _, s := range srcs {
		writeSourceDetails(w, s)
	}
	policy := "<none>"
	if p := spec.SyncPolicy; p != nil && p.Automated.IsEnabled() {
		policy = "Automated"
		if p.Automated.Prune {
			policy += " (Prune)"
		}
	}
	fmt.Fprintf(w, opField, "SyncPolicy:", policy)
	if len(set.Status.Conditions) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "CONDITION\tSTATUS\tMESSAGE\tLAST TRANSITION\n")
		for _, c := range set.Status.Conditions {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Type, c.Status, oneLineCell(c.Message), inUTC(c.LastTransitionTime))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if params {
		var helm *v1alpha1.ApplicationSourceHelm
		if len(srcs) > 0 {
			helm = srcs[0].Helm
		}
		return writeHelmParams(w, helm)
	}
	return nil
}

// writeSourceDetails prints one source as argocd's printAppSourceDetails.
func writeSourceDetails(w io.Writer, s v1alpha1.ApplicationSource) {
	fmt.Fprintf(w, opField, "- Repo:", s.RepoURL)
	fmt.Fprintf(w, opField, "  Target:", s.TargetRevision)
	if s.Path != "" {
		fmt.Fprintf(w, opField, "  Path:", s.Path)
	}
	if s.Ref != "" {
		fmt.Fprintf(w, opField, "  Ref:", s.Ref)
	}
	if s.Helm != nil && len(s.Helm.ValueFiles) > 0 {
		fmt.Fprintf(w, opField, "  Helm Values:", strings.Join(s.Helm.ValueFiles, ","))
	}
	if s.Kustomize != nil && s.Kustomize.NamePrefix != "" {
		fmt.Fprintf(w, opField, "  Name Prefix:", s.Kustomize.NamePrefix)
	}
}

// helmParamLimit is where argocd's printHelmParams cuts a value.
const helmParamLimit = 80

// writeHelmParams prints Helm parameters as argocd's printHelmParams: an
// empty line, then (with Helm) another and the NAME VALUE table, values cut
// at 80 characters.
func writeHelmParams(w io.Writer, helm *v1alpha1.ApplicationSourceHelm) error {
	fmt.Fprintln(w)
	if helm == nil {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "NAME\tVALUE\n")
	for _, p := range helm.Parameters {
		fmt.Fprintf(tw, "%s\t%s\n", p.Name, truncate(p.Value, helmParamLimit))
	}
	return tw.Flush()
}

// truncate cuts s to n runes, the last three "...", as argocd's
// truncateString.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n > 3 {
		n -= 3
	}
	return string(r[:n]) + "..."
}

// inUTC is t in UTC, so that what is printed does not depend on the
// machine's time zone; nil stays nil.
func inUTC(t *metav1.Time) *metav1.Time {
	if t == nil {
		return nil
	}
	return &metav1.Time{Time: t.UTC()}
}

// oneLineCell turns the tabs and newlines of a table cell into spaces.
func oneLineCell(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }

// appSetListOptions are the flags of `tollgate appset list`.
type appSetListOptions struct {
	appSetTarget
	output, selector string
	projects         []string
}

func newAppSetListCmd() *cobra.Command {
	o := appSetListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List ApplicationSets, like argocd appset list",
		Long: `List the ApplicationSets of --namespace (of -N NAMESPACE), sorted by
namespace and name, in argocd appset list's table: NAMESPACE/NAME, the
template's project, the sync policy, health and the conditions that are
True; -o wide (the default) adds the template's repository, path and target
revision, -o name prints the names only, -o json|yaml the ApplicationSets.
-l selects by label, -p by the template's project (repeatable).

Exit status: 0 when the list was shown; 2 on usage errors or when the
cluster cannot be read.`,
		Example: `  tollgate appset list
  tollgate appset list -p team-a -o name`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkAppSetFormat(o.output, true); err != nil {
				return err
			}
			if _, err := labels.Parse(o.selector); err != nil {
				return usageError(fmt.Errorf("invalid --selector %q: %w", o.selector, err))
			}
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			return listAppSets(cmd.Context(), cmd.OutOrStdout(), c, o)
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.StringVarP(&o.output, "output", "o", appSetFormatWide, "output format: wide, name, json or yaml")
	f.StringVarP(&o.selector, "selector", "l", "", "list ApplicationSets by label (=, ==, !=, in, notin, exists, !exists)")
	f.StringArrayVarP(&o.projects, "project", "p", nil, "list ApplicationSets whose template names this project (repeatable)")
	return cmd
}

// listAppSets lists the ApplicationSets o selects and prints them.
func listAppSets(ctx context.Context, w io.Writer, c client.Reader, o appSetListOptions) error {
	sel, err := labels.Parse(o.selector)
	if err != nil {
		return usageError(fmt.Errorf("invalid --selector %q: %w", o.selector, err))
	}
	ns := cmp.Or(o.appSetNamespace, o.namespace)
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(v1alpha1.ApplicationSetKind + "List"))
	if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return fmt.Errorf("list applicationsets in %s: %w", ns, err)
	}
	type row struct {
		obj *unstructured.Unstructured
		set *v1alpha1.ApplicationSet
	}
	var rows []row
	for i := range list.Items {
		set, err := typedAppSet(&list.Items[i])
		if err != nil {
			return err
		}
		if len(o.projects) == 0 || slices.Contains(o.projects, set.Spec.Template.Spec.Project) {
			rows = append(rows, row{&list.Items[i], set})
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(strings.Compare(a.set.Namespace, b.set.Namespace), strings.Compare(a.set.Name, b.set.Name))
	})
	switch o.output {
	case appGetFormatJSON, appGetFormatYAML:
		items := make([]map[string]any, len(rows))
		for i, r := range rows {
			items[i] = withoutManagedFields(r.obj)
		}
		return writeStructured(w, o.output, items)
	case appSetFormatName:
		for _, r := range rows {
			fmt.Fprintln(w, appSetQualifiedName(r.set))
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "NAME\tPROJECT\tSYNCPOLICY\tHEALTH\tCONDITIONS"
	wide := o.output == appSetFormatWide || o.output == ""
	if wide {
		header += "\tREPO\tPATH\tTARGET"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		spec := r.set.Spec.Template.Spec
		cells := []string{appSetQualifiedName(r.set), spec.Project, appSetSyncPolicy(r.set.Spec.SyncPolicy), appSetHealth(r.obj), trueConditions(r.set.Status.Conditions)}
		if wide {
			var src v1alpha1.ApplicationSource
			if spec.Source != nil {
				src = *spec.Source
			} else if len(spec.Sources) > 0 {
				src = spec.Sources[0]
			}
			cells = append(cells, src.RepoURL, src.Path, src.TargetRevision)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// appSetSyncPolicy is the SYNCPOLICY cell: "<nil>" without a sync policy,
// else its applicationsSync policy (sync when unset, Argo CD's default)
// and PreserveResourcesOnDeletion when set. argocd prints the Go value
// (%s of a pointer); this is the same information without Go's syntax.
func appSetSyncPolicy(p *v1alpha1.ApplicationSetSyncPolicy) string {
	if p == nil {
		return "<nil>"
	}
	out := string(v1alpha1.ApplicationsSyncPolicySync)
	if p.ApplicationsSync != nil && *p.ApplicationsSync != "" {
		out = string(*p.ApplicationsSync)
	}
	if p.PreserveResourcesOnDeletion {
		out += ",PreserveResourcesOnDeletion"
	}
	return out
}

// trueConditions is the CONDITIONS cell as argocd prints it: the
// conditions whose status is True, as Go prints the list
// ([{Type Message LastTransitionTime Status Reason}]), messages on one line.
func trueConditions(conds []v1alpha1.ApplicationSetCondition) string {
	shown := []v1alpha1.ApplicationSetCondition{}
	for _, c := range conds {
		if c.Status == v1alpha1.ApplicationSetConditionStatusTrue {
			c.Message = oneLineCell(c.Message)
			c.LastTransitionTime = inUTC(c.LastTransitionTime)
			shown = append(shown, c)
		}
	}
	return fmt.Sprintf("%v", shown)
}
