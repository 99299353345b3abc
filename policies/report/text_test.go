package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestPrintable(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", `container "ui" uses :latest`, `container "ui" uses :latest`},
		{"unicode kept", "naïve ✓ 名前", "naïve ✓ 名前"},
		{"newlines", "a\nb\r\nc", `a\nb\r\nc`},
		{"tab", "a\tb", `a\tb`},
		{"terminal escape", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"NUL and DEL", "a\x00b\x7f", `a\x00b\x7f`},
		{"C1 control", "a\u0085b", `a\x85b`},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`},
		{"bidi isolate", "\u2066x\u2069", `\u2066x\u2069`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := printable(tt.in); got != tt.want {
				t.Errorf("printable(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestTextLine(t *testing.T) {
	base := Result{File: "apps/web.yaml", Document: 1, Line: 10, Kind: "Deployment", Name: "web"}
	tests := []struct {
		name string
		res  func() Result
		f    Finding
		want string
	}{
		{
			name: "finding line wins",
			res:  func() Result { return base },
			f:    Finding{Rule: "no-latest-tag", Severity: deny, Message: "pin it", Line: 12},
			want: "DENY  apps/web.yaml:12  Deployment/web  [no-latest-tag] pin it",
		},
		{
			name: "document line as fallback",
			res:  func() Result { return base },
			f:    Finding{Rule: "resource-limits", Severity: warn, Message: "set limits"},
			want: "WARN  apps/web.yaml:10  Deployment/web  [resource-limits] set limits",
		},
		{
			name: "unknown line",
			res:  func() Result { r := base; r.Line = 0; return r },
			f:    Finding{Rule: "r", Severity: deny, Message: "m"},
			want: "DENY  apps/web.yaml  Deployment/web  [r] m",
		},
		{
			name: "rendered by an application",
			res:  func() Result { r := base; r.Application = "guestbook"; return r },
			f:    Finding{Rule: "r", Severity: warn, Message: "m", Line: 3},
			want: "WARN  apps/web.yaml:3  Deployment/web  [r] m (app guestbook)",
		},
		{
			name: "control characters everywhere",
			res: func() Result {
				return Result{File: "a\nb.yaml", Kind: "Config\x1bMap", Name: "x\ty", Application: "app\r"}
			},
			f:    Finding{Rule: "r\n", Severity: deny, Message: "line1\nline2"},
			want: `DENY  a\nb.yaml  Config\x1bMap/x\ty  [r\n] line1\nline2 (app app\r)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := textLine(tt.res(), tt.f); got != tt.want {
				t.Errorf("textLine() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestTextOneLinePerViolation checks the text format's shape on the shared
// fixture: one line per violation, a blank line, then the summary.
func TestTextOneLinePerViolation(t *testing.T) {
	r := failingReport()
	var out bytes.Buffer
	if err := Write(&out, FormatText, r); err != nil {
		t.Fatalf("Write: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	n := r.Summary.Denied + r.Summary.Warned
	if len(lines) != n+2 {
		t.Fatalf("got %d lines, want %d violations + blank + summary:\n%s", len(lines), n, out.String())
	}
	for i, l := range lines[:n] {
		if !strings.HasPrefix(l, "DENY  ") && !strings.HasPrefix(l, "WARN  ") {
			t.Errorf("line %d = %q, want a DENY or WARN line", i+1, l)
		}
	}
	if lines[n] != "" {
		t.Errorf("line %d = %q, want blank", n+1, lines[n])
	}
	if want := "FAIL  5 documents in 4 files: 4 denied, 2 warned"; lines[n+1] != want {
		t.Errorf("summary = %q, want %q", lines[n+1], want)
	}
}

func TestTextPassingHasOnlySummary(t *testing.T) {
	var out bytes.Buffer
	if err := Write(&out, FormatText, passingReport()); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if want := "PASS  2 documents in 1 file: 0 denied, 0 warned\n"; out.String() != want {
		t.Errorf("text = %q, want %q", out.String(), want)
	}
}
