package policies

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const verifyPolicy = `package main

deny contains msg if {
	input.kind == "Deployment"
	endswith(input.spec.template.spec.containers[_].image, ":latest")
	msg := "latest tag"
}
`

const verifyTests = `package main

test_latest_denied if {
	deny["latest tag"] with input as {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"image": "nginx:latest"}]}}}}
}

test_pinned_allowed if {
	count(deny) == 0 with input as {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"image": "nginx:1.27"}]}}}}
}

test_wrong_expectation if {
	print("deny was", deny)
	count(deny) == 1 with input as {"kind": "ConfigMap"}
}

conflict := 1 if true

conflict := 2 if true

test_error if conflict == 1

test_builtin_error_is_undefined if {
	not to_number("nope")
}

todo_test_later if false
`

func TestVerify(t *testing.T) {
	dir := writePolicies(t, map[string]string{
		"policy/main.rego":      verifyPolicy,
		"policy/main_test.rego": verifyTests,
	})
	testFile := filepath.Join(dir, "policy", "main_test.rego")
	got, err := Verify(t.Context(), []string{dir})
	if err != nil {
		t.Fatalf("Verify() error = %v", err)
	}
	want := []TestResult{
		{Package: "main", Name: "test_latest_denied", Status: TestPass, Location: testFile + ":3"},
		{Package: "main", Name: "test_pinned_allowed", Status: TestPass, Location: testFile + ":7"},
		{Package: "main", Name: "test_wrong_expectation", Status: TestFail, Message: "test failed\ndeny was set()", Location: testFile + ":11"},
		{Package: "main", Name: "test_error", Status: TestError, Location: testFile + ":20"},
		{Package: "main", Name: "test_builtin_error_is_undefined", Status: TestPass, Location: testFile + ":22"},
		{Package: "main", Name: "todo_test_later", Status: TestSkip, Location: testFile + ":26"},
	}
	// Error text belongs to OPA: compare it separately, by substance.
	var gotMsgs []string
	for i := range got.Tests {
		if got.Tests[i].Name == "test_error" {
			gotMsgs = append(gotMsgs, got.Tests[i].Message)
			got.Tests[i].Message = ""
		}
	}
	if diff := cmp.Diff(want, got.Tests, cmpopts.IgnoreFields(TestResult{}, "Duration")); diff != "" {
		t.Errorf("Verify() mismatch (-want +got):\n%s", diff)
	}
	if len(gotMsgs) != 1 || !strings.Contains(gotMsgs[0], "conflict") {
		t.Errorf("test_error messages = %q, want the conflict error", gotMsgs)
	}
	if got.Passed() {
		t.Error("Passed() = true with a failing test")
	}
	if n := got.Count(TestPass); n != 3 {
		t.Errorf("Count(pass) = %d, want 3", n)
	}
}

func TestVerifyAllPass(t *testing.T) {
	dir := writePolicies(t, map[string]string{
		"main.rego": verifyPolicy,
		"main_test.rego": `package main

test_latest_denied if {
	deny["latest tag"] with input as {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"image": "nginx:latest"}]}}}}
}
`,
	})
	got, err := Verify(t.Context(), []string{dir})
	if err != nil {
		t.Fatalf("Verify() error = %v", err)
	}
	if !got.Passed() || len(got.Tests) != 1 {
		t.Errorf("Verify() = %+v, want one passing test", got)
	}
}

func TestVerifyErrors(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		wantErr []string
	}{
		{
			name: "compile error in a test file",
			files: map[string]string{
				"main.rego":      verifyPolicy,
				"main_test.rego": "package main\n\ntest_x if {\n\tnot_a_function(1)\n}\n",
			},
			wantErr: []string{"main_test.rego:4", "not_a_function"},
		},
		{
			name:    "parse error",
			files:   map[string]string{"main.rego": "package main\n\ndeny[msg] {\n}\n"},
			wantErr: []string{"main.rego:4", "rego_parse_error"},
		},
		{
			name:    "no files",
			files:   map[string]string{"notes.txt": "x"},
			wantErr: []string{"no .rego files found"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writePolicies(t, tt.files)
			_, err := Verify(t.Context(), []string{dir})
			if err == nil {
				t.Fatal("Verify() succeeded, want an error")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Verify() error = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}
