package prdiff

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// bigReport has n changed Applications, each with one object whose diff
// is about size bytes.
func bigReport(n, size int) Report {
	var r Report
	for i := range n {
		diff := "--- base\n+++ head\n@@ -1 +1 @@\n" + strings.Repeat("-old line\n+new line\n", size/20)
		r.Groups = append(r.Groups, Group{Kind: GroupApplication, Name: fmt.Sprintf("app-%03d", i), Status: Changed,
			Objects: []Object{{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", Status: Changed, File: "apps/cm.yaml", Diff: diff}}})
		r.Summary.Applications.Changed++
	}
	return r
}

// TestMarkdownSizeLimit: the comment stays under the limit; sections that
// do not fit lose their diffs, then are cut, with a note saying how many.
func TestMarkdownSizeLimit(t *testing.T) {
	for _, tc := range []struct {
		name                string
		r                   Report
		max                 int
		wantCut, wantNoDiff bool
	}{
		{"fits", bigReport(3, 1000), 20000, false, false},
		{"diffs left out", bigReport(1, 30000), 5000, false, true},
		{"sections cut", bigReport(200, 2000), 65536, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, FormatMarkdown, tc.r, WriteOptions{MaxBytes: tc.max}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if len(out) > tc.max {
				t.Errorf("%d bytes, over the limit of %d", len(out), tc.max)
			}
			if got := strings.Contains(out, "not shown: the comment's size limit"); got != tc.wantCut {
				t.Errorf("cut note present = %v, want %v", got, tc.wantCut)
			}
			if got := strings.Contains(out, "diff left out"); got != tc.wantNoDiff {
				t.Errorf("diff left out = %v, want %v", got, tc.wantNoDiff)
			}
			if !strings.Contains(out, "| Applications |") {
				t.Error("the summary table is missing")
			}
		})
	}
}

// TestMarkdownEscapes: names, messages and diffs from a repository cannot
// close the diff's fence, open HTML or break the table.
func TestMarkdownEscapes(t *testing.T) {
	r := Report{Groups: []Group{{Kind: GroupApplication, Name: "<img src=x>", Status: Changed, Objects: []Object{{
		APIVersion: "v1", Kind: "ConfigMap", Name: "a|b", Status: Changed, File: "x.yaml",
		Diff:     "--- base\n+++ head\n@@ -1 +1 @@\n-data: ```\n+data: ````\n",
		Findings: []Finding{{Rule: "r", Severity: "deny", Message: "<script>*x*</script>", Introduced: true}},
	}}}}}
	var b bytes.Buffer
	if err := Write(&b, FormatMarkdown, r, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<img", "<script>", "a|b"} {
		if strings.Contains(out, bad) {
			t.Errorf("output holds %q unescaped:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "`````diff\n") {
		t.Errorf("the diff's fence is not longer than the backticks in it:\n%s", out)
	}
}

// TestHTMLEscapes: the HTML report escapes what the repository wrote.
func TestHTMLEscapes(t *testing.T) {
	r := Report{Groups: []Group{{Kind: GroupPath, Name: "<script>alert(1)</script>", Status: Added}}}
	var b bytes.Buffer
	if err := Write(&b, FormatHTML, r, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<script>") {
		t.Errorf("unescaped script in the HTML report")
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	if err := Write(&bytes.Buffer{}, "yaml", Report{}, WriteOptions{}); err == nil || !strings.Contains(err.Error(), "valid formats") {
		t.Errorf("error = %v", err)
	}
}
