package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEscapeData(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain: a, b", "plain: a, b"},
		{"100%", "100%25"},
		{"%0A is not a newline", "%250A is not a newline"},
		{"a\nb\r\nc", "a%0Ab%0D%0Ac"},
		{"\n::set-output name=x::y", "%0A::set-output name=x::y"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := escapeData(tt.in); got != tt.want {
				t.Errorf("escapeData(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEscapeProperty(t *testing.T) {
	tests := []struct{ in, want string }{
		{"apps/web/deployment.yaml", "apps/web/deployment.yaml"},
		{"acme.ingress:tls", "acme.ingress%3Atls"},
		{"a,b", "a%2Cb"},
		{"50%:x,\r\n", "50%25%3Ax%2C%0D%0A"},
		{"%3A", "%253A"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := escapeProperty(tt.in); got != tt.want {
				t.Errorf("escapeProperty(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestGitHubCommand(t *testing.T) {
	tests := []struct {
		name string
		res  Result
		f    Finding
		want string
	}{
		{
			name: "deny with line",
			res:  Result{File: "apps/web.yaml", Line: 1, Kind: "Deployment", Name: "web"},
			f:    Finding{Rule: "no-latest-tag", Severity: deny, Message: "pin the image", Line: 12},
			want: "::error file=apps/web.yaml,line=12,title=no-latest-tag::Deployment/web: pin the image",
		},
		{
			name: "warn falls back to document line",
			res:  Result{File: "apps/web.yaml", Line: 7, Kind: "Deployment", Name: "web"},
			f:    Finding{Rule: "resource-limits", Severity: warn, Message: "set limits"},
			want: "::warning file=apps/web.yaml,line=7,title=resource-limits::Deployment/web: set limits",
		},
		{
			name: "unknown line omitted, app appended",
			res:  Result{File: "charts/web/templates/d.yaml", Kind: "Deployment", Name: "web", Application: "web-prod"},
			f:    Finding{Rule: "no-privileged", Severity: deny, Message: "privileged\nfix it"},
			want: "::error file=charts/web/templates/d.yaml,title=no-privileged::Deployment/web: privileged%0Afix it (app web-prod)",
		},
		{
			name: "properties escaped",
			res:  Result{File: "a,b:c.yaml", Line: 3, Kind: "Ingress", Name: "shop"},
			f:    Finding{Rule: "acme:tls,hosts", Severity: warn, Message: "50% done: a, b"},
			want: "::warning file=a%2Cb%3Ac.yaml,line=3,title=acme%3Atls%2Chosts::Ingress/shop: 50%25 done: a, b",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := githubViolation(tt.res, tt.f); got != tt.want {
				t.Errorf("githubViolation() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestGitHubOneCommandPerViolation checks that no message can split or
// inject a workflow command: the output has exactly one command line per
// violation and then the plain summary line.
func TestGitHubOneCommandPerViolation(t *testing.T) {
	r := failingReport()
	var out bytes.Buffer
	if err := Write(&out, FormatGitHub, r); err != nil {
		t.Fatalf("Write: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	var kinds []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "::error "):
			kinds = append(kinds, "error")
		case strings.HasPrefix(l, "::warning "):
			kinds = append(kinds, "warning")
		case strings.HasPrefix(l, "::"):
			kinds = append(kinds, "unexpected command: "+l)
		default:
			kinds = append(kinds, "plain: "+l)
		}
	}
	want := []string{"error", "warning", "error", "error", "error", "warning",
		"plain: FAIL  5 documents in 4 files: 4 denied, 2 warned"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("github output lines mismatch (-want +got):\n%s", diff)
	}
}
