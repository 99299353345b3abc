package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// renderText renders the text format, for a terminal or a CI log: one line
// per violation, in result order,
//
//	DENY  apps/web/deployment.yaml:12  Deployment/web  [no-latest-tag] message (app guestbook)
//
// (":12" only when the line is known, the app suffix only for rendered
// objects), one line per result that could not be checked,
//
//	ERROR  apps/db  render helm chart apps/db: ... (app billing)
//	ERROR  argocd/web.yaml:3  Application/web  spec.source: render ...
//
// then a blank line and the summary line
//
//	FAIL  5 documents in 3 files: 2 denied, 1 warned, 1 error
//
// Passing documents print nothing. There is no colour. Every value is made
// printable (see printable), so one violation is always one line.
func renderText(r Report) ([]byte, error) {
	var b bytes.Buffer
	n := 0
	for _, res := range r.Results {
		if res.Error != "" {
			b.WriteString(errorLine(res))
			b.WriteByte('\n')
			n++
		}
		for _, f := range res.Violations {
			b.WriteString(textLine(res, f))
			b.WriteByte('\n')
			n++
		}
	}
	if n > 0 {
		b.WriteByte('\n')
	}
	b.WriteString(summaryLine(r.Summary))
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// textLine renders one violation as a single line, without the newline.
func textLine(res Result, f Finding) string {
	return fmt.Sprintf("%s  %s  %s  [%s] %s", severityLabel(f.Severity), textLocation(res.File, res.line(f)),
		printable(res.object()), printable(f.Rule), printable(withApplication(f.Message, res.Application)))
}

// errorLine renders a result that could not be checked as a single line,
// without the newline.
func errorLine(res Result) string {
	s := "ERROR  " + textLocation(res.File, res.Line)
	if subject := res.subject(); subject != "" {
		s += "  " + printable(subject)
	}
	return s + "  " + printable(withApplication(res.Error, res.Application))
}

// textLocation is file:line, or file when the line is unknown (0).
func textLocation(file string, line int) string {
	if line > 0 {
		return printable(file) + ":" + strconv.Itoa(line)
	}
	return printable(file)
}

// printable returns s with line breaks, tabs, other control characters and
// bidirectional-text controls replaced by Go-style escapes (`\n`, `\x1b`,
// `\u202e`). Messages come from policies and object fields come from Git, so
// neither may split a report line, move the cursor or reorder what a
// reviewer sees.
func printable(s string) string {
	if !strings.ContainsFunc(s, needsEscape) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case needsEscape(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// needsEscape reports whether printable escapes r.
func needsEscape(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}
