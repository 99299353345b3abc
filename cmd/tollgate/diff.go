package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tollgate-dev/tollgate/check/prdiff"
)

// diffOptions are the flags of `tollgate diff`.
type diffOptions struct {
	checkFlags
	base, head string
	output     string
	failOn     string
	maxBytes   int
	colour     string
}

// The values of --fail-on.
const (
	failOnIntroduced = "introduced"
	failOnExisting   = "existing"
)

func newDiffCmd() *cobra.Command {
	o := diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff [flags] [PATH]",
		Short: "Show what a change does to every Application's manifests, with the policies' verdicts",
		Long: `Show what the change from --base to --head does to what Argo CD would deploy
from PATH (default: the current directory, inside a Git repository), and
which of the policies' findings the change introduces.

Both revisions are checked as tollgate test checks a checkout: every
Application and ApplicationSet found (ApplicationSets generated), the
Applications whose sources are this repository (--repo-url, by default its
origin remote) rendered with the repo-server's renderer, and the manifests
outside any Application (plain files, Kustomize and Helm directories). The
base and a --head revision are read from Git objects into a temporary
directory; without --head the work tree is read as it is, uncommitted
changes included.

Applications are paired by name, their objects by API group, kind,
namespace and name, the other documents by directory. The report lists
each Application and directory that changed, each object added, removed or
changed with the unified diff of its YAML (status, managedFields and the
tracking annotation left out, Secret values masked as Argo CD masks them),
and the findings at the head, each marked introduced (the base did not have
it for the same object) or existing.

Exit status: 0 when the change introduces no denial, 1 when it does (with
--fail-on existing: when anything is denied at the head), 2 on usage
errors, or when something could not be decoded or rendered at the head
(after the report).`,
		Example: `  tollgate diff
  tollgate diff --base origin/main -o markdown > comment.md
  tollgate diff --base v1.4.0 --head v1.5.0 apps/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "."
			if len(args) == 1 {
				path = args[0]
			}
			return runDiff(cmd, o, path)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.base, "base", "", "base `REVISION` (default: the merge base of HEAD with origin/HEAD, else with main)")
	f.StringVar(&o.head, "head", "", "head `REVISION` (default: the work tree, uncommitted changes included)")
	f.StringVarP(&o.output, "output", "o", prdiff.FormatText, "report format: "+strings.Join(prdiff.Formats(), ", "))
	f.StringVar(&o.failOn, "fail-on", failOnIntroduced, "exit 1 on denials the change introduces (introduced) or on any denial at the head (existing)")
	f.IntVar(&o.maxBytes, "max-bytes", prdiff.DefaultMaxBytes, "size limit of the markdown report (GitHub caps a comment at 65,536 characters); sections past it are cut, with a note")
	f.StringVar(&o.colour, "color", "auto", "colour the text report: auto (on a terminal), always or never")
	o.register(f)
	return cmd
}

// runDiff runs the diff, writes the report and returns the exit status as
// an error.
func runDiff(cmd *cobra.Command, o diffOptions, path string) error {
	if !slices.Contains(prdiff.Formats(), o.output) {
		return usageError(fmt.Errorf("invalid --output %q: valid formats are %s", o.output, strings.Join(prdiff.Formats(), ", ")))
	}
	if o.failOn != failOnIntroduced && o.failOn != failOnExisting {
		return usageError(fmt.Errorf("invalid --fail-on %q: valid values are %s and %s", o.failOn, failOnIntroduced, failOnExisting))
	}
	colour, err := useColour(o.colour, cmd)
	if err != nil {
		return err
	}
	opts, err := o.options(cmd)
	if err != nil {
		return err
	}
	r, err := prdiff.Run(cmd.Context(), prdiff.Options{Options: opts, Path: path, Base: o.base, Head: o.head})
	if err != nil {
		if ce := checkError(err); ce != err {
			return ce
		}
		if cmd.Context().Err() != nil {
			return err
		}
		return usageError(err)
	}
	if err := prdiff.Write(cmd.OutOrStdout(), o.output, r, prdiff.WriteOptions{Colour: colour, MaxBytes: o.maxBytes}); err != nil {
		return err
	}
	s := r.Summary
	if s.Errors > 0 {
		return usageError(fmt.Errorf("%d of the files, directories and Applications at the head could not be decoded or rendered; the report lists them, and everything else was compared", s.Errors))
	}
	if s.IntroducedDenials > 0 || o.failOn == failOnExisting && s.ExistingDenials > 0 {
		return deniedError()
	}
	return nil
}

// useColour decides --color: auto colours a terminal.
func useColour(flag string, cmd *cobra.Command) (bool, error) {
	switch flag {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto":
		f, ok := cmd.OutOrStdout().(*os.File)
		return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == "", nil
	}
	return false, usageError(errors.New("invalid --color " + flag + ": valid values are auto, always and never"))
}
