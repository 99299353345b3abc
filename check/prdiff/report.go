package prdiff

// Status is what a change does to an Application, a group of documents or
// an object.
type Status string

// The statuses.
const (
	Added     Status = "added"
	Removed   Status = "removed"
	Changed   Status = "changed"
	Unchanged Status = "unchanged"
	// Failed is an Application that failed to render at the head: its
	// objects are not compared (Report.Errors says why).
	Failed Status = "failed"
)

// Group kinds.
const (
	// GroupApplication holds what one Application renders.
	GroupApplication = "Application"
	// GroupPath holds the documents of one directory that no Application
	// renders.
	GroupPath = "Path"
)

// Report is the outcome of a diff. Its JSON form is documented in
// docs/cli.md and stable: fields are only ever added.
type Report struct {
	Base    Revision `json:"base"`
	Head    Revision `json:"head"`
	Summary Summary  `json:"summary"`
	// Groups are the Applications (by name) and then the directories, in
	// name order, each with the objects that changed or whose verdicts
	// did; unchanged groups are listed with their counts only.
	Groups []Group `json:"groups"`
	// Errors are what could not be decoded or rendered at the head (exit
	// 2); BaseErrors at the base, which the change may fix.
	Errors     []Error `json:"errors,omitempty"`
	BaseErrors []Error `json:"baseErrors,omitempty"`
	// Notes are the head's notes about input that was not checked.
	Notes []string `json:"notes,omitempty"`
	// ReusedRenders counts the Applications the head did not render
	// again: nothing they render from changed, so the base's render
	// stands.
	ReusedRenders int `json:"reusedRenders"`
}

// Revision is one side of the diff.
type Revision struct {
	// Name is the revision as given (or the default's), "work tree" for
	// the uncommitted head.
	Name string `json:"name"`
	// Commit is the commit it resolved to, "" for a work tree outside Git.
	Commit string `json:"commit,omitempty"`
}

// Summary counts the report.
type Summary struct {
	Applications Counts `json:"applications"`
	Objects      Counts `json:"objects"`
	// Introduced counts the findings at the head that the base did not
	// have for the same object; Existing those it had. Denials and
	// warnings apart.
	IntroducedDenials  int `json:"introducedDenials"`
	IntroducedWarnings int `json:"introducedWarnings"`
	ExistingDenials    int `json:"existingDenials"`
	ExistingWarnings   int `json:"existingWarnings"`
	Errors             int `json:"errors"`
}

// Counts counts by status.
type Counts struct {
	Added     int `json:"added"`
	Removed   int `json:"removed"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
}

func (c *Counts) add(s Status) {
	switch s {
	case Added:
		c.Added++
	case Removed:
		c.Removed++
	case Changed:
		c.Changed++
	default:
		c.Unchanged++
	}
}

// Group is one Application or directory.
type Group struct {
	// Kind is GroupApplication or GroupPath; Name the Application's name
	// or the directory.
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Status Status `json:"status"`
	// NotRendered says why an Application's objects are not known: its
	// sources are in another repository, or it failed to render at the
	// head (Status Failed; Report.Errors says how).
	NotRendered string `json:"notRendered,omitempty"`
	// Objects are the objects added, removed or changed, and unchanged
	// ones whose verdicts changed, in kind, namespace and name order.
	Objects []Object `json:"objects,omitempty"`
	// Unchanged counts the unchanged objects not listed.
	Unchanged int `json:"unchanged"`
}

// Object is one object of a group.
type Object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	Status     Status `json:"status"`
	// File and Line locate it at the head (at the base when removed).
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// Diff is the unified diff of its YAML from base to head, Secret values
	// masked; "" when unchanged.
	Diff string `json:"diff,omitempty"`
	// Findings are the policies' findings at the head.
	Findings []Finding `json:"findings,omitempty"`
}

// Finding is a violation at the head.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Line     int    `json:"line,omitempty"`
	// Introduced is false when the base had the same finding for the same
	// object.
	Introduced bool `json:"introduced"`
}

// Error is a file, directory or Application that could not be checked.
type Error struct {
	File        string `json:"file"`
	Line        int    `json:"line,omitempty"`
	Application string `json:"application,omitempty"`
	Message     string `json:"message"`
}
