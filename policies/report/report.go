// Package report renders the outcome of a `tollgate test` run for the people
// and machines that read it: a terminal or CI log (text), scripts (json), test
// dashboards such as GitLab and Jenkins (junit), code scanning (sarif) and
// GitHub Actions annotations (github).
//
// The CLI fills a Report with one Result per checked document, in the order it
// checked them, and calls Write with the format the user asked for. Every
// writer renders the whole report into memory first and writes it with one
// call, so a report is either written completely or Write returns an error.
// The json, sarif and github formats are contracts that CI scripts depend on;
// each writer's file documents its format.
package report

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tollgate-dev/tollgate/policies"
)

// Report is the outcome of one `tollgate test` run.
type Report struct {
	// Results holds every checked document, with or without violations, in
	// the order the CLI checked them. Writers keep that order.
	Results []Result
	// Summary holds the run's counts. The caller fills it, usually with
	// Summarize; writers print it as given.
	Summary Summary
	// ToolVersion is tollgate's version, reported as the SARIF driver
	// version. Empty leaves it out.
	ToolVersion string
	// RuleDescriptions maps a rule id to a one-line description, reported as
	// the SARIF rule's shortDescription. Rules without an entry are described
	// by their id.
	RuleDescriptions map[string]string
}

// Result is the outcome of checking one document.
type Result struct {
	// File is the repo-relative path a reviewer edits. For objects rendered
	// by an Application it is the source file behind them.
	File string
	// Document is the 0-based index of the document within File.
	Document int
	// Line is the 1-based line where the document starts, 0 if unknown.
	Line int
	// Kind, Name and Namespace identify the object in the document.
	Kind, Name, Namespace string
	// Application is the Application that rendered the object, "" for a raw
	// file.
	Application string
	// Violations are the rules the document broke, empty when it passed.
	Violations []Finding
	// Error says why what File holds could not be checked (a file that
	// does not decode, a directory or an Application that does not
	// render), "" when it was. A result with an Error has no Violations;
	// Kind and Name are set when the error is about one object (an
	// Application), Document and Line when about one document.
	Error string
}

// Finding is one violation reported against a Result.
type Finding struct {
	// Rule is the stable rule id, e.g. "no-latest-tag".
	Rule string
	// Severity is SeverityDeny or SeverityWarn.
	Severity policies.Severity
	// Message explains the violation to the reviewer.
	Message string
	// Line is the 1-based line of the offending field, 0 to use the
	// document's Result.Line.
	Line int
}

// Summary counts what a run checked and found.
type Summary struct {
	// Files and Documents count what was checked.
	Files, Documents int
	// Denied and Warned count violations (not documents) of each severity.
	Denied, Warned int
	// Errors counts the results that could not be checked.
	Errors int
}

// The report formats Write accepts.
const (
	FormatText   = "text"
	FormatJSON   = "json"
	FormatJUnit  = "junit"
	FormatSARIF  = "sarif"
	FormatGitHub = "github"
)

// ErrUnknownFormat is returned (wrapped) by Write for a format it does not
// know; the message lists the valid formats.
var ErrUnknownFormat = errors.New("unknown report format")

// renderers lists the formats in the order Formats reports them.
var renderers = []struct {
	name   string
	render func(Report) ([]byte, error)
}{
	{FormatText, renderText},
	{FormatJSON, renderJSON},
	{FormatJUnit, renderJUnit},
	{FormatSARIF, renderSARIF},
	{FormatGitHub, renderGitHub},
}

// Formats returns the names of the formats Write accepts, in a stable order
// suitable for flag help.
func Formats() []string {
	names := make([]string, 0, len(renderers))
	for _, r := range renderers {
		names = append(names, r.name)
	}
	return names
}

// Write renders r in the named format (see Formats) and writes it to w. It
// returns an error wrapping ErrUnknownFormat for an unknown format, and an
// error naming the result and field when r holds a value no format can
// represent, such as a severity other than deny or warn.
func Write(w io.Writer, format string, r Report) error {
	var render func(Report) ([]byte, error)
	for _, rr := range renderers {
		if rr.name == format {
			render = rr.render
		}
	}
	if render == nil {
		return fmt.Errorf("%w %q: valid formats are %s", ErrUnknownFormat, format, strings.Join(Formats(), ", "))
	}
	if err := r.validate(); err != nil {
		return fmt.Errorf("validate report: %w", err)
	}
	out, err := render(r)
	if err != nil {
		return fmt.Errorf("render %s report: %w", format, err)
	}
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("write %s report: %w", format, err)
	}
	return nil
}

// Summarize counts results: Files is the number of distinct Result.File
// values, Documents the number of results that were checked, Errors of
// those that could not be, Denied and Warned the violations of each
// severity. A caller that also checked files holding no documents adds
// those to Files itself.
func Summarize(results []Result) Summary {
	var s Summary
	files := make(map[string]struct{})
	for _, res := range results {
		files[res.File] = struct{}{}
		if res.Error != "" {
			s.Errors++
			continue
		}
		for _, f := range res.Violations {
			switch f.Severity {
			case policies.SeverityDeny:
				s.Denied++
			case policies.SeverityWarn:
				s.Warned++
			}
		}
	}
	s.Files = len(files)
	s.Documents = len(results) - s.Errors
	return s
}

// validate rejects values the writers cannot render faithfully, naming the
// result and field.
func (r Report) validate() error {
	s := r.Summary
	if s.Files < 0 || s.Documents < 0 || s.Denied < 0 || s.Warned < 0 || s.Errors < 0 {
		return fmt.Errorf("summary: negative count in %+v", s)
	}
	for i, res := range r.Results {
		if res.File == "" {
			return fmt.Errorf("results[%d] (%s): file is empty", i, res.object())
		}
		where := fmt.Sprintf("results[%d] (%s document %d)", i, res.File, res.Document)
		if res.Document < 0 {
			return fmt.Errorf("%s: document index is negative", where)
		}
		if res.Line < 0 {
			return fmt.Errorf("%s: line %d is negative", where, res.Line)
		}
		if res.Error != "" && len(res.Violations) > 0 {
			return fmt.Errorf("%s: has both an error and violations", where)
		}
		for j, f := range res.Violations {
			switch {
			case f.Rule == "":
				return fmt.Errorf("%s: violations[%d]: rule is empty", where, j)
			case f.Severity != policies.SeverityDeny && f.Severity != policies.SeverityWarn:
				return fmt.Errorf("%s: violations[%d] (%s): severity %q is not %q or %q",
					where, j, f.Rule, f.Severity, policies.SeverityDeny, policies.SeverityWarn)
			case f.Line < 0:
				return fmt.Errorf("%s: violations[%d] (%s): line %d is negative", where, j, f.Rule, f.Line)
			}
		}
	}
	return nil
}

// line returns the line to report f at: the field's line when known, else
// the document's, 0 when neither is known.
func (r Result) line(f Finding) int {
	if f.Line > 0 {
		return f.Line
	}
	return r.Line
}

// subject names what an error result is about: the object as Kind/name
// when the error names one, else "" (a file or directory).
func (r Result) subject() string {
	if r.Kind == "" && r.Name == "" {
		return ""
	}
	return r.object()
}

// object names the object as Kind/name, with placeholders for what is
// missing so a line never reads "/web".
func (r Result) object() string {
	kind, name := r.Kind, r.Name
	if kind == "" {
		kind = "<unknown kind>"
	}
	if name == "" {
		name = "<unnamed>"
	}
	return kind + "/" + name
}

// withApplication appends " (app name)" for what an Application rendered.
func withApplication(text, app string) string {
	if app == "" {
		return text
	}
	return text + " (app " + app + ")"
}

// severityLabel is the upper-case label of a validated severity.
func severityLabel(s policies.Severity) string {
	if s == policies.SeverityDeny {
		return "DENY"
	}
	return "WARN"
}

// summaryLine is the closing line of the text and github formats, e.g.
// "FAIL  5 documents in 3 files: 2 denied, 1 warned", with ", 1 error"
// when something could not be checked. A run fails when it denied
// anything or could not check something; warnings alone pass.
func summaryLine(s Summary) string {
	verdict := "PASS"
	if s.Denied > 0 || s.Errors > 0 {
		verdict = "FAIL"
	}
	line := fmt.Sprintf("%s  %s in %s: %d denied, %d warned",
		verdict, plural(s.Documents, "document"), plural(s.Files, "file"), s.Denied, s.Warned)
	if s.Errors > 0 {
		line += ", " + plural(s.Errors, "error")
	}
	return line
}

// plural formats n with noun, adding "s" unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
