package policies

import (
	"slices"
	"strings"
)

// RuleInfo describes a built-in rule.
type RuleInfo struct {
	// ID is the stable rule id reported in Violation.Rule.
	ID string `json:"id"`
	// Severity is the default severity; Config.Rules overrides it.
	Severity Severity `json:"severity"`
	// Description is a one-line summary of what the rule enforces.
	Description string `json:"description"`
	// Boundary marks a rule that keeps a team inside its AppProject: only
	// the operator's configuration or the AppProject can exempt from it,
	// never the object under review (see exemptions.go).
	Boundary bool `json:"boundary,omitempty"`
}

// builtinRules is the table of built-in rule ids, sorted by id.
var builtinRules = []RuleInfo{
	{ID: "app-namespace", Severity: SeverityDeny, Boundary: true, Description: "Applications must be created in the Argo CD namespace."},
	{ID: "default-project", Severity: SeverityWarn, Description: "Applications should use a dedicated AppProject, not the allow-all default project."},
	{ID: "destination-server-and-name", Severity: SeverityDeny, Boundary: true, Description: "An Application destination must set exactly one of server and name."},
	{ID: "exemption-not-allowed", Severity: SeverityDeny, Boundary: true, Description: "An object's own exemption annotation cannot exempt it from a boundary rule."},
	{ID: "hpa-replicas-conflict", Severity: SeverityWarn, Description: "Workloads scaled by a HorizontalPodAutoscaler should not set spec.replicas."},
	{ID: "missing-resources-finalizer", Severity: SeverityWarn, Description: "Applications should carry the resources finalizer so deleting them cascades."},
	{ID: "no-argocd-destination", Severity: SeverityDeny, Boundary: true, Description: "Applications must not deploy into the Argo CD namespace."},
	{ID: "no-latest-tag", Severity: SeverityDeny, Description: "Container images must be pinned to a tag other than latest, or to a digest."},
	{ID: "no-plaintext-secret", Severity: SeverityDeny, Description: "Secrets must not be kept in plain text in Git; use a SealedSecret."},
	{ID: "project-destination-denied", Severity: SeverityDeny, Boundary: true, Description: "An Application's destination must be allowed by its AppProject."},
	{ID: "project-not-found", Severity: SeverityDeny, Boundary: true, Description: "An Application must reference an existing AppProject."},
	{ID: "project-resource-denied", Severity: SeverityDeny, Boundary: true, Description: "A resource's group and kind must be allowed by the AppProject's resource lists."},
	{ID: "project-source-denied", Severity: SeverityDeny, Boundary: true, Description: "An Application's source repositories must be allowed by its AppProject."},
	{ID: "protected-namespace", Severity: SeverityDeny, Boundary: true, Description: "Nothing deploys into tollgate's own or the control plane's namespaces."},
	{ID: "reserved-annotation", Severity: SeverityDeny, Boundary: true, Description: "Only tollgate's controller writes its operation fence annotation on Applications."},
	{ID: "source-path-outside-repo", Severity: SeverityDeny, Boundary: true, Description: "An Application's source paths must stay inside their repository."},
}

// Rules returns the built-in rules with their default severities, sorted by
// id. The slice is a copy the caller may modify.
func Rules() []RuleInfo {
	return slices.Clone(builtinRules)
}

// builtinRule returns the built-in rule with the given id.
func builtinRule(id string) (RuleInfo, bool) {
	i, ok := slices.BinarySearchFunc(builtinRules, id, func(r RuleInfo, id string) int {
		return strings.Compare(r.ID, id)
	})
	if !ok {
		return RuleInfo{}, false
	}
	return builtinRules[i], true
}
