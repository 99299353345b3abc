package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/policies"
)

// The junit format is JUnit XML as GitLab, Jenkins and most CI test viewers
// read it:
//
//	<testsuites name="tollgate" tests="5" failures="2" errors="0">
//	  <testsuite name="apps/web/deployment.yaml" tests="3" failures="1" errors="0" skipped="0">
//	    <testcase name="apps/web/deployment.yaml#0 Deployment/web [no-latest-tag]" classname="tollgate" file="apps/web/deployment.yaml">
//	      <failure message="..." type="no-latest-tag">DENY  apps/web/deployment.yaml:12  ...</failure>
//	    </testcase>
//	    <testcase name="apps/web/deployment.yaml#1 Service/web" classname="tollgate" file="..."></testcase>
//
// There is one testsuite per file, in the order files first appear, and in
// it one testcase per (document, rule) the document broke, in the order the
// rules first appear, or a single passing testcase for a document that broke
// nothing. Testcase names carry the file, the 0-based document index, the
// object and the rule, so they read well when a viewer flattens the suites
// (GitLab does) and stay stable when lines move, which keeps test history.
// classname is always "tollgate": Jenkins splits classname at dots into
// package and class, which would turn "web.yaml" into class "yaml".
//
// A deny makes the testcase fail: <failure> carries the messages in its
// message attribute (joined by "; " when the rule fired more than once), the
// rule id as its type, and one text-format line per violation as its body.
//
// A warning does not fail the testcase. JUnit has no warning status: a
// failure would fail the pipeline (GitLab) or mark the build unstable
// (Jenkins) for something the policy only warns about, and <skipped> would
// claim the check did not run. Warnings therefore pass and carry their
// text-format lines in <system-out>, which GitLab shows as the test case's
// system output and Jenkins as its standard output.
//
// A result that could not be checked (a file that does not decode, a
// directory or an Application that does not render) is one testcase with
// an <error> (message, type "error", and its text-format line as the body),
// counted in the errors attributes: the check did not run, which is what
// JUnit's error status says.
//
// Characters XML cannot hold (most control characters) are replaced by
// encoding/xml with U+FFFD, so the output always parses.

type junitTestsuites struct {
	XMLName  xml.Name         `xml:"testsuites"`
	Name     string           `xml:"name,attr"`
	Tests    int              `xml:"tests,attr"`
	Failures int              `xml:"failures,attr"`
	Errors   int              `xml:"errors,attr"`
	Suites   []junitTestsuite `xml:"testsuite"`
}

type junitTestsuite struct {
	Name     string          `xml:"name,attr"`
	Tests    int             `xml:"tests,attr"`
	Failures int             `xml:"failures,attr"`
	Errors   int             `xml:"errors,attr"`
	Skipped  int             `xml:"skipped,attr"`
	Cases    []junitTestcase `xml:"testcase"`
}

type junitTestcase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// renderJUnit renders the junit format described above.
func renderJUnit(r Report) ([]byte, error) {
	out := junitTestsuites{Name: "tollgate"}
	suiteOf := make(map[string]int) // file -> index in out.Suites
	for _, res := range r.Results {
		i, ok := suiteOf[res.File]
		if !ok {
			i = len(out.Suites)
			suiteOf[res.File] = i
			out.Suites = append(out.Suites, junitTestsuite{Name: res.File})
		}
		suite := &out.Suites[i]
		for _, tc := range junitCases(res) {
			suite.Cases = append(suite.Cases, tc)
			suite.Tests++
			out.Tests++
			if tc.Failure != nil {
				suite.Failures++
				out.Failures++
			}
			if tc.Error != nil {
				suite.Errors++
				out.Errors++
			}
		}
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("encode xml: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// junitCases returns the testcases of one document: one per rule it broke,
// or one passing testcase when it broke none, or one in error when it could
// not be checked.
func junitCases(res Result) []junitTestcase {
	if res.Error != "" {
		name := res.File
		if subject := res.subject(); subject != "" {
			name = fmt.Sprintf("%s#%d %s", res.File, res.Document, subject)
		}
		return []junitTestcase{{Name: name, Classname: "tollgate", File: res.File,
			Error: &junitFailure{Message: res.Error, Type: "error", Body: errorLine(res)}}}
	}
	base := fmt.Sprintf("%s#%d %s", res.File, res.Document, res.object())
	if len(res.Violations) == 0 {
		return []junitTestcase{{Name: base, Classname: "tollgate", File: res.File}}
	}
	var rules []string
	byRule := make(map[string][]Finding)
	for _, f := range res.Violations {
		if _, seen := byRule[f.Rule]; !seen {
			rules = append(rules, f.Rule)
		}
		byRule[f.Rule] = append(byRule[f.Rule], f)
	}
	cases := make([]junitTestcase, 0, len(rules))
	for _, rule := range rules {
		tc := junitTestcase{Name: base + " [" + rule + "]", Classname: "tollgate", File: res.File}
		var denyMsgs, denyLines, warnLines []string
		for _, f := range byRule[rule] {
			if f.Severity == policies.SeverityDeny {
				denyMsgs = append(denyMsgs, f.Message)
				denyLines = append(denyLines, textLine(res, f))
			} else {
				warnLines = append(warnLines, textLine(res, f))
			}
		}
		if len(denyMsgs) > 0 {
			tc.Failure = &junitFailure{
				Message: strings.Join(denyMsgs, "; "),
				Type:    rule,
				Body:    strings.Join(denyLines, "\n"),
			}
		}
		if len(warnLines) > 0 {
			tc.SystemOut = strings.Join(warnLines, "\n")
		}
		cases = append(cases, tc)
	}
	return cases
}
