package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Parse-back types, declared here independently of junit.go.
type parsedSuites struct {
	XMLName  xml.Name      `xml:"testsuites"`
	Name     string        `xml:"name,attr"`
	Tests    int           `xml:"tests,attr"`
	Failures int           `xml:"failures,attr"`
	Errors   int           `xml:"errors,attr"`
	Suites   []parsedSuite `xml:"testsuite"`
}

type parsedSuite struct {
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Cases    []parsedCase `xml:"testcase"`
}

type parsedCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	File      string `xml:"file,attr"`
	Failures  []struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Body    string `xml:",chardata"`
	} `xml:"failure"`
	Skipped   []struct{} `xml:"skipped"`
	SystemOut string     `xml:"system-out"`
}

func parseJUnit(t *testing.T, r Report) parsedSuites {
	t.Helper()
	var out bytes.Buffer
	if err := Write(&out, FormatJUnit, r); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if !bytes.HasPrefix(out.Bytes(), []byte(xml.Header)) {
		t.Errorf("junit output does not start with the XML header:\n%s", out.String())
	}
	var got parsedSuites
	if err := xml.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("parse junit output back: %v\n%s", err, out.String())
	}
	return got
}

// junitCase is what a consumer sees of one testcase.
type junitCase struct {
	Suite, Name, File string
	FailureType       string // "" when the testcase passes
	FailureMessage    string
	SystemOut         []string // substrings system-out must contain, nil for none
}

func TestJUnitParseBack(t *testing.T) {
	got := parseJUnit(t, failingReport())

	want := []junitCase{
		{
			Suite: "apps/guestbook/deployment.yaml", File: "apps/guestbook/deployment.yaml",
			Name:           "apps/guestbook/deployment.yaml#0 Deployment/guestbook-ui [no-latest-tag]",
			FailureType:    "no-latest-tag",
			FailureMessage: `container "ui" uses image "gcr.io/heptio/ui:latest"; pin a tag or digest`,
		},
		{
			Suite: "apps/guestbook/deployment.yaml", File: "apps/guestbook/deployment.yaml",
			Name:      "apps/guestbook/deployment.yaml#0 Deployment/guestbook-ui [resource-limits]",
			SystemOut: []string{`WARN  apps/guestbook/deployment.yaml:1  Deployment/guestbook-ui  [resource-limits] container "ui" has no memory limit`},
		},
		{
			Suite: "apps/guestbook/deployment.yaml", File: "apps/guestbook/deployment.yaml",
			Name: "apps/guestbook/deployment.yaml#1 Service/guestbook-ui",
		},
		{
			Suite: "apps/argocd/guestbook.yaml", File: "apps/argocd/guestbook.yaml",
			Name:           "apps/argocd/guestbook.yaml#0 Application/guestbook [project-not-default]",
			FailureType:    "project-not-default",
			FailureMessage: `spec.project is "default": use a project that restricts destinations & sources`,
		},
		{
			Suite: "charts/web/templates/deployment.yaml", File: "charts/web/templates/deployment.yaml",
			Name:        "charts/web/templates/deployment.yaml#0 Deployment/web [no-privileged]",
			FailureType: "no-privileged",
			FailureMessage: "container \"web\" is privileged:\nset securityContext.privileged=false (100% required)\r\n" +
				`; init container "setup" is privileged`,
		},
		{
			Suite: "apps/shop/ingress,v1 old.yaml", File: "apps/shop/ingress,v1 old.yaml",
			Name:      "apps/shop/ingress,v1 old.yaml#2 Ingress/shop [acme.ingress:tls]",
			SystemOut: []string{`[acme.ingress:tls] host <*.shop.example> & "tls" must match; got 'none' \ see runbook`},
		},
	}

	if got.Name != "tollgate" {
		t.Errorf("testsuites name = %q, want tollgate", got.Name)
	}
	var cases []junitCase
	tests, failures := 0, 0
	for _, s := range got.Suites {
		suiteFailures := 0
		for _, c := range s.Cases {
			if c.Classname != "tollgate" {
				t.Errorf("testcase %q classname = %q, want tollgate", c.Name, c.Classname)
			}
			if len(c.Skipped) > 0 {
				t.Errorf("testcase %q is skipped; warnings must pass", c.Name)
			}
			jc := junitCase{Suite: s.Name, Name: c.Name, File: c.File}
			switch len(c.Failures) {
			case 0:
			case 1:
				jc.FailureType, jc.FailureMessage = c.Failures[0].Type, c.Failures[0].Message
				suiteFailures++
				if !strings.Contains(c.Failures[0].Body, "DENY  ") {
					t.Errorf("testcase %q failure body %q has no DENY line", c.Name, c.Failures[0].Body)
				}
			default:
				t.Errorf("testcase %q has %d failures, want at most one", c.Name, len(c.Failures))
			}
			// Keep only the expected substrings that are present, so a
			// missing one shows up in the diff.
			for _, w := range wantSystemOut(want, c.Name) {
				if strings.Contains(c.SystemOut, w) {
					jc.SystemOut = append(jc.SystemOut, w)
				}
			}
			if c.SystemOut != "" && jc.SystemOut == nil {
				jc.SystemOut = []string{"unexpected: " + c.SystemOut}
			}
			cases = append(cases, jc)
		}
		if s.Tests != len(s.Cases) || s.Failures != suiteFailures || s.Errors != 0 || s.Skipped != 0 {
			t.Errorf("suite %q counts tests=%d failures=%d errors=%d skipped=%d, want tests=%d failures=%d errors=0 skipped=0",
				s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, len(s.Cases), suiteFailures)
		}
		tests += len(s.Cases)
		failures += suiteFailures
	}
	if got.Tests != tests || got.Failures != failures || got.Errors != 0 {
		t.Errorf("testsuites counts tests=%d failures=%d errors=%d, want tests=%d failures=%d errors=0",
			got.Tests, got.Failures, got.Errors, tests, failures)
	}
	if diff := cmp.Diff(want, cases); diff != "" {
		t.Errorf("testcases mismatch (-want +got):\n%s", diff)
	}
}

func wantSystemOut(want []junitCase, name string) []string {
	for _, w := range want {
		if w.Name == name {
			return w.SystemOut
		}
	}
	return nil
}

func TestJUnitEmptyReport(t *testing.T) {
	got := parseJUnit(t, Report{})
	if got.Name != "tollgate" || got.Tests != 0 || got.Failures != 0 || len(got.Suites) != 0 {
		t.Errorf("empty report parsed as %+v, want an empty tollgate testsuites", got)
	}
}

// TestJUnitInvalidXMLCharacters checks that characters XML 1.0 cannot hold
// still produce a document that parses.
func TestJUnitInvalidXMLCharacters(t *testing.T) {
	r := Report{
		Results: []Result{{
			File: "a\x01.yaml", Kind: "ConfigMap", Name: "x\x1by",
			Violations: []Finding{{Rule: "r\x00", Severity: deny, Message: "bad \x1b[31m \ufffe byte \xff"}},
		}},
		Summary: Summary{Files: 1, Documents: 1, Denied: 1},
	}
	got := parseJUnit(t, r)
	if got.Tests != 1 || got.Failures != 1 || len(got.Suites) != 1 || len(got.Suites[0].Cases) != 1 {
		t.Fatalf("parsed %+v, want one failing testcase", got)
	}
	if len(got.Suites[0].Cases[0].Failures) != 1 {
		t.Fatalf("testcase has no failure: %+v", got.Suites[0].Cases[0])
	}
	if msg := got.Suites[0].Cases[0].Failures[0].Message; !strings.HasPrefix(msg, "bad ") {
		t.Errorf("failure message = %q, want it to start with %q", msg, "bad ")
	}
}
