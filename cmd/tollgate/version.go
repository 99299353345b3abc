package main

import (
	"fmt"
	"runtime/debug"

	opaversion "github.com/open-policy-agent/opa/v1/version"
	"github.com/spf13/cobra"
)

// Set with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = "unknown"
)

// moduleVersion returns the version of a dependency built into the binary.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and the Kubernetes and OPA versions built in",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(),
				"tollgate %s\ncommit: %s\nkubernetes (client-go): %s\nopa: %s\n",
				version, commit, moduleVersion("k8s.io/client-go"), opaversion.Version)
			return err
		},
	}
}
