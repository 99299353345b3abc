package policies

import "fmt"

// EnforcementPoint names the door a review comes through. The same rules run
// at every point; a few messages and defaults differ.
type EnforcementPoint string

// The enforcement points: the three doors, the ApplicationSet
// controller's gate in front of the Applications it generates, and the
// audit of what the cluster already stores.
const (
	PointCLI            EnforcementPoint = "cli"
	PointAdmission      EnforcementPoint = "admission"
	PointSync           EnforcementPoint = "sync"
	PointApplicationSet EnforcementPoint = "applicationset"
	PointAudit          EnforcementPoint = "audit"
)

// Severity is how a violation is enforced.
type Severity string

// Severities. SeverityOff only appears in configuration: a rule that is off
// produces no violations.
const (
	SeverityDeny Severity = "deny"
	SeverityWarn Severity = "warn"
	SeverityOff  Severity = "off"
)

// Input is one object under review, with the Argo CD context it is judged in.
// It is the `input` document of every built-in rule. Object, Application and
// Project are decoded JSON/YAML (map[string]any, []any, string, float64 or
// int64, bool, nil) and are never modified by the evaluator.
type Input struct {
	// Object is the Kubernetes object under review: an Application, an
	// AppProject, or a manifest (raw from Git, rendered, or admitted).
	Object map[string]any `json:"object"`
	// Application is the Application the object belongs to: the one that
	// rendered it (WithoutRuntimeState), or the object itself when it is an
	// Application. Nil for a plain manifest that no Application claims.
	Application map[string]any `json:"application,omitempty"`
	// Project is the AppProject of Application, resolved by the caller. Nil
	// when the Application names a project that does not exist. For the
	// implicit "default" project the caller passes DefaultProject().
	Project map[string]any `json:"project,omitempty"`
	// Context carries facts the caller knows and Rego cannot derive.
	Context Context `json:"context"`
}

// Context is the review context of an Input.
type Context struct {
	EnforcementPoint EnforcementPoint `json:"enforcementPoint"`
	// ArgoCDNamespace is the namespace Argo CD (or tollgate's engine) runs
	// in; default "argocd".
	ArgoCDNamespace string `json:"argocdNamespace"`
	// ClusterScoped is true when Object's kind is cluster-scoped (from the
	// destination's discovery, the built-in table of core kinds, or a CRD
	// seen in the same review; see InputOptions.Scope).
	ClusterScoped bool `json:"clusterScoped"`
	// KindUnplaced is true when nothing knew Object's kind, so
	// ClusterScoped is a guess (namespaced). The CLI notes it; rules do not
	// see it.
	KindUnplaced bool `json:"-"`
	// ClaimedApplication is true when Application comes from tracking
	// metadata on Object written by someone the caller does not trust to
	// sync (at admission: a user outside the webhook's syncUsers). Anyone
	// who writes an object can write such a claim, so it carries no
	// authority: neither the AppProject's exemption annotation nor an
	// operator exemption that matches on project or application applies.
	// The claim still subjects the object to the project's rules.
	ClaimedApplication bool `json:"-"`
	// RedeclaredKind is set on a CustomResourceDefinition that re-declares
	// a kind the cluster already serves (with another scope) or a kind of a
	// built-in API group: it describes that kind, and the evaluator denies
	// the CRD with project-resource-denied.
	RedeclaredKind string `json:"-"`
	// ReservedAnnotations are the reserved annotations (the controller's
	// operation fence, AnnotationOperationReplica) the review finds written
	// without the controller's authority; the evaluator denies each with
	// reserved-annotation. BuildInputs sets those an Application carries
	// (nothing in Git or a render may carry them); the webhook replaces
	// them with those a request adds, changes or removes, unless the
	// controller makes it; the engine clears them on the live Application
	// it syncs.
	ReservedAnnotations []string `json:"-"`
	// ScaledByHPA is true when a HorizontalPodAutoscaler in the same review
	// (or cluster) targets Object.
	ScaledByHPA bool `json:"scaledByHPA,omitempty"`
	// ExistingApplications is set on an AppProject review at admission: the
	// Applications that use this project today, so tightening it can be
	// reported. Rules may ignore it.
	ExistingApplications []map[string]any `json:"existingApplications,omitempty"`
}

// ObjectRef identifies the object a violation is about.
type ObjectRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
}

// Violation is one rule's finding about one object.
type Violation struct {
	// Rule is the stable rule id, e.g. "no-latest-tag". For user policies it
	// is the "rule" key of the result object if set, else the Rego package
	// path without the "data." prefix (e.g. "main").
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Path is the JSON path of the offending field inside the object, when
	// the rule knows it (e.g. ["spec","template","spec","containers",0,"image"]);
	// string keys and int indexes. Reports turn it into a line number.
	Path   []any     `json:"path,omitempty"`
	Object ObjectRef `json:"object"`
}

// Decision is the outcome of evaluating one Input.
type Decision struct {
	Violations []Violation `json:"violations"`
}

// Denied reports whether any violation has severity deny.
func (d Decision) Denied() bool {
	for _, v := range d.Violations {
		if v.Severity == SeverityDeny {
			return true
		}
	}
	return false
}

// Warnings returns the violations of severity warn.
func (d Decision) Warnings() []Violation {
	var out []Violation
	for _, v := range d.Violations {
		if v.Severity == SeverityWarn {
			out = append(out, v)
		}
	}
	return out
}

// InputError is an evaluation that failed on one input: Index is its
// position in the inputs EvaluateAll was given, so a caller can name the
// document behind it.
type InputError struct {
	Index int
	Err   error
}

func (e *InputError) Error() string { return fmt.Sprintf("input %d: %v", e.Index, e.Err) }
func (e *InputError) Unwrap() error { return e.Err }
