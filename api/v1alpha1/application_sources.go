package v1alpha1

import (
	"strconv"
	"strings"
	"time"
)

// HasMultipleSources reports whether the spec uses sources rather than
// source. As in Argo CD, a non-empty sources wins over source.
func (s *ApplicationSpec) HasMultipleSources() bool {
	return s != nil && len(s.Sources) > 0
}

// Sources returns the Application's sources: spec.sources when set, else
// spec.source, else none. The result is a deep copy; changing it does not
// change the Application. It is safe on a nil receiver.
func (a *Application) Sources() []ApplicationSource {
	if a == nil {
		return nil
	}
	if a.Spec.HasMultipleSources() {
		out := make([]ApplicationSource, len(a.Spec.Sources))
		for i := range a.Spec.Sources {
			a.Spec.Sources[i].DeepCopyInto(&out[i])
		}
		return out
	}
	if a.Spec.Source != nil {
		return []ApplicationSource{*a.Spec.Source.DeepCopy()}
	}
	return nil
}

// SourcesAndRevisions returns what the deployment deployed, one revision
// per source: sources and revisions for several sources, else source and
// revision. The slices are the deployment's own, not copies.
func (h *RevisionHistory) SourcesAndRevisions() ([]ApplicationSource, []string) {
	if len(h.Sources) > 0 {
		return h.Sources, h.Revisions
	}
	return []ApplicationSource{h.Source}, []string{h.Revision}
}

// IsDeletionConfirmed reports whether the Application's
// AnnotationKeyDeletionApproved holds a time at or after since (to the
// second), as Argo CD decides.
func (a *Application) IsDeletionConfirmed(since time.Time) bool {
	v, ok := a.Annotations[AnnotationKeyDeletionApproved]
	if !ok {
		return false
	}
	at, err := time.Parse(time.RFC3339, v)
	return err == nil && !at.Before(since.Truncate(time.Second))
}

// ProjectName returns the AppProject the Application uses: spec.project,
// or "default" when empty, as Argo CD.
func (a *Application) ProjectName() string {
	if a.Spec.Project == "" {
		return "default"
	}
	return a.Spec.Project
}

// SkipReconcile reports whether the Application carries
// AnnotationKeyAppSkipReconcile with a true value, as Argo CD reads it
// (strconv.ParseBool: "true", "1", "t"...; anything else reconciles).
func (a *Application) SkipReconcile() bool {
	skip, err := strconv.ParseBool(a.Annotations[AnnotationKeyAppSkipReconcile])
	return err == nil && skip
}

// UnsupportedField returns the first field of the spec, other than its
// sources' (which the repo-server judges), that tollgate refuses rather
// than ignore, and why; "" when there is none. An Application that sets
// one is refused by name (InvalidSpecError), as by tollgate test.
func (s *ApplicationSpec) UnsupportedField() (field, why string) {
	switch {
	case s.SourceHydrator != nil:
		return "spec.sourceHydrator", "Argo CD's source hydrator is not run"
	case s.SyncPolicy != nil && s.SyncPolicy.Retry != nil && s.SyncPolicy.Retry.Refresh:
		return "spec.syncPolicy.retry.refresh", "a retry syncs the revision of the first attempt"
	}
	return "", ""
}

// ShortRevision abbreviates a Git commit hash to 7 characters and leaves
// anything else (a tag, a chart version) as it is, for people to read.
func ShortRevision(rev string) string {
	if (len(rev) == 40 || len(rev) == 64) && strings.Trim(rev, "0123456789abcdef") == "" {
		return rev[:7]
	}
	return rev
}
