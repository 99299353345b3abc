package prdiff

import (
	"fmt"
	"html"
	"strings"

	"github.com/tollgate-dev/tollgate/policies"
)

// markdown renders the report as a pull request comment of at most max
// bytes: a title and the summary table first, the introduced denials, then
// a collapsible section per listed group with each object's diff. A
// section that does not fit is shown without its diffs; one that does not
// fit even so is cut, and a last line says how many were.
func markdown(r Report, max int) string {
	var head strings.Builder
	fmt.Fprintf(&head, "### tollgate diff\n\nbase %s → head %s\n\n", code(r.Base.String()), code(r.Head.String()))
	head.WriteString("| | added | removed | changed | unchanged |\n|---|---:|---:|---:|---:|\n")
	for _, row := range []struct {
		name string
		c    Counts
	}{{"Applications", r.Summary.Applications}, {"Objects", r.Summary.Objects}} {
		fmt.Fprintf(&head, "| %s | %d | %d | %d | %d |\n", row.name, row.c.Added, row.c.Removed, row.c.Changed, row.c.Unchanged)
	}
	s := r.Summary
	verdict := ":white_check_mark: no denial introduced"
	if s.IntroducedDenials > 0 {
		verdict = fmt.Sprintf(":x: **%d %s introduced**", s.IntroducedDenials, plural(s.IntroducedDenials, "denial"))
	}
	fmt.Fprintf(&head, "\n%s (%d existing) · %d %s introduced (%d existing) · %d %s\n",
		verdict, s.ExistingDenials, s.IntroducedWarnings, plural(s.IntroducedWarnings, "warning"), s.ExistingWarnings, s.Errors, plural(s.Errors, "error"))
	for _, g := range r.Groups {
		for _, o := range g.Objects {
			for _, f := range o.Findings {
				if f.Introduced && f.Severity == string(policies.SeverityDeny) {
					fmt.Fprintf(&head, "- %s %s %s: %s\n", code(f.Rule), text(o.Title()), text(where(g)), text(f.Message))
				}
			}
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&head, "- :warning: error: %s\n", text(e.String()))
	}
	head.WriteString("\n")

	var body strings.Builder
	cut := 0
	const trailerRoom = 200
	for _, g := range r.Groups {
		if !g.Listed() {
			continue
		}
		sec := section(g, true)
		if head.Len()+body.Len()+len(sec)+trailerRoom > max {
			sec = section(g, false)
		}
		if head.Len()+body.Len()+len(sec)+trailerRoom > max {
			cut++
			continue
		}
		body.WriteString(sec)
	}
	if extra := notesSection(r); extra != "" {
		if head.Len()+body.Len()+len(extra)+trailerRoom <= max {
			body.WriteString(extra)
		} else {
			cut++
		}
	}
	out := head.String() + body.String()
	if cut > 0 {
		out += fmt.Sprintf("\n_%d more %s not shown: the comment's size limit. Run `tollgate diff` locally, or read the job's log, for all of it._\n", cut, plural(cut, "section"))
	}
	return out
}

// section renders one group as a collapsible section, with or without
// its diffs.
func section(g Group, diffs bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary>%s <b>%s</b>: %s</summary>\n\n", g.Kind, html.EscapeString(g.Name), html.EscapeString(g.Describe()))
	if g.NotRendered != "" {
		fmt.Fprintf(&b, "Not rendered: %s\n\n", text(g.NotRendered))
	}
	for _, o := range g.Objects {
		fmt.Fprintf(&b, "**%s** %s (%s)\n", o.Status, text(o.Title()), code(location(o.File, o.Line)))
		for _, f := range o.Findings {
			icon := ":warning:"
			if f.Severity == string(policies.SeverityDeny) {
				icon = ":x:"
			}
			fmt.Fprintf(&b, "- %s %s: %s\n", icon, text(f.Label()), text(f.Message))
		}
		switch {
		case o.Diff == "":
		case diffs:
			fence := strings.Repeat("`", max(3, longestRun(o.Diff, '`')+1))
			fmt.Fprintf(&b, "\n%sdiff\n%s%s\n", fence, withNewline(o.Diff), fence)
		default:
			b.WriteString("\n_diff left out: the comment's size limit_\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("</details>\n\n")
	return b.String()
}

// notesSection lists the base's errors and the head's notes (sources not
// rendered, input skipped) in a collapsed section; "" when there are none.
func notesSection(r Report) string {
	if len(r.Notes)+len(r.BaseErrors) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary>Notes (%d)</summary>\n\n", len(r.Notes)+len(r.BaseErrors))
	for _, e := range r.BaseErrors {
		fmt.Fprintf(&b, "- error at the base: %s\n", text(e.String()))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "- %s\n", text(n))
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// where names the group an object is in, for the list of denials.
func where(g Group) string {
	if g.Kind == GroupApplication {
		return "(Application " + g.Name + ")"
	}
	return "(" + g.Name + ")"
}

// code is s as inline code, with a fence longer than any run of backticks
// in it.
func code(s string) string {
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	return fence + " " + s + " " + fence
}

// text escapes s for Markdown text: HTML's <, > and &, and the characters that start
// emphasis, links, tables or code.
func text(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\\", "\\\\", "*", "\\*", "_", "\\_", "`", "\\`", "[", "\\[", "]", "\\]", "|", "\\|", "\n", " ")
	return r.Replace(s)
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
