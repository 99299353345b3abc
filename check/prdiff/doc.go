// Package prdiff is tollgate diff: what a change to a GitOps repository
// changes in what Argo CD would deploy, with the verdicts of the policies.
//
// It takes a check.Snapshot of the repository at two revisions (the base
// and the head, each read from Git objects into a temporary directory, or
// the work tree for the head), with the same renderer and evaluator as
// tollgate test, the repo-server and the gate. Compare pairs what the two
// snapshots hold: every Application by name, the objects each renders by
// group, kind, namespace and name, and the documents outside any
// Application by directory. An object is added, removed, changed (with the
// unified diff of its YAML, Secret values masked) or unchanged; each
// finding of the policies at the head is introduced by the change or
// existing, present at the base for the same object. The writers print the
// result as text, Markdown (a pull request comment), JSON, HTML or GitHub
// annotations.
package prdiff
