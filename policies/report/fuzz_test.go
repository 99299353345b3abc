package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzWriters checks, for arbitrary text in every string field, the
// properties consumers rely on: text and github print exactly one line per
// violation plus the summary, json round-trips the strings it was given
// (when they are valid UTF-8), junit and sarif always parse. Run it with
// go test ./policies/report -fuzz FuzzWriters -fuzztime 30s.
func FuzzWriters(f *testing.F) {
	f.Add("apps/web.yaml", "Deployment", "web", "guestbook", "no-latest-tag", "pin the image", 3)
	f.Add("a,b:c.yaml", "", "", "", "acme:x,y", "50%\r\n::warning::x", 0)
	f.Add("dir/ü #1.yaml", "Kind\x1b[2J", "n\u202e", "app\n", "r", "<a href='x'>&amp;</a> \"q\" \\", 7)
	f.Add("x.yaml", "K", "n", "", "r", "bad \xff\xfe utf8 \x00 \ufffe", 1)
	f.Fuzz(func(t *testing.T, file, kind, name, app, rule, msg string, line int) {
		if file == "" || rule == "" || strings.HasPrefix(file, "/") {
			return // rejected by validation, or not a repo-relative path
		}
		if line < 0 {
			line = -line
		}
		if line < 0 { // math.MinInt
			line = 0
		}
		r := Report{
			Results: []Result{{
				File: file, Line: line, Kind: kind, Name: name, Application: app,
				Violations: []Finding{
					{Rule: rule, Severity: deny, Message: msg},
					{Rule: rule, Severity: warn, Message: msg, Line: 1},
				},
			}},
			Summary: Summary{Files: 1, Documents: 1, Denied: 1, Warned: 1},
		}
		out := make(map[string][]byte)
		for _, format := range Formats() {
			var b bytes.Buffer
			if err := Write(&b, format, r); err != nil {
				t.Fatalf("Write(%s): %v", format, err)
			}
			out[format] = b.Bytes()
		}

		if n := strings.Count(string(out[FormatText]), "\n"); n != 4 {
			t.Errorf("text has %d lines, want 2 violations + blank + summary:\n%q", n, out[FormatText])
		}
		gh := strings.Split(strings.TrimSuffix(string(out[FormatGitHub]), "\n"), "\n")
		if len(gh) != 3 || !strings.HasPrefix(gh[0], "::error file=") || !strings.HasPrefix(gh[1], "::warning file=") {
			t.Errorf("github output is not two commands and a summary:\n%q", out[FormatGitHub])
		}

		var js contractReport
		if err := json.Unmarshal(out[FormatJSON], &js); err != nil {
			t.Fatalf("json does not parse: %v\n%s", err, out[FormatJSON])
		}
		if allValidUTF8(file, kind, name, app, rule, msg) {
			got := js.Results[0]
			if got.File != file || got.Kind != kind || got.Name != name || got.Application != app ||
				got.Violations[0].Rule != rule || got.Violations[0].Message != msg {
				t.Errorf("json did not round-trip the strings: %+v", got)
			}
		}

		var ju parsedSuites
		if err := xml.Unmarshal(out[FormatJUnit], &ju); err != nil {
			t.Fatalf("junit does not parse: %v\n%s", err, out[FormatJUnit])
		}
		if ju.Tests != 1 || ju.Failures != 1 {
			t.Errorf("junit counts tests=%d failures=%d, want 1 and 1", ju.Tests, ju.Failures)
		}

		var sarif map[string]any
		if err := json.Unmarshal(out[FormatSARIF], &sarif); err != nil {
			t.Fatalf("sarif does not parse: %v", err)
		}
		if problems := checkSARIFShape(sarif); len(problems) > 0 {
			t.Errorf("SARIF shape problems:\n%s", strings.Join(problems, "\n"))
		}
	})
}

func allValidUTF8(s ...string) bool {
	for _, x := range s {
		if !utf8.ValidString(x) {
			return false
		}
	}
	return true
}
