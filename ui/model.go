package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
	"github.com/tollgate-dev/tollgate/internal/appops"
	"github.com/tollgate-dev/tollgate/internal/apptext"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// appRow is one line of the Applications list.
type appRow struct {
	Namespace, Name, Project, Destination, Sync, Health, Revision, Operation string
	// Refused is set while the gate refuses the Application's revision.
	Refused bool
}

func newAppRow(app *v1alpha1.Application) appRow {
	r := appRow{
		Namespace: app.Namespace, Name: app.Name, Project: app.Spec.Project,
		Destination: destination(app.Spec.Destination),
		Sync:        cmp.Or(string(app.Status.Sync.Status), "Unknown"),
		Health:      cmp.Or(string(app.Status.Health.Status), "Unknown"),
		Revision:    v1alpha1.ShortRevision(cmp.Or(app.Status.Sync.Revision, strings.Join(app.Status.Sync.Revisions, ", "))),
	}
	if st := app.Status.OperationState; st != nil {
		r.Operation = string(st.Phase)
	}
	r.Refused = slices.ContainsFunc(app.Status.Conditions, func(c v1alpha1.ApplicationCondition) bool {
		return c.Type == v1alpha1.ApplicationConditionPolicyViolation
	})
	return r
}

func destination(d v1alpha1.ApplicationDestination) string {
	return cmp.Or(d.Name, d.Server) + " / " + cmp.Or(d.Namespace, "(none)")
}

// listFilter is the list page's query.
type listFilter struct {
	Project, Sync, Health, Namespace, Query string
}

func (f listFilter) match(r appRow) bool {
	return (f.Project == "" || r.Project == f.Project) &&
		(f.Sync == "" || r.Sync == f.Sync) &&
		(f.Health == "" || r.Health == f.Health) &&
		(f.Namespace == "" || r.Namespace == f.Namespace) &&
		(f.Query == "" || strings.Contains(strings.ToLower(r.Name), strings.ToLower(f.Query)))
}

// choices are the distinct values of field among rows, sorted.
func choices(rows []appRow, field func(appRow) string) []string {
	var out []string
	for _, r := range rows {
		if v := field(r); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// verdict is one denial of the gate, parsed from the PolicyViolation
// condition's lines `[rule] Kind/namespace/name: message`.
type verdict struct {
	Rule, Object, Message string
}

// verdicts reads the PolicyViolation condition: the refused revision line,
// if any, and the denials.
func verdicts(app *v1alpha1.Application) (revision string, out []verdict) {
	for _, c := range app.Status.Conditions {
		if c.Type != v1alpha1.ApplicationConditionPolicyViolation {
			continue
		}
		for line := range strings.SplitSeq(c.Message, "\n") {
			if rest, ok := strings.CutPrefix(line, "revision "); ok && strings.HasSuffix(rest, " refused:") {
				revision = strings.TrimSuffix(rest, " refused:")
				continue
			}
			out = append(out, parseVerdict(line))
		}
	}
	return revision, out
}

func parseVerdict(line string) verdict {
	rest, ok := strings.CutPrefix(line, "[")
	if !ok {
		return verdict{Message: line}
	}
	rule, rest, ok := strings.Cut(rest, "] ")
	if !ok {
		return verdict{Message: line}
	}
	obj, msg, ok := strings.Cut(rest, ": ")
	if !ok {
		return verdict{Rule: rule, Message: rest}
	}
	return verdict{Rule: rule, Object: obj, Message: msg}
}

// opView is the current or last operation.
type opView struct {
	Phase, Message, Revision, InitiatedBy, Started, Finished string
	Resources                                                []v1alpha1.ResourceResult
}

func newOpView(st *v1alpha1.OperationState) *opView {
	if st == nil {
		return nil
	}
	v := &opView{
		Phase: string(st.Phase), Message: st.Message, InitiatedBy: appops.Initiator(st.Operation.InitiatedBy),
		Started: apptext.Time(st.StartedAt.Time),
	}
	if st.FinishedAt != nil {
		v.Finished = apptext.Time(st.FinishedAt.Time)
	}
	switch r, s := st.SyncResult, st.Operation.Sync; {
	case r != nil && len(r.Revisions) > 0:
		v.Revision = strings.Join(r.Revisions, ", ")
	case r != nil && r.Revision != "":
		v.Revision = r.Revision
	case s != nil && len(s.Revisions) > 0:
		v.Revision = strings.Join(s.Revisions, ", ")
	case s != nil:
		v.Revision = s.Revision
	}
	if st.SyncResult != nil {
		v.Resources = st.SyncResult.Resources
	}
	return v
}

// historyRow is one deployment of the history, newest first.
type historyRow struct {
	ID                               int64
	Revision, DeployedAt, DeployedBy string
	Source                           string
	// Commits are the deployed commits of the Git sources: author, date
	// and message (nil when unknown).
	Commits []*reposerver.Commit
	// Unread says why commits were not read: a repository the project
	// does not permit (application.HistoryNotPermitted).
	Unread []string
	// Current is the deployment now live (nothing to roll back to).
	Current bool
}

func history(app *v1alpha1.Application, commits map[int64][]application.HistoryCommit) []historyRow {
	out := make([]historyRow, 0, len(app.Status.History))
	for i, h := range slices.Backward(app.Status.History) {
		srcs, revs := h.SourcesAndRevisions()
		var names []string
		for _, s := range srcs {
			names = append(names, sourceText(s))
		}
		row := historyRow{
			ID: h.ID, Revision: strings.Join(revs, ", "), DeployedAt: apptext.Time(h.DeployedAt.Time), DeployedBy: appops.Initiator(h.InitiatedBy),
			Source: strings.Join(names, "; "), Current: i == len(app.Status.History)-1,
		}
		for _, c := range commits[h.ID] {
			switch {
			case c.Commit != nil:
				row.Commits = append(row.Commits, c.Commit)
			case c.Unread != "" && !slices.Contains(row.Unread, c.Unread):
				row.Unread = append(row.Unread, c.Unread)
			}
		}
		out = append(out, row)
	}
	return out
}

func sourceText(s v1alpha1.ApplicationSource) string {
	t := s.RepoURL
	switch {
	case s.Chart != "":
		t += " chart " + s.Chart
	case s.Path != "":
		t += " " + s.Path
	}
	if s.TargetRevision != "" {
		t += " @ " + s.TargetRevision
	}
	return t
}

// rollbackRefusal is why Rollback is disabled, "" when it is not: Argo
// CD's message while automated sync is on.
func rollbackRefusal(app *v1alpha1.Application) string {
	if sp := app.Spec.SyncPolicy; sp != nil && sp.Automated.IsEnabled() {
		return appops.ErrAutomatedRollback.Error()
	}
	return ""
}

// projectWords are an AppProject's limits as sentences.
type projectWords struct {
	Permits, Denies, Other []string
}

func describeProject(p *v1alpha1.AppProject) projectWords {
	var w projectWords
	spec := p.Spec
	allow, deny := splitNegated(spec.SourceRepos)
	switch {
	case len(allow) == 0:
		w.Denies = append(w.Denies, "Sources from any repository: none is listed in sourceRepos.")
	case slices.Contains(allow, "*"):
		w.Permits = append(w.Permits, "Sources from any repository.")
	default:
		w.Permits = append(w.Permits, "Sources from "+strings.Join(allow, ", ")+".")
	}
	if len(deny) > 0 {
		w.Denies = append(w.Denies, "Sources from "+strings.Join(deny, ", ")+".")
	}
	for _, d := range spec.Destinations {
		where := "namespace " + cmp.Or(d.Namespace, "(any)") + " of cluster " + cmp.Or(d.Name, d.Server, "(any)")
		if strings.HasPrefix(d.Namespace, "!") || strings.HasPrefix(d.Server, "!") || strings.HasPrefix(d.Name, "!") {
			w.Denies = append(w.Denies, "Deploying into "+strings.NewReplacer("!", "").Replace(where)+".")
		} else {
			w.Permits = append(w.Permits, "Deploying into "+where+".")
		}
	}
	if len(spec.Destinations) == 0 {
		w.Denies = append(w.Denies, "Deploying anywhere: no destination is listed.")
	}
	w.Permits = append(w.Permits, kindsSentence("Cluster-scoped objects", restrictionKinds(spec.ClusterResourceWhitelist), "none: clusterResourceWhitelist is empty")...)
	w.Denies = append(w.Denies, kindsSentence("Cluster-scoped objects", restrictionKinds(spec.ClusterResourceBlacklist), "")...)
	w.Permits = append(w.Permits, kindsSentence("Namespaced objects", groupKinds(spec.NamespaceResourceWhitelist), "all kinds, unless denied below")...)
	w.Denies = append(w.Denies, kindsSentence("Namespaced objects", groupKinds(spec.NamespaceResourceBlacklist), "")...)
	if len(spec.SourceNamespaces) > 0 {
		w.Permits = append(w.Permits, "Applications in namespaces "+strings.Join(spec.SourceNamespaces, ", ")+" (besides the control-plane namespace).")
	}
	for _, sw := range spec.SyncWindows {
		scope := strings.Join(slices.Concat(sw.Applications, sw.Namespaces), ", ")
		w.Other = append(w.Other, fmt.Sprintf("Sync window: %s syncs at %q for %s (%s).", sw.Kind, sw.Schedule, sw.Duration, cmp.Or(scope, "every Application")))
	}
	if spec.OrphanedResources != nil {
		w.Other = append(w.Other, "Orphaned resources monitoring is set; tollgate does not monitor them.")
	}
	return w
}

func splitNegated(globs []string) (allow, deny []string) {
	for _, g := range globs {
		if n, ok := strings.CutPrefix(g, "!"); ok {
			deny = append(deny, n)
		} else {
			allow = append(allow, g)
		}
	}
	return allow, deny
}

func restrictionKinds(items []v1alpha1.ClusterResourceRestrictionItem) []string {
	var out []string
	for _, it := range items {
		k := groupKindText(it.Group, it.Kind)
		if it.Name != "" {
			k += " named " + it.Name
		}
		out = append(out, k)
	}
	return out
}

func groupKinds(items []metav1.GroupKind) []string {
	var out []string
	for _, it := range items {
		out = append(out, groupKindText(it.Group, it.Kind))
	}
	return out
}

func groupKindText(group, kind string) string {
	return cmp.Or(group, "core") + "/" + kind
}

func kindsSentence(what string, kinds []string, empty string) []string {
	switch {
	case len(kinds) == 0 && empty != "":
		return []string{what + ": " + empty + "."}
	case len(kinds) == 0:
		return nil
	case slices.Contains(kinds, "*/*"):
		return []string{what + " of every kind."}
	default:
		return []string{what + " of kind " + strings.Join(kinds, ", ") + "."}
	}
}
