package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

func TestVerify(t *testing.T) {
	failing := t.TempDir()
	testutil.WriteFiles(t, failing, map[string]string{
		"p.rego": "package main\n\ndeny contains \"no\" if input.kind == \"Pod\"\n",
		"p_test.rego": `package main

test_pod_denied if {
	count(deny) == 1 with input as {"kind": "Pod"}
}

test_service_denied if {
	print("checking a Service")
	count(deny) == 1 with input as {"kind": "Service"}
}

todo_test_later if {
	false
}
`,
	})
	broken := t.TempDir()
	testutil.WriteFiles(t, broken, map[string]string{"b.rego": "package main\n\ndeny contains msg if {\n"})
	empty := t.TempDir()
	testutil.WriteFiles(t, empty, map[string]string{"p.rego": "package main\n\ndeny contains \"no\" if false\n"})

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
		wantErr    string
	}{
		{
			name:       "passing tests",
			args:       []string{"testdata/policy"},
			wantCode:   exitOK,
			wantStdout: "PASS  main.test_configmap_without_team_denied\nPASS  main.test_configmap_with_team_allowed\n\n2 passed, 0 failed\n",
		},
		{
			name:     "failing test",
			args:     []string{"--policy", failing},
			wantCode: exitDenied,
			wantStdout: "PASS  main.test_pod_denied\n" +
				"FAIL  main.test_service_denied  " + filepath.Join(failing, "p_test.rego") + ":7\n" +
				"      test failed\n" +
				"      checking a Service\n" +
				"SKIP  main.todo_test_later\n" +
				"\n1 passed, 1 failed, 1 skipped\n",
		},
		{
			name:     "compile error",
			args:     []string{broken},
			wantCode: exitUsage,
			wantErr:  "b.rego:4: rego_parse_error",
		},
		{
			name:       "no tests",
			args:       []string{empty},
			wantCode:   exitOK,
			wantStdout: "0 passed, 0 failed\n",
			wantStderr: "note: no tests (test_* rules) found in " + empty + "\n",
		},
		{
			name:     "missing directory",
			args:     []string{filepath.Join(empty, "nope")},
			wantCode: exitUsage,
			wantErr:  "nope",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, nil, append([]string{"verify"}, tt.args...)...)
			if r.code != tt.wantCode {
				t.Fatalf("exit code = %d, want %d (error %q)\nstdout:\n%s", r.code, tt.wantCode, r.err, r.stdout)
			}
			if tt.wantErr != "" {
				if !strings.Contains(r.err, tt.wantErr) {
					t.Errorf("error = %q, want it to contain %q", r.err, tt.wantErr)
				}
				return
			}
			if diff := cmp.Diff(tt.wantStdout, r.stdout); diff != "" {
				t.Errorf("stdout mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStderr, r.stderr); diff != "" {
				t.Errorf("stderr mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
