package prdiff

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/policies/report"
)

// The output formats.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
	FormatHTML     = "html"
	FormatGitHub   = "github"
)

// Formats lists the output formats.
func Formats() []string {
	return []string{FormatText, FormatMarkdown, FormatJSON, FormatHTML, FormatGitHub}
}

// WriteOptions shape the output.
type WriteOptions struct {
	// Colour colours the text format (a terminal).
	Colour bool
	// MaxBytes bounds the Markdown format (a pull request comment: GitHub
	// takes 65,536 characters); 0 is DefaultMaxBytes.
	MaxBytes int
}

// DefaultMaxBytes leaves room under GitHub's 65,536-character comment
// limit for a bot's own header.
const DefaultMaxBytes = 60000

// Write writes r to w in format.
func Write(w io.Writer, format string, r Report, o WriteOptions) error {
	switch format {
	case FormatText, "":
		return writeText(w, r, o.Colour)
	case FormatMarkdown:
		_, err := io.WriteString(w, markdown(r, cmp.Or(max(o.MaxBytes, 0), DefaultMaxBytes)))
		return err
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case FormatHTML:
		return writeHTML(w, r)
	case FormatGitHub:
		return report.Write(w, report.FormatGitHub, annotations(r))
	}
	return fmt.Errorf("unknown format %q: valid formats are %s", format, strings.Join(Formats(), ", "))
}

// Listed reports whether a group is worth a section: something in it
// changed or a verdict did.
func (g Group) Listed() bool {
	return g.Status != Unchanged || len(g.Objects) > 0
}

// Describe is the group's status with its object counts, as the sections
// title it: "changed (1 added, 2 changed, 4 unchanged)".
func (g Group) Describe() string {
	var c Counts
	for _, o := range g.Objects {
		c.add(o.Status)
	}
	c.Unchanged += g.Unchanged
	var parts []string
	for _, p := range []struct {
		n    int
		verb Status
	}{{c.Added, Added}, {c.Removed, Removed}, {c.Changed, Changed}, {c.Unchanged, Unchanged}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.verb))
		}
	}
	s := string(g.Status)
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// Title is the object's line: status, apiVersion, kind and
// namespace/name.
func (o Object) Title() string {
	name := o.Name
	if o.Namespace != "" {
		name = o.Namespace + "/" + name
	}
	return fmt.Sprintf("%s %s %s", o.APIVersion, o.Kind, name)
}

// Label is how a finding reads: "DENY no-latest-tag (introduced)".
func (f Finding) Label() string {
	sev := "WARN"
	if f.Severity == string(policies.SeverityDeny) {
		sev = "DENY"
	}
	when := "existing"
	if f.Introduced {
		when = "introduced"
	}
	return fmt.Sprintf("%s %s (%s)", sev, f.Rule, when)
}

// Line is the summary as one line of text.
func (s Summary) Line() string {
	return fmt.Sprintf("Applications: %s; objects: %s; denials: %d introduced, %d existing; warnings: %d introduced, %d existing; errors: %d",
		s.Applications, s.Objects, s.IntroducedDenials, s.ExistingDenials, s.IntroducedWarnings, s.ExistingWarnings, s.Errors)
}

func (c Counts) String() string {
	return fmt.Sprintf("%d added, %d removed, %d changed, %d unchanged", c.Added, c.Removed, c.Changed, c.Unchanged)
}

func (r Revision) String() string {
	if len(r.Commit) >= 12 {
		return fmt.Sprintf("%s (%s)", r.Name, r.Commit[:12])
	}
	return r.Name
}

// ANSI colours of the text format.
const (
	red    = "\x1b[31m"
	green  = "\x1b[32m"
	yellow = "\x1b[33m"
	cyan   = "\x1b[36m"
	bold   = "\x1b[1m"
	reset  = "\x1b[0m"
)

// writeText writes the text format: the revisions, a section per listed
// group with each object's diff and findings, errors, notes and the
// summary line.
func writeText(w io.Writer, r Report, colour bool) error {
	bw := bufio.NewWriter(w)
	paint := func(c, s string) string {
		if !colour || c == "" {
			return s
		}
		return c + s + reset
	}
	fmt.Fprintf(bw, "base: %s\nhead: %s\n", r.Base, r.Head)
	for _, g := range r.Groups {
		if !g.Listed() {
			continue
		}
		fmt.Fprintf(bw, "\n%s %s: %s\n", g.Kind, paint(bold, g.Name), g.Describe())
		if g.NotRendered != "" {
			fmt.Fprintf(bw, "  not rendered: %s\n", g.NotRendered)
		}
		for _, o := range g.Objects {
			fmt.Fprintf(bw, "  %-9s %s  %s\n", o.Status, o.Title(), location(o.File, o.Line))
			if o.Diff != "" {
				for _, l := range diffLines(o.Diff) {
					fmt.Fprintf(bw, "    %s\n", paint(lineColours[l.Class], l.Text))
				}
			}
			for _, f := range o.Findings {
				c := yellow
				if f.Severity == string(policies.SeverityDeny) {
					c = red
				}
				at := ""
				if f.Line > 0 {
					at = fmt.Sprintf(" (%s)", location(o.File, f.Line))
				}
				fmt.Fprintf(bw, "    %s: %s%s\n", paint(c, f.Label()), f.Message, at)
			}
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(bw, "\n%s %s\n", paint(red, "ERROR"), e)
	}
	for _, e := range r.BaseErrors {
		fmt.Fprintf(bw, "\nerror at the base: %s\n", e)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(bw, "note: %s\n", n)
	}
	fmt.Fprintf(bw, "\n%s\n", r.Summary.Line())
	return bw.Flush()
}

func (e Error) String() string {
	s := location(e.File, e.Line)
	if e.Application != "" {
		s += " (Application " + e.Application + ")"
	}
	return s + ": " + e.Message
}

func location(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}

// diffLine is one line of a unified diff with its class: "file" (the
// ---/+++ header), "add", "del", "hunk" or "" (context).
type diffLine struct{ Class, Text string }

// diffLines splits a unified diff into classed lines.
func diffLines(diff string) []diffLine {
	var out []diffLine
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		class := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			class = "file"
		case strings.HasPrefix(l, "+"):
			class = "add"
		case strings.HasPrefix(l, "-"):
			class = "del"
		case strings.HasPrefix(l, "@@"):
			class = "hunk"
		}
		out = append(out, diffLine{class, l})
	}
	return out
}

// lineColours colour the text format's diff lines by class.
var lineColours = map[string]string{"file": bold, "add": green, "del": red, "hunk": cyan}

func withNewline(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// annotations is the report of what the change introduced, for the github
// format: one result per object with introduced findings, and the head's
// errors.
func annotations(r Report) report.Report {
	var results []report.Result
	for _, g := range r.Groups {
		app := ""
		if g.Kind == GroupApplication {
			app = g.Name
		}
		for _, o := range g.Objects {
			res := report.Result{File: o.File, Line: o.Line, Kind: o.Kind, Name: o.Name, Namespace: o.Namespace, Application: app}
			for _, f := range o.Findings {
				if f.Introduced {
					res.Violations = append(res.Violations, report.Finding{Rule: f.Rule, Severity: policies.Severity(f.Severity), Message: f.Message, Line: f.Line})
				}
			}
			if len(res.Violations) > 0 {
				results = append(results, res)
			}
		}
	}
	for _, e := range r.Errors {
		results = append(results, report.Result{File: e.File, Line: e.Line, Application: e.Application, Error: e.Message})
	}
	return report.Report{Results: results, Summary: report.Summarize(results)}
}
