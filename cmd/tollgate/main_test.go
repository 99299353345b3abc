package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// cliResult is what one in-process run of the CLI produced.
type cliResult struct {
	stdout, stderr string
	code           int
	// err is the message main would print after "tollgate: ".
	err string
}

// runCLI runs the tollgate command tree in-process with args and stdin.
func runCLI(t *testing.T, stdin io.Reader, args ...string) cliResult {
	t.Helper()
	cmd := newRootCmd()
	var out, errb bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	if stdin != nil {
		cmd.SetIn(stdin)
	}
	err := cmd.ExecuteContext(t.Context())
	r := cliResult{stdout: out.String(), stderr: errb.String()}
	if err != nil {
		r.code = exitCode(err)
		r.err = err.Error()
	}
	return r
}

// checkGolden compares got with testdata/golden/name, or rewrites it with
// -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test ./cmd/tollgate -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// lines splits output into non-empty lines.
func lines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
