// Package apptext renders an Application for people to read, as
// `tollgate app get` prints it and as argocd app get does: a summary of
// what it is and how it stands (sources, destination, sync policy, sync
// and health status, a pending operation), then its conditions, its
// current or last operation and its resources, each section left out when
// empty. Times are in UTC, so the text does not depend on the machine's
// time zone.
package apptext

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

// fieldFormat aligns the values of the "Key:" lines, as argocd app get
// does.
const fieldFormat = "%-20s%s\n"

// Write writes app to w as text.
func Write(w io.Writer, app *v1alpha1.Application) error {
	_, err := io.WriteString(w, text(app))
	return err
}

// text is app as text: the summary, then the conditions, the last
// operation and the resources, each section left out when empty.
func text(app *v1alpha1.Application) string {
	return join(Header(app), Resources(app))
}

// Header is the text of app without its resources: the summary, then the
// conditions and the last operation, each section left out when empty
// (what argocd app get prints before its resources or its tree).
func Header(app *v1alpha1.Application) string {
	return join(summary(app), conditions(app), operation(app))
}

// Resources is the resources table of app's text; "" without resources.
func Resources(app *v1alpha1.Application) string { return resources(app) }

// join joins the non-empty sections with an empty line.
func join(sections ...string) string {
	var out []string
	for _, s := range sections {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n")
}

// summary is what the Application is and how it stands, like
// argocd app get's summary table.
func summary(app *v1alpha1.Application) string {
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
			revs[i] = v1alpha1.ShortRevision(r)
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
	if rev := v1alpha1.ShortRevision(st.Revision); rev != "" && rev != target {
		out += " (" + rev + ")"
	}
	return out
}

// conditions is the conditions table, every message in full.
func conditions(app *v1alpha1.Application) string {
	if len(app.Status.Conditions) == 0 {
		return ""
	}
	rows := make([][]string, 0, len(app.Status.Conditions))
	for _, c := range app.Status.Conditions {
		rows = append(rows, []string{c.Type, c.Message})
	}
	return table([]string{"CONDITION", "MESSAGE"}, rows)
}

// operation is the current or last operation, like argocd app get
// --show-operation. The revision is the synced one, or the requested one
// when nothing was synced (a sync refused by policy).
func operation(app *v1alpha1.Application) string {
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
	writeField(&b, "Start:", Time(st.StartedAt.Time))
	if st.FinishedAt != nil {
		writeField(&b, "Finished:", Time(st.FinishedAt.Time))
		writeField(&b, "Duration:", st.FinishedAt.Sub(st.StartedAt.Time).Round(time.Second).String())
	}
	if st.Message != "" {
		writeField(&b, "Message:", st.Message)
	}
	return b.String()
}

// Time formats t for people, in UTC (RFC 3339); "" for the zero time.
func Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// resources is the resources table: status.resources, with the hook and
// message of the last sync's result for each, then the resources only that
// result has (hooks, pruned resources).
func resources(app *v1alpha1.Application) string {
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
		b.WriteString(strings.TrimRight(fmt.Sprintf(fieldFormat, key, l), " \n"))
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
