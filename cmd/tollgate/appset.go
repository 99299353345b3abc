package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/check"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/reposerver/server"
)

func newApplicationSetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "appset",
		Aliases: []string{"applicationset"},
		Short:   "Work with ApplicationSets",
	}
	cmd.AddCommand(newAppSetGenerateCmd(), newAppSetGetCmd(), newAppSetListCmd(), newAppSetDeleteCmd())
	return cmd
}

// appSetGenerateOptions are the flags of `tollgate appset generate`.
type appSetGenerateOptions struct {
	check.AppSetOptions
	output string
}

func newAppSetGenerateCmd() *cobra.Command {
	o := appSetGenerateOptions{output: "yaml"}
	cmd := &cobra.Command{
		Use:   "generate FILE",
		Short: "Print the Applications the ApplicationSets of FILE generate, as the controller would",
		Long: `Generate the Applications of every ApplicationSet in FILE, as the controller
does, and print them, like argocd appset generate. Git generators read the
checkout at --repo-root when their repository is the one under test
(--repo-url, default the origin remote of --repo-root), whatever revision
they name; other repositories are refused. Clusters generators read the
Argo CD cluster Secrets of the --cluster files (the in-cluster destination
is always there, as in Argo CD). When the template names a project of
the --project files or of FILE, a git generator's repository must be one
that project permits (spec.sourceRepos, and spec.sourceNamespaces for an
ApplicationSet outside --argocd-namespace), as the controller requires
before it reads. Generators tollgate does not implement
(scmProvider, pullRequest, clusterDecisionResource, plugin) are refused
by name; a strategy (RollingSync) changes nothing of what is generated, as
with argocd appset generate. Templates run in a child process
under the repo-server's default render limits (90s, 1Gi).

Exit status: 0 when generated, 2 on an error (it names the file, the
ApplicationSet and the field).`,
		Example: `  tollgate appset generate argocd/appsets/guestbook.yaml
  tollgate appset generate --cluster clusters.yaml -o json appset.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAppSetGenerate(cmd, args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", o.output, "output format: yaml or json")
	f.StringVar(&o.RepoRoot, "repo-root", ".", "checkout git generators read for the repository under test")
	f.StringVar(&o.RepoURL, "repo-url", "", "URL of the repository under test (default: the origin remote of --repo-root)")
	f.StringArrayVar(&o.ClusterFiles, "cluster", nil, "`FILE` of Argo CD cluster Secrets for clusters generators (repeatable)")
	f.StringArrayVar(&o.ProjectFiles, "project", nil, "AppProject `FILE` whose sourceRepos the git generators' repositories must be in when the template names it (repeatable)")
	f.StringVar(&o.ArgoCDNamespace, "argocd-namespace", policies.DefaultArgoCDNamespace, "namespace Argo CD runs in")
	return cmd
}

func runAppSetGenerate(cmd *cobra.Command, file string, o appSetGenerateOptions) error {
	if o.output != "yaml" && o.output != "json" {
		return usageError(fmt.Errorf("invalid --output %q: valid formats are yaml, json", o.output))
	}
	// Templates run in a child of this binary under the render limits, as
	// in the repo-server: the file may be anybody's.
	r, err := newSandbox(server.DefaultLimits())
	if err != nil {
		return usageError(err)
	}
	o.Renderer = r
	sets, err := check.GenerateApplicationSets(cmd.Context(), file, o.AppSetOptions)
	if err != nil {
		return usageError(err)
	}
	var apps []any
	for _, s := range sets {
		for _, g := range s.Applications {
			apps = append(apps, g.Application)
		}
	}
	return writeApplications(cmd.OutOrStdout(), o.output, apps)
}

// writeApplications prints apps as YAML documents or as a JSON list.
func writeApplications(w io.Writer, format string, apps []any) error {
	if format == "json" {
		if apps == nil {
			apps = []any{}
		}
		b, err := json.MarshalIndent(apps, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	for i, a := range apps {
		b, err := yaml.Marshal(a)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
