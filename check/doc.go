// Package check is tollgate test: it finds the manifests under the paths it
// is given, renders kustomizations, Helm charts and the Argo CD
// Applications of the repository under test from the local checkout, and
// judges every document with the policies, as the admission webhook and
// the sync engine will, into a report.
//
// Run is the entry point; the CLI turns its flags into Options and writes
// the report. Discovery (walk.go), loading and rendering (load.go,
// render.go), Applications (apps*.go: the engine's typed resolver, with
// the repository under test matched by reposerver.NormalizeURL), the
// repository's origin remote (repo.go) and results with the lines a
// reviewer edits (results.go) live here, so another door can check a
// checkout the same way without the CLI.
package check
