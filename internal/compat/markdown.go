package compat

import (
	"fmt"
	"strings"
)

// Markdown renders the ledger as docs/compatibility.md.
func Markdown() string {
	var b strings.Builder
	b.WriteString(`# Compatibility with Argo CD, field by field

<!-- Generated from internal/compat (the ledger); do not edit. Regenerate
with: go test ./internal/compat -run TestDocs -update -->

Every field of the Application, AppProject and ApplicationSet API, every
` + "`argocd.argoproj.io`" + ` annotation tollgate reads and every sync and
compare option, with what tollgate does:

- **honoured**: as in Argo CD; the test named shows it.
- **refused**: an Application (operation, project) that uses it is refused
  with the error shown, never synced differently.
- **different**: tollgate does something else, described where the link
  points.

The table is generated from the ledger in ` + "`internal/compat`" + `, whose tests
fail when a field, annotation or option has no row, or a row's test, error
or section does not exist. Fields are listed by API type: a type used in
several places (` + "`ApplicationSource`" + ` in ` + "`spec.source`" + `, ` + "`spec.sources`" + `, an
operation and the history) has one row per field.
`)
	rows := Ledger()
	var kind Kind
	var typ string
	for _, r := range rows {
		if r.Kind != kind {
			kind, typ = r.Kind, ""
			fmt.Fprintf(&b, "\n## %s\n", sectionTitle(kind))
			if kind != Field {
				b.WriteString("\n| Name | Verdict | What tollgate does | Proof |\n|---|---|---|---|\n")
			}
		}
		name := r.Name
		if kind == Field {
			t, f, _ := strings.Cut(r.Name, ".")
			if t != typ {
				typ = t
				fmt.Fprintf(&b, "\n### %s\n\n| Field | Verdict | What tollgate does | Proof |\n|---|---|---|---|\n", t)
			}
			name = f
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", name, r.Verdict, cell(r.Note), proofCell(r))
	}
	return b.String()
}

func sectionTitle(k Kind) string {
	switch k {
	case Field:
		return "API fields"
	case Annotation:
		return "Annotations"
	case SyncOption:
		return "Sync options"
	}
	return "Compare options"
}

// proofCell shows a row's proof: a test, an error or a link.
func proofCell(r Row) string {
	switch r.Verdict {
	case Honoured:
		return "`" + r.Proof + "`"
	case Refused:
		return "`" + cell(r.Proof) + "`"
	}
	return fmt.Sprintf("[%s](%s)", r.Proof, r.Proof)
}

// cell escapes text for a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
