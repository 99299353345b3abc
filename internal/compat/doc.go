// Package compat is the ledger of tollgate's compatibility with Argo CD:
// one row for every field of the Application, AppProject and
// ApplicationSet API (by Go type and JSON name, so a type used in several
// places has one row), every argocd.argoproj.io annotation and every sync
// and compare option. Each row says whether tollgate honours it as Argo CD
// does (naming the test that proves it), refuses it by name (the error it
// gives), or behaves differently in a way the docs list (their anchor).
//
// The package's tests hold the ledger to the code: a field added to the
// API, an annotation the code reads or a sync option it knows without a
// row fails them, as does a row whose test, error or anchor does not
// exist. docs/compatibility.md is generated from the ledger (Markdown);
// its test fails when the file is stale, and `go test ./internal/compat
// -update` writes it again.
package compat
