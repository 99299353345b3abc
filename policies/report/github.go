package report

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tollgate-dev/tollgate/policies"
)

// The github format is GitHub Actions workflow commands, which the runner
// turns into annotations on the pull request's files: one command per
// violation, in result order,
//
//	::error file=apps/web/deployment.yaml,line=12,title=no-latest-tag::Deployment/web: message
//
// ("::warning" for warn; "line=" only when the line is known; " (app name)"
// after the message for rendered objects), an error command titled "error"
// for each result that could not be checked,
//
//	::error file=apps/db,title=error::render helm chart apps/db: ...
//
// then the summary line of the text format as plain log output. Values are escaped as the runner expects
// (actions/toolkit escapeData and escapeProperty), so a message cannot end
// the command early or start a new one.

// renderGitHub renders the github format described above.
func renderGitHub(r Report) ([]byte, error) {
	var b bytes.Buffer
	for _, res := range r.Results {
		if res.Error != "" {
			msg := res.Error
			if subject := res.subject(); subject != "" {
				msg = subject + ": " + msg
			}
			b.WriteString(githubCommand("error", res.File, res.Line, "error", withApplication(msg, res.Application)))
			b.WriteByte('\n')
		}
		for _, f := range res.Violations {
			b.WriteString(githubViolation(res, f))
			b.WriteByte('\n')
		}
	}
	b.WriteString(summaryLine(r.Summary))
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// githubViolation renders one violation as a workflow command, without
// the newline.
func githubViolation(res Result, f Finding) string {
	level := "warning"
	if f.Severity == policies.SeverityDeny {
		level = "error"
	}
	return githubCommand(level, res.File, res.line(f), f.Rule, withApplication(res.object()+": "+f.Message, res.Application))
}

// githubCommand renders one workflow command, without the newline; line
// 0 leaves the line out.
func githubCommand(level, file string, line int, title, msg string) string {
	var b strings.Builder
	b.WriteString("::" + level + " file=")
	b.WriteString(escapeProperty(filepath.ToSlash(file)))
	if line > 0 {
		b.WriteString(",line=")
		b.WriteString(strconv.Itoa(line))
	}
	b.WriteString(",title=")
	b.WriteString(escapeProperty(title))
	b.WriteString("::")
	b.WriteString(escapeData(msg))
	return b.String()
}

// dataEscaper escapes a workflow command's message. "%" comes first in the
// replacer's table but strings.Replacer never re-scans its output, so order
// does not matter for correctness.
var dataEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")

// propertyEscaper escapes a workflow command's property value, which also
// may not hold the ":" and "," that delimit properties.
var propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")

// escapeData escapes s for the message part of a workflow command.
func escapeData(s string) string { return dataEscaper.Replace(s) }

// escapeProperty escapes s for a property value of a workflow command.
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
