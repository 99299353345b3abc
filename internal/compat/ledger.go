package compat

import (
	"cmp"
	"slices"
)

// Verdict is how tollgate treats an Argo CD field, annotation or option.
type Verdict string

// Verdicts.
const (
	// Honoured: as in Argo CD. The row's Proof is the test that shows it.
	Honoured Verdict = "honoured"
	// Refused: an Application (or project, or ApplicationSet) that uses it
	// is refused with an error naming it. The row's Proof is that error.
	Refused Verdict = "refused"
	// Different: tollgate does something else, listed in the docs. The
	// row's Proof is the docs anchor ("troubleshooting.md#anchor").
	Different Verdict = "different"
)

// Kind is what a row is about.
type Kind string

// Kinds of rows.
const (
	// Field is an API field, named "GoType.jsonName"
	// ("ApplicationSourceHelm.valueFiles").
	Field Kind = "field"
	// Annotation is an argocd.argoproj.io annotation, by its key.
	Annotation Kind = "annotation"
	// SyncOption is a sync option (spec.syncPolicy.syncOptions and the
	// argocd.argoproj.io/sync-options annotation), by its key.
	SyncOption Kind = "sync option"
	// CompareOption is a value of the argocd.argoproj.io/compare-options
	// annotation.
	CompareOption Kind = "compare option"
)

// Row is one entry of the ledger.
type Row struct {
	Kind Kind
	// Name is the field ("Type.jsonName"), annotation key or option key.
	Name    string
	Verdict Verdict
	// Proof is the test that shows a Honoured row ("TestSyncWindowsAllow"),
	// the error a Refused row gives (as the code spells it), or the docs
	// anchor of a Different row ("sync-engine.md#sync-windows").
	Proof string
	// Note says in a few words what tollgate does; the docs show it.
	Note string
}

// Ledger returns every row, sorted by kind and name.
func Ledger() []Row {
	var out []Row
	for _, rows := range [][]Row{applicationRows, sourceRows, operationRows, statusRows, projectRows, applicationSetRows, generatorRows, pullRequestRows, scmProviderRows, pluginRows, annotationRows, optionRows} {
		out = append(out, rows...)
	}
	slices.SortStableFunc(out, func(a, b Row) int {
		return cmp.Or(cmp.Compare(kindOrder(a.Kind), kindOrder(b.Kind)), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func kindOrder(k Kind) int {
	return slices.Index([]Kind{Field, Annotation, SyncOption, CompareOption}, k)
}
