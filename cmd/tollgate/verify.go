package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/policies"
)

// defaultPolicyDir is the policy directory verify reads when none is given,
// as conftest does.
const defaultPolicyDir = "policy"

// verifyOptions are the settings of `tollgate verify`.
type verifyOptions struct {
	// PolicyDirs are the directories (or files) of Rego policies and their
	// tests.
	PolicyDirs []string
}

func newVerifyCmd() *cobra.Command {
	o := verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify [--policy DIR ...] [DIR...]",
		Short: "Run the Rego unit tests (test_* rules) of your policies",
		Long: `Run the Rego unit tests of the policies in the given directories, like
conftest verify: every .rego file, *_test.rego included, is compiled together
and every test_* rule is run (todo_test_* rules are skipped).

Exit status: 0 when every test passes, 1 when one fails, 2 when a policy does
not compile.`,
		Example: `  tollgate verify policy/
  tollgate verify --policy policy/ --policy shared/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.PolicyDirs = append(o.PolicyDirs, args...)
			if len(o.PolicyDirs) == 0 {
				o.PolicyDirs = []string{defaultPolicyDir}
			}
			res, err := policies.Verify(cmd.Context(), o.PolicyDirs)
			if err != nil {
				return usageError(err)
			}
			if err := writeVerify(cmd.OutOrStdout(), res); err != nil {
				return err
			}
			if len(res.Tests) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: no tests (test_* rules) found in %s\n", strings.Join(o.PolicyDirs, ", "))
			}
			if !res.Passed() {
				return deniedError()
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&o.PolicyDirs, "policy", nil, "`DIR` of Rego policies and tests (repeatable; default \"policy\")")
	return cmd
}

// writeVerify writes one line per test, the messages of failures indented
// below them, and a summary:
//
//	PASS  main.test_allow_pinned
//	FAIL  main.test_deny_latest  policy/main_test.rego:12
//	      test failed
//
//	1 passed, 1 failed
func writeVerify(w io.Writer, res policies.VerifyResult) error {
	var b bytes.Buffer
	for _, t := range res.Tests {
		name := t.Package + "." + t.Name
		switch t.Status {
		case policies.TestPass:
			fmt.Fprintf(&b, "PASS  %s\n", name)
		case policies.TestSkip:
			fmt.Fprintf(&b, "SKIP  %s\n", name)
		default:
			label := "FAIL"
			if t.Status == policies.TestError {
				label = "ERROR"
			}
			fmt.Fprintf(&b, "%-4s  %s  %s\n", label, name, t.Location)
			for line := range strings.SplitSeq(t.Message, "\n") {
				if line != "" {
					fmt.Fprintf(&b, "      %s\n", line)
				}
			}
		}
	}
	if len(res.Tests) > 0 {
		b.WriteByte('\n')
	}
	failed := res.Count(policies.TestFail) + res.Count(policies.TestError)
	fmt.Fprintf(&b, "%d passed, %d failed", res.Count(policies.TestPass), failed)
	if n := res.Count(policies.TestSkip); n > 0 {
		fmt.Fprintf(&b, ", %d skipped", n)
	}
	b.WriteByte('\n')
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write verify report: %w", err)
	}
	return nil
}
