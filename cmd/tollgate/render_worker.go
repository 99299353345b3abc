package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tollgate-dev/tollgate/reposerver/server"
)

// renderWorkerCmd is the name of the hidden subcommand a sandboxed render
// runs in: the controller re-runs its own binary with it.
const renderWorkerCmd = "render-worker"

func newRenderWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:    renderWorkerCmd,
		Short:  "Render one application source read from standard input (internal: the controller's render sandbox)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return server.Serve(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
}

// newSandbox renders in children of this very binary, under lim.
func newSandbox(lim server.Limits) (*server.Runner, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable for the render sandbox: %w", err)
	}
	return &server.Runner{Path: exe, Args: []string{renderWorkerCmd}, Limits: lim}, nil
}

// sandboxLimits are the render limits of --render-timeout and
// --render-memory (a Kubernetes quantity such as 1Gi).
func sandboxLimits(timeout time.Duration, memory string) (server.Limits, error) {
	if timeout <= 0 {
		return server.Limits{}, usageError(fmt.Errorf("invalid --render-timeout %s: must be positive", timeout))
	}
	mem, err := positiveQuantity("--render-memory", memory)
	if err != nil {
		return server.Limits{}, err
	}
	lim := server.DefaultLimits()
	lim.Timeout, lim.MemoryBytes = timeout, mem
	return lim, nil
}

// positiveQuantity parses the value of a size flag, a Kubernetes quantity
// such as 1Gi, as a positive number of bytes.
func positiveQuantity(flag, value string) (int64, error) {
	q, err := resource.ParseQuantity(value)
	if err != nil || q.Value() <= 0 {
		return 0, usageError(fmt.Errorf("invalid %s %q: want a positive quantity such as 1Gi", flag, value))
	}
	return q.Value(), nil
}

// defaultRenderMemory is the default of --render-memory.
const defaultRenderMemory = "1Gi"
