package policies

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/tester"
)

// TestStatus is the outcome of one Rego unit test.
type TestStatus string

// Test outcomes.
const (
	TestPass  TestStatus = "pass"
	TestFail  TestStatus = "fail"
	TestError TestStatus = "error"
	TestSkip  TestStatus = "skip"
)

// TestResult is the result of one Rego unit test (a test_* rule).
type TestResult struct {
	// Package is the test's package path without "data.", e.g. "main".
	Package string `json:"package"`
	// Name is the test rule's name, e.g. "test_deny_latest".
	Name   string     `json:"name"`
	Status TestStatus `json:"status"`
	// Message explains a failure or error: the error, and whatever the test
	// printed.
	Message  string        `json:"message,omitempty"`
	Duration time.Duration `json:"duration"`
	// Location is the test's file:line.
	Location string `json:"location"`
}

// VerifyResult is the outcome of Verify: one entry per test, sorted by file
// and line.
type VerifyResult struct {
	Tests []TestResult `json:"tests"`
}

// Passed reports whether no test failed or errored.
func (r VerifyResult) Passed() bool {
	for _, t := range r.Tests {
		if t.Status == TestFail || t.Status == TestError {
			return false
		}
	}
	return true
}

// Count returns how many tests ended with status s.
func (r VerifyResult) Count(s TestStatus) int {
	n := 0
	for _, t := range r.Tests {
		if t.Status == s {
			n++
		}
	}
	return n
}

// Verify runs the Rego unit tests (test_* rules; todo_test_* are skipped)
// of the policies in dirs, like `conftest verify`: every .rego file,
// *_test.rego included, is compiled together. A file that does not parse or
// compile fails Verify with an error naming the file and line; failing tests
// do not. Built-in function errors make an expression undefined, as they
// do in Evaluate. Each test runs under the tester's per-test timeout and ctx.
func Verify(ctx context.Context, dirs []string) (VerifyResult, error) {
	if len(dirs) == 0 {
		return VerifyResult{}, fmt.Errorf("verify policies: no policy directories given")
	}
	modules, err := loadDirs(dirs, func(name string) bool { return strings.HasSuffix(name, ".rego") })
	if err != nil {
		return VerifyResult{}, fmt.Errorf("verify policies: %w", err)
	}
	compiler := ast.NewCompiler().
		WithDefaultRegoVersion(ast.RegoV1).
		WithEnablePrintStatements(true)
	ch, err := tester.NewRunner().
		SetCompiler(compiler).
		SetModules(modules).
		CapturePrintOutput(true).
		RunTests(ctx, nil)
	if err != nil {
		return VerifyResult{}, fmt.Errorf("verify policies: compile: %w", err)
	}
	var results []*tester.Result
	for r := range ch {
		results = append(results, r)
	}
	slices.SortFunc(results, func(a, b *tester.Result) int {
		if a.Location != nil && b.Location != nil {
			if c := cmp.Or(
				strings.Compare(a.Location.File, b.Location.File),
				cmp.Compare(a.Location.Row, b.Location.Row),
			); c != 0 {
				return c
			}
		}
		return cmp.Or(strings.Compare(a.Package, b.Package), strings.Compare(a.Name, b.Name))
	})
	res := VerifyResult{Tests: make([]TestResult, 0, len(results))}
	for _, r := range results {
		res.Tests = append(res.Tests, testResult(r))
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("verify policies: %w", err)
	}
	return res, nil
}

// testResult converts one tester result.
func testResult(r *tester.Result) TestResult {
	tr := TestResult{
		Package:  strings.TrimPrefix(r.Package, "data."),
		Name:     r.Name,
		Duration: r.Duration,
		Status:   TestPass,
	}
	if r.Location != nil {
		tr.Location = fmt.Sprintf("%s:%d", r.Location.File, r.Location.Row)
	}
	var msg []string
	switch {
	case r.Skip:
		tr.Status = TestSkip
	case r.Error != nil:
		tr.Status = TestError
		msg = append(msg, r.Error.Error())
	case r.Fail:
		tr.Status = TestFail
		msg = append(msg, "test failed")
	}
	if out := strings.TrimSpace(string(r.Output)); out != "" && tr.Status != TestPass {
		msg = append(msg, out)
	}
	tr.Message = strings.Join(msg, "\n")
	return tr
}
