package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

// Output formats of `tollgate app get`.
const (
	appGetFormatText = "text"
	appGetFormatYAML = "yaml"
	appGetFormatJSON = "json"
)

// appFieldFormat aligns the values of the text output's "Key:" lines, as
// argocd app get does.
const appFieldFormat = "%-20s%s\n"

// appGetOptions are the flags of `tollgate app get`.
type appGetOptions struct {
	appTarget
	output string
	// refresh is "", or the refresh asked for first: normal or hard.
	refresh string
}

func newAppGetCmd() *cobra.Command {
	o := appGetOptions{}
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show an Application's state, like argocd app get",
		Long: `Show the Application NAME: its sources and destination, sync and health
status, conditions (a sync refused by policy says why there, with the rule
ids), the last operation, and its resources with their sync wave and, from
the last sync, their hook and message. --refresh (--hard-refresh) first asks
the controller to compare it with Git (render again) and waits until it has.

-o yaml and -o json print the whole Application as the API server stores it,
fields tollgate does not model included, without metadata.managedFields.

Exit status: 0 when the Application was shown, whatever its state; 2 on
usage errors, when the Application does not exist, or when the cluster
cannot be read.`,
		Example: `  tollgate app get billing
  tollgate app get billing --kubeconfig .tollgate/kubeconfig
  tollgate app get billing -o yaml
  tollgate app get billing --refresh`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return runAppGet(cmd, o)
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.StringVarP(&o.output, "output", "o", appGetFormatText, "output format: text, yaml or json")
	addRefreshFlags(f, &o.refresh)
	return cmd
}

// addRefreshFlags adds --refresh and --hard-refresh, which set into to the
// refresh type asked for ("" for none; hard wins).
func addRefreshFlags(f *pflag.FlagSet, into *string) {
	f.Var(refreshFlag{into, v1alpha1.RefreshTypeNormal}, "refresh", "compare with Git first: ask the controller for a refresh and wait for it, like argocd app get --refresh")
	f.Var(refreshFlag{into, v1alpha1.RefreshTypeHard}, "hard-refresh", "as --refresh, rendering again without the manifest cache")
	for _, name := range []string{"refresh", "hard-refresh"} {
		f.Lookup(name).NoOptDefVal = "true"
	}
}

// refreshFlag is a boolean flag that sets the refresh type (hard wins).
type refreshFlag struct {
	into *string
	typ  string
}

func (f refreshFlag) String() string { return strconv.FormatBool(f.into != nil && *f.into == f.typ) }
func (f refreshFlag) Type() string   { return "bool" }
func (f refreshFlag) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	if on && (*f.into == "" || f.typ == v1alpha1.RefreshTypeHard) {
		*f.into = f.typ
	}
	return nil
}

// appRefreshTimeout bounds the wait for a refresh.
const appRefreshTimeout = 2 * time.Minute

// refreshApp asks the controller to compare the Application key with Git
// and waits until it has (appops.Refresh).
func refreshApp(ctx context.Context, c client.Client, key types.NamespacedName, typ string, timeout time.Duration) error {
	return asUsage(appops.Refresh(ctx, c, key, typ, timeout))
}

// runAppGet reads the Application and prints it.
func runAppGet(cmd *cobra.Command, o appGetOptions) error {
	if err := checkAppGetFormat(o.output); err != nil {
		return err
	}
	c, _, err := newAppClient(o.kubeconfig)
	if err != nil {
		return err
	}
	if o.refresh != "" {
		if err := refreshApp(cmd.Context(), c, o.key(), o.refresh, appRefreshTimeout); err != nil {
			return err
		}
	}
	app, err := getApp(cmd.Context(), c, o.key())
	if err != nil {
		return err
	}
	return printApp(cmd.OutOrStdout(), app, o.output)
}

// checkAppGetFormat rejects an unknown --output format.
func checkAppGetFormat(format string) error {
	switch format {
	case appGetFormatText, appGetFormatYAML, appGetFormatJSON:
		return nil
	}
	return usageError(fmt.Errorf("invalid --output %q: valid formats are text, yaml, json", format))
}

// getApp reads the Application as the API server stores it: unstructured,
// so that -o yaml and -o json keep the fields tollgate's types do not
// model. A missing Application is a usage error.
func getApp(ctx context.Context, c client.Reader, key types.NamespacedName) (*unstructured.Unstructured, error) {
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(v1alpha1.ApplicationGroupVersionKind)
	if err := c.Get(ctx, key, app); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, usageError(fmt.Errorf("application %s not found in namespace %s", key.Name, key.Namespace))
		}
		return nil, fmt.Errorf("get application %s: %w", key.Name, err)
	}
	return app, nil
}

// printApp writes app to w in format: text (a summary like argocd app get),
// or yaml or json (the whole object without metadata.managedFields).
func printApp(w io.Writer, app *unstructured.Unstructured, format string) error {
	var out []byte
	switch format {
	case appGetFormatText:
		var typed v1alpha1.Application
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(app.Object, &typed); err != nil {
			return fmt.Errorf("decode application %s: %w", app.GetName(), err)
		}
		out = []byte(appText(&typed))
	case appGetFormatYAML, appGetFormatJSON:
		obj := app.DeepCopy()
		unstructured.RemoveNestedField(obj.Object, "metadata", "managedFields")
		var err error
		if format == appGetFormatYAML {
			out, err = yaml.Marshal(obj.Object)
		} else {
			out, err = json.MarshalIndent(obj.Object, "", "  ")
			out = append(out, '\n')
		}
		if err != nil {
			return fmt.Errorf("encode application %s: %w", app.GetName(), err)
		}
	default:
		return checkAppGetFormat(format)
	}
	_, err := w.Write(out)
	return err
}

// appText is the text output: the summary, then the conditions, the last
// operation and the resources, each section left out when empty.
func appText(app *v1alpha1.Application) string {
	var sections []string
	for _, s := range []string{appSummary(app), appConditions(app), appOperation(app), appResources(app)} {
		if s != "" {
			sections = append(sections, s)
		}
	}
	return strings.Join(sections, "\n")
}

// appSummary is what the Application is and how it stands, like
// argocd app get's summary table.
func appSummary(app *v1alpha1.Application) string {
	var b strings.Builder
	writeField(&b, "Name:", app.Namespace+"/"+app.Name)
	writeField(&b, "Project:", app.Spec.Project)
	server := app.Spec.Destination.Server
	if server == "" {
		server = app.Spec.Destination.Name
	}
	writeField(&b, "Server:", server)
	writeField(&b, "Namespace:", app.Spec.Destination.Namespace)
	srcs := app.Sources()
	if app.Spec.HasMultipleSources() {
		b.WriteString("Sources:\n")
		for _, s := range srcs {
			writeSource(&b, s, "- ", "  ")
		}
	} else if len(srcs) == 1 {
		writeSource(&b, srcs[0], "", "")
	}
	writeField(&b, "Sync Policy:", syncPolicy(app.Spec.SyncPolicy))
	if p := app.Spec.SyncPolicy; p != nil && len(p.SyncOptions) > 0 {
		writeField(&b, "Sync Options:", strings.Join(p.SyncOptions, ", "))
	}
	writeField(&b, "Sync Status:", syncStatus(app))
	health := string(app.Status.Health.Status)
	if health == "" {
		health = string(v1alpha1.HealthStatusUnknown)
	}
	if msg := app.Status.Health.Message; msg != "" {
		health += " (" + msg + ")"
	}
	writeField(&b, "Health Status:", health)
	if op := app.Operation; op != nil && (app.Status.OperationState == nil || app.Status.OperationState.Phase.Completed()) {
		writeField(&b, "Pending Operation:", "Sync requested by "+appops.Initiator(op.InitiatedBy))
	}
	return b.String()
}

// writeSource writes the fields of one source; first prefixes its first
// line and rest the others (the "- " list of a multi-source Application).
func writeSource(b *strings.Builder, s v1alpha1.ApplicationSource, first, rest string) {
	prefix := first
	for _, f := range [][2]string{
		{"Repo:", s.RepoURL}, {"Target:", s.TargetRevision}, {"Path:", s.Path}, {"Chart:", s.Chart}, {"Ref:", s.Ref},
	} {
		if f[1] == "" && f[0] != "Repo:" {
			continue
		}
		writeField(b, prefix+f[0], f[1])
		prefix = rest
	}
}

// syncPolicy is "Manual", or "Automated" with its options.
func syncPolicy(p *v1alpha1.SyncPolicy) string {
	if p == nil || !p.Automated.IsEnabled() {
		return "Manual"
	}
	var opts []string
	if p.Automated.Prune {
		opts = append(opts, "Prune")
	}
	if p.Automated.SelfHeal {
		opts = append(opts, "SelfHeal")
	}
	if p.Automated.AllowEmpty {
		opts = append(opts, "AllowEmpty")
	}
	if len(opts) == 0 {
		return "Automated"
	}
	return "Automated (" + strings.Join(opts, ", ") + ")"
}

// syncStatus is "Synced to main (1a2b3c4)" for a single source, and the
// status with every source's compared revision for several.
func syncStatus(app *v1alpha1.Application) string {
	st := app.Status.Sync
	out := string(st.Status)
	if out == "" {
		return string(v1alpha1.SyncStatusCodeUnknown)
	}
	if app.Spec.HasMultipleSources() {
		if len(st.Revisions) == 0 {
			return out
		}
		revs := make([]string, len(st.Revisions))
		for i, r := range st.Revisions {
			revs[i] = appops.ShortRevision(r)
		}
		return out + " (" + strings.Join(revs, ", ") + ")"
	}
	target := "HEAD"
	if app.Spec.Source != nil && app.Spec.Source.TargetRevision != "" {
		target = app.Spec.Source.TargetRevision
	}
	switch st.Status {
	case v1alpha1.SyncStatusCodeSynced:
		out += " to " + target
	case v1alpha1.SyncStatusCodeOutOfSync:
		out += " from " + target
	default:
		return out
	}
	if rev := appops.ShortRevision(st.Revision); rev != "" && rev != target {
		out += " (" + rev + ")"
	}
	return out
}

// appConditions is the conditions table, every message in full.
func appConditions(app *v1alpha1.Application) string {
	if len(app.Status.Conditions) == 0 {
		return ""
	}
	rows := make([][]string, 0, len(app.Status.Conditions))
	for _, c := range app.Status.Conditions {
		rows = append(rows, []string{c.Type, c.Message})
	}
	return table([]string{"CONDITION", "MESSAGE"}, rows)
}

// appOperation is the current or last operation, like argocd app get
// --show-operation. The revision is the synced one, or the requested one
// when nothing was synced (a sync refused by policy).
func appOperation(app *v1alpha1.Application) string {
	st := app.Status.OperationState
	if st == nil {
		return ""
	}
	var b strings.Builder
	writeField(&b, "Operation:", "Sync")
	var rev string
	switch r, s := st.SyncResult, st.Operation.Sync; {
	case r != nil && len(r.Revisions) > 0:
		rev = strings.Join(r.Revisions, ", ")
	case r != nil && r.Revision != "":
		rev = r.Revision
	case s != nil && len(s.Revisions) > 0:
		rev = strings.Join(s.Revisions, ", ")
	case s != nil:
		rev = s.Revision
	}
	if rev != "" {
		writeField(&b, "Sync Revision:", rev)
	}
	writeField(&b, "Initiated By:", appops.Initiator(st.Operation.InitiatedBy))
	writeField(&b, "Phase:", string(st.Phase))
	writeField(&b, "Start:", formatTime(st.StartedAt.Time))
	if st.FinishedAt != nil {
		writeField(&b, "Finished:", formatTime(st.FinishedAt.Time))
		writeField(&b, "Duration:", st.FinishedAt.Sub(st.StartedAt.Time).Round(time.Second).String())
	}
	if st.Message != "" {
		writeField(&b, "Message:", st.Message)
	}
	return b.String()
}

// formatTime prints t in UTC, so the output does not depend on the
// machine's time zone.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// appResources is the resources table: status.resources, with the hook and
// message of the last sync's result for each, then the resources only that
// result has (hooks, pruned resources).
func appResources(app *v1alpha1.Application) string {
	type key struct{ group, kind, namespace, name string }
	var rows [][]string
	index := map[key]int{}
	for _, r := range app.Status.Resources {
		health := ""
		if r.Health != nil {
			health = string(r.Health.Status)
		}
		index[key{r.Group, r.Kind, r.Namespace, r.Name}] = len(rows)
		rows = append(rows, []string{r.Group, r.Kind, r.Namespace, r.Name, string(r.Status), health, strconv.FormatInt(r.SyncWave, 10), "", ""})
	}
	if st := app.Status.OperationState; st != nil && st.SyncResult != nil {
		for _, r := range st.SyncResult.Resources {
			if i, ok := index[key{r.Group, r.Kind, r.Namespace, r.Name}]; ok {
				rows[i][7], rows[i][8] = string(r.HookType), r.Message
				continue
			}
			status := string(r.Status)
			if r.HookType != "" && r.HookPhase != "" {
				status = string(r.HookPhase)
			}
			rows = append(rows, []string{r.Group, r.Kind, r.Namespace, r.Name, status, "", "", string(r.HookType), r.Message})
		}
	}
	if len(rows) == 0 {
		return ""
	}
	return table([]string{"GROUP", "KIND", "NAMESPACE", "NAME", "STATUS", "HEALTH", "WAVE", "HOOK", "MESSAGE"}, rows)
}

// writeField writes one "Key:  value" line; the further lines of a
// multi-line value are indented under the first.
func writeField(b *strings.Builder, key, value string) {
	for i, l := range strings.Split(value, "\n") {
		if i > 0 {
			key = ""
		}
		b.WriteString(strings.TrimRight(fmt.Sprintf(appFieldFormat, key, l), " \n"))
		b.WriteByte('\n')
	}
}

// oneLine turns the tabs and newlines of a table cell into spaces.
var oneLine = strings.NewReplacer("\t", " ", "\n", " ")

// table aligns header and rows in columns. The further lines of a
// multi-line last cell go under its first line; tabs and newlines elsewhere
// become spaces. Lines carry no trailing blanks.
func table(header []string, rows [][]string) string {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	indent := strings.Repeat("\t", len(header)-1)
	for _, row := range append([][]string{header}, rows...) {
		last := len(row) - 1
		cells := make([]string, len(row))
		for i, c := range row[:last] {
			cells[i] = oneLine.Replace(c)
		}
		lines := strings.Split(strings.ReplaceAll(row[last], "\t", " "), "\n")
		cells[last] = lines[0]
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
		for _, l := range lines[1:] {
			fmt.Fprintln(tw, indent+l)
		}
	}
	_ = tw.Flush() // writes to a bytes.Buffer: cannot fail
	var out strings.Builder
	for l := range strings.Lines(buf.String()) {
		out.WriteString(strings.TrimRight(l, " \n"))
		out.WriteByte('\n')
	}
	return out.String()
}
