package report

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/policies"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const (
	deny = policies.SeverityDeny
	warn = policies.SeverityWarn
)

// failingReport is the shared fixture: raw and rendered results, deny and
// warn, a passing document, results with unknown lines, the same rule twice
// in one document, and messages and paths that need escaping in every
// format (line breaks, %, :, ",", XML and JSON special characters, a space).
func failingReport() Report {
	return Report{
		ToolVersion: "1.4.0-test",
		RuleDescriptions: map[string]string{
			"no-latest-tag":       "Images must be pinned to a tag other than latest or a digest.",
			"resource-limits":     "Containers should set CPU and memory limits.",
			"project-not-default": `Applications must not use the "default" AppProject.`,
			"no-privileged":       "Containers must not run privileged.",
			// acme.ingress:tls is a user rule without a description.
		},
		Results: []Result{
			{
				File: "apps/guestbook/deployment.yaml", Document: 0, Line: 1,
				Kind: "Deployment", Name: "guestbook-ui", Namespace: "guestbook",
				Violations: []Finding{
					{Rule: "no-latest-tag", Severity: deny, Line: 21,
						Message: `container "ui" uses image "gcr.io/heptio/ui:latest"; pin a tag or digest`},
					{Rule: "resource-limits", Severity: warn,
						Message: `container "ui" has no memory limit`},
				},
			},
			{
				File: "apps/guestbook/deployment.yaml", Document: 1, Line: 34,
				Kind: "Service", Name: "guestbook-ui", Namespace: "guestbook",
			},
			{
				File: "apps/argocd/guestbook.yaml", Document: 0, Line: 1,
				Kind: "Application", Name: "guestbook", Namespace: "argocd",
				Violations: []Finding{
					{Rule: "project-not-default", Severity: deny, Line: 6,
						Message: `spec.project is "default": use a project that restricts destinations & sources`},
				},
			},
			{
				File: "charts/web/templates/deployment.yaml", Document: 0, Line: 0,
				Kind: "Deployment", Name: "web", Namespace: "prod", Application: "web-prod",
				Violations: []Finding{
					{Rule: "no-privileged", Severity: deny,
						Message: "container \"web\" is privileged:\nset securityContext.privileged=false (100% required)\r\n"},
					{Rule: "no-privileged", Severity: deny,
						Message: `init container "setup" is privileged`},
				},
			},
			{
				File: "apps/shop/ingress,v1 old.yaml", Document: 2, Line: 40,
				Kind: "Ingress", Name: "shop", Namespace: "shop",
				Violations: []Finding{
					{Rule: "acme.ingress:tls", Severity: warn, Line: 47,
						Message: `host <*.shop.example> & "tls" must match; got 'none' \ see runbook`},
				},
			},
		},
		Summary: Summary{Files: 4, Documents: 5, Denied: 4, Warned: 2},
	}
}

// passingReport is a clean run: documents checked, nothing found.
func passingReport() Report {
	return Report{
		ToolVersion: "1.4.0-test",
		Results: []Result{
			{File: "apps/guestbook/deployment.yaml", Document: 0, Line: 1, Kind: "Deployment", Name: "guestbook-ui", Namespace: "guestbook"},
			{File: "apps/guestbook/deployment.yaml", Document: 1, Line: 34, Kind: "Service", Name: "guestbook-ui", Namespace: "guestbook"},
		},
		Summary: Summary{Files: 1, Documents: 2},
	}
}

// erroredReport is a run where a chart and an Application could not be
// rendered and the rest was still judged.
func erroredReport() Report {
	r := Report{
		ToolVersion:      "1.4.0-test",
		RuleDescriptions: map[string]string{"no-latest-tag": "Images must be pinned to a tag other than latest or a digest."},
		Results: []Result{
			{File: "apps/argocd/shop.yaml", Document: 0, Line: 3, Kind: "Application", Name: "shop", Namespace: "argocd",
				Error: "spec.source: render helm chart charts/shop: chart dependency \"redis\" is not vendored in charts/"},
			{File: "apps/db", Error: "render kustomize apps/db: accumulating resources: missing.yaml: no such file"},
			{File: "apps/guestbook/deployment.yaml", Document: 0, Line: 1, Kind: "Deployment", Name: "guestbook-ui", Namespace: "guestbook",
				Violations: []Finding{{Rule: "no-latest-tag", Severity: deny, Line: 21, Message: `container "ui" uses image "ui:latest"`}}},
			{File: "apps/guestbook/deployment.yaml", Document: 1, Line: 34, Kind: "Service", Name: "guestbook-ui", Namespace: "guestbook"},
		},
	}
	r.Summary = Summarize(r.Results)
	return r
}

func TestSummarizeErrors(t *testing.T) {
	want := Summary{Files: 3, Documents: 2, Denied: 1, Errors: 2}
	if diff := cmp.Diff(want, erroredReport().Summary); diff != "" {
		t.Errorf("Summarize() (-want +got):\n%s", diff)
	}
}

func TestWriteGolden(t *testing.T) {
	fixtures := []struct {
		name   string
		report Report
	}{
		{"fail", failingReport()},
		{"pass", passingReport()},
		{"error", erroredReport()},
	}
	for _, fx := range fixtures {
		for _, format := range Formats() {
			name := fx.name + "-" + format
			t.Run(name, func(t *testing.T) {
				var got bytes.Buffer
				if err := Write(&got, format, fx.report); err != nil {
					t.Fatalf("Write: %v", err)
				}
				path := filepath.Join("testdata", name+".golden")
				if *update {
					if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
						t.Fatalf("update golden: %v", err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("read golden (run go test ./policies/report -update): %v", err)
				}
				if diff := cmp.Diff(string(want), got.String()); diff != "" {
					t.Errorf("%s output mismatch (-want +got):\n%s", format, diff)
				}
			})
		}
	}
}

func TestFormats(t *testing.T) {
	want := []string{"text", "json", "junit", "sarif", "github"}
	if diff := cmp.Diff(want, Formats()); diff != "" {
		t.Errorf("Formats() mismatch (-want +got):\n%s", diff)
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	for _, format := range []string{"", "xml", "JSON", "text "} {
		t.Run(format, func(t *testing.T) {
			var out bytes.Buffer
			err := Write(&out, format, passingReport())
			if !errors.Is(err, ErrUnknownFormat) {
				t.Fatalf("Write(%q) error = %v, want ErrUnknownFormat", format, err)
			}
			if !strings.Contains(err.Error(), "text, json, junit, sarif, github") {
				t.Errorf("error %q does not list the valid formats", err)
			}
			if out.Len() != 0 {
				t.Errorf("Write wrote %q on error", out.String())
			}
		})
	}
}

func TestWriteInvalidReport(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Report)
		wantErr string
	}{
		{
			name:    "severity off",
			mutate:  func(r *Report) { r.Results[2].Violations[0].Severity = policies.SeverityOff },
			wantErr: `validate report: results[2] (apps/argocd/guestbook.yaml document 0): violations[0] (project-not-default): severity "off" is not "deny" or "warn"`,
		},
		{
			name:    "empty severity",
			mutate:  func(r *Report) { r.Results[0].Violations[1].Severity = "" },
			wantErr: `validate report: results[0] (apps/guestbook/deployment.yaml document 0): violations[1] (resource-limits): severity "" is not "deny" or "warn"`,
		},
		{
			name:    "empty rule",
			mutate:  func(r *Report) { r.Results[4].Violations[0].Rule = "" },
			wantErr: `validate report: results[4] (apps/shop/ingress,v1 old.yaml document 2): violations[0]: rule is empty`,
		},
		{
			name:    "empty file",
			mutate:  func(r *Report) { r.Results[1].File = "" },
			wantErr: `validate report: results[1] (Service/guestbook-ui): file is empty`,
		},
		{
			name:    "negative document",
			mutate:  func(r *Report) { r.Results[3].Document = -1 },
			wantErr: `validate report: results[3] (charts/web/templates/deployment.yaml document -1): document index is negative`,
		},
		{
			name:    "negative result line",
			mutate:  func(r *Report) { r.Results[1].Line = -3 },
			wantErr: `validate report: results[1] (apps/guestbook/deployment.yaml document 1): line -3 is negative`,
		},
		{
			name:    "negative finding line",
			mutate:  func(r *Report) { r.Results[0].Violations[0].Line = -1 },
			wantErr: `validate report: results[0] (apps/guestbook/deployment.yaml document 0): violations[0] (no-latest-tag): line -1 is negative`,
		},
		{
			name:    "negative summary",
			mutate:  func(r *Report) { r.Summary.Denied = -1 },
			wantErr: `validate report: summary: negative count in {Files:4 Documents:5 Denied:-1 Warned:2 Errors:0}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, format := range Formats() {
				r := failingReport()
				tt.mutate(&r)
				var out bytes.Buffer
				err := Write(&out, format, r)
				if err == nil {
					t.Fatalf("Write(%s) succeeded, want error %q", format, tt.wantErr)
				}
				if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
					t.Errorf("Write(%s) error mismatch (-want +got):\n%s", format, diff)
				}
				if out.Len() != 0 {
					t.Errorf("Write(%s) wrote %d bytes on error", format, out.Len())
				}
			}
		})
	}
}

type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

func TestWriteWriterError(t *testing.T) {
	sentinel := errors.New("disk full")
	for _, format := range Formats() {
		t.Run(format, func(t *testing.T) {
			err := Write(errWriter{sentinel}, format, failingReport())
			if !errors.Is(err, sentinel) {
				t.Fatalf("Write error = %v, want it to wrap %v", err, sentinel)
			}
			if want := "write " + format + " report: disk full"; err.Error() != want {
				t.Errorf("Write error = %q, want %q", err, want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name    string
		results []Result
		want    Summary
	}{
		{name: "none", results: nil, want: Summary{}},
		{name: "fixture", results: failingReport().Results, want: failingReport().Summary},
		{name: "passing", results: passingReport().Results, want: passingReport().Summary},
		{
			name: "ignores unknown severities",
			results: []Result{{File: "a.yaml", Violations: []Finding{
				{Rule: "r", Severity: policies.SeverityOff}, {Rule: "r", Severity: warn},
			}}},
			want: Summary{Files: 1, Documents: 1, Warned: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Summarize(tt.results)); diff != "" {
				t.Errorf("Summarize mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummaryLine(t *testing.T) {
	tests := []struct {
		in   Summary
		want string
	}{
		{Summary{}, "PASS  0 documents in 0 files: 0 denied, 0 warned"},
		{Summary{Files: 1, Documents: 1}, "PASS  1 document in 1 file: 0 denied, 0 warned"},
		{Summary{Files: 2, Documents: 3, Warned: 4}, "PASS  3 documents in 2 files: 0 denied, 4 warned"},
		{Summary{Files: 4, Documents: 5, Denied: 1, Warned: 2}, "FAIL  5 documents in 4 files: 1 denied, 2 warned"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := summaryLine(tt.in); got != tt.want {
				t.Errorf("summaryLine(%+v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestResultObject(t *testing.T) {
	tests := []struct {
		kind, name, want string
	}{
		{"Deployment", "web", "Deployment/web"},
		{"ConfigMap", "", "ConfigMap/<unnamed>"},
		{"", "web", "<unknown kind>/web"},
		{"", "", "<unknown kind>/<unnamed>"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := (Result{Kind: tt.kind, Name: tt.name}).object(); got != tt.want {
				t.Errorf("object() = %q, want %q", got, tt.want)
			}
		})
	}
}
