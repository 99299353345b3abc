package main

import (
	"errors"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Exit codes shared by every subcommand.
const (
	exitOK     = 0
	exitDenied = 1 // policy denial (or a warning with --fail-on-warn)
	exitUsage  = 2 // usage or input error
)

// exitError carries an exit code out of RunE; only main calls os.Exit.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError marks err as a usage or input error (exit 2).
func usageError(err error) error { return &exitError{code: exitUsage, err: err} }

// deniedError is a silent exit 1: the report already told the user why.
func deniedError() error { return &exitError{code: exitDenied} }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// cobra's own flag and argument errors, and anything unexpected.
	return exitUsage
}

// optionalCommands are the subcommands a build may leave out: `tollgate
// dev` registers itself here unless built with -tags nodev, as the
// container image is (the in-cluster binary needs no local control plane,
// and leaving out its envtest dependencies keeps the controller's binary
// and resident memory smaller).
var optionalCommands []func() *cobra.Command

type rootOptions struct {
	verbosity int
}

func newRootCmd() *cobra.Command {
	opts := &rootOptions{}
	cmd := &cobra.Command{
		Use:           "tollgate",
		Short:         "Policy guard for Argo CD-style GitOps: PR checks, admission webhook, sync engine",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			cmd.SetContext(logr.NewContext(cmd.Context(), newLogger(opts.verbosity)))
		},
	}
	cmd.PersistentFlags().IntVarP(&opts.verbosity, "v", "v", 0, "log verbosity (0 or 1)")
	cmd.AddCommand(
		newVersionCmd(),
		newWebhookCmd(),
		newAuditCmd(),
		newTestCmd(),
		newDiffCmd(),
		newVerifyCmd(),
		newSealCmd(),
		newHealthCmd(),
		newControllerCmd(),
		newRepoServerCmd(),
		newCmpServerCmd(),
		newAppCmd(),
		newApplicationSetCmd(),
		newProjCmd(),
		newClusterCmd(),
		newRepoCmd(),
		newRenderWorkerCmd(),
		newUICmd(),
	)
	for _, c := range optionalCommands {
		cmd.AddCommand(c())
	}
	return cmd
}

// newLogger returns a JSON logr logger on stderr at the given verbosity.
func newLogger(v int) logr.Logger { return newLoggerTo(v, "stderr") }

// newLoggerTo returns a JSON logr logger writing to the zap output path
// (stderr, or a file) at the given verbosity.
func newLoggerTo(v int, path string) logr.Logger {
	cfg := zap.NewProductionConfig()
	cfg.OutputPaths, cfg.ErrorOutputPaths = []string{path}, []string{path}
	cfg.Level = zap.NewAtomicLevelAt(zapcore.Level(-v))
	cfg.Sampling = nil
	z, err := cfg.Build()
	if err != nil {
		return logr.Discard()
	}
	return zapr.NewLogger(z)
}
