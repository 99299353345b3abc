package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/chartutil"
	kubeversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/tollgate-dev/tollgate/check"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/policies/report"
	"github.com/tollgate-dev/tollgate/reposerver/server"
)

// checkFlags are the flags tollgate test and tollgate diff share: what to
// check it with and how to render.
type checkFlags struct {
	check.Options
	// RenderTimeout and RenderMemory bound each Kustomize or Helm render,
	// which runs in a child process; zero values take the defaults.
	RenderTimeout time.Duration
	RenderMemory  string
	// KubeVersion and APIVersions fill check.Options.Capabilities.
	KubeVersion string
	APIVersions []string
	// Plugins are the --plugin NAME=COMMAND flags, for check.Options.Plugins.
	Plugins []string
	// argocdNS is --argocd-namespace, which overrides the configuration
	// only when given.
	argocdNS string
}

// testOptions are the flags of `tollgate test`: the check's and how to
// report.
type testOptions struct {
	checkFlags
	// Output is the report format; "" means text.
	Output string
	// FailOnWarn makes warnings fail the run.
	FailOnWarn bool
	// CPUProfile is where a CPU profile of the run is written (hidden:
	// for finding where a run's time goes, as docs/benchmarks.md does).
	CPUProfile string
}

func newTestCmd() *cobra.Command {
	o := testOptions{}
	cmd := &cobra.Command{
		Use:   "test [flags] PATH...",
		Short: "Check manifests, kustomizations, charts and Argo CD Applications against the policies",
		Long: `Check the Kubernetes manifests under PATH against tollgate's built-in rules and
your Rego policies, the way the admission webhook and the sync engine will.

Directories are walked (.yaml, .yml and .json files; .git and hidden
directories skipped). A directory with a kustomization is rendered with
kustomize and a directory with a Chart.yaml with Helm; their output replaces
their files. Remote Kustomize bases are fetched, and the charts of
helmCharts pulled, only with --allow-network; without it a note names each
one and its kustomization is not rendered.
AppProjects found anywhere, and those given with --project, form the
project set. An Application whose source repoURL is the repository under
test (--repo-url, by default the origin remote of the Git repository at
--repo-root) has its path rendered from the checkout exactly as Argo CD would,
and what it renders is checked in that Application's context. The
Applications of ApplicationSets are generated (git generators from the
checkout, clusters generators from the cluster Secrets under PATH and of
--cluster) and checked and rendered like Applications written by hand.

A file that does not decode, or a directory or Application that does not
render, is reported as an error result (ERROR in the text format) and the
rest is still judged.

Exit status: 0 when nothing is denied, 1 when something is (or, with
--fail-on-warn, warned), 2 on usage errors, bad policies or configuration,
or when something could not be decoded or rendered (after the report).`,
		Example: `  tollgate test .
  tollgate test -o github --repo-url https://github.com/org/config.git apps/ argocd/
  tollgate test --policy policy/ --namespace main --fail-on-warn manifests/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Paths = args
			return runTest(cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", report.FormatText, "report format: "+strings.Join(report.Formats(), ", "))
	f.BoolVar(&o.FailOnWarn, "fail-on-warn", false, "exit 1 on warnings too")
	f.StringVar(&o.RepoRoot, "repo-root", ".", "checkout the Applications' paths are rendered from")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "write a Go CPU profile of the run to `FILE`")
	_ = f.MarkHidden("cpuprofile")
	o.register(f)
	return cmd
}

// register adds the shared flags to f.
func (o *checkFlags) register(f *pflag.FlagSet) {
	f.StringVar(&o.ConfigFile, "config", "", "policy configuration `FILE` (rule severities, exemption annotation, Argo CD namespace)")
	f.StringArrayVar(&o.PolicyDirs, "policy", nil, "`DIR` of user Rego policies (repeatable)")
	f.StringArrayVar(&o.Namespaces, "namespace", nil, "user policy package to use, e.g. main (repeatable; default all)")
	f.BoolVar(&o.NoBuiltin, "no-builtin", false, "turn the built-in rules off")
	f.BoolVar(&o.AllowNetwork, "allow-network", false, "let user policies call http.send, net.* and opa.runtime, fetch the remote Kustomize bases of the kustomizations rendered and pull the charts of their helmCharts")
	f.StringArrayVar(&o.HelmValues, "helm-values", nil, "values `FILE` for the Helm charts found under PATH (repeatable)")
	f.StringArrayVar(&o.Projects, "project", nil, "AppProject `FILE` added to the project set (repeatable)")
	f.StringArrayVar(&o.ClusterFiles, "cluster", nil, "`FILE` of Argo CD cluster Secrets for the clusters generators of ApplicationSets, beside those under PATH (repeatable)")
	f.StringVar(&o.RepoURL, "repo-url", "", "URL of the repository under test (default: the origin remote of --repo-root)")
	f.DurationVar(&o.RenderTimeout, "render-timeout", server.DefaultLimits().Timeout, "wall-clock limit of one Kustomize or Helm render, or ApplicationSet generation (each runs in a child process, killed at the limit; exit 2)")
	f.StringVar(&o.RenderMemory, "render-memory", defaultRenderMemory, "memory limit of one Kustomize or Helm render's, or ApplicationSet generation's, child process (a Kubernetes quantity)")
	f.StringVar(&o.KubeVersion, "kube-version", "", "Kubernetes version Helm charts render against, in place of the destination cluster's (default: the Helm SDK's, "+chartutil.DefaultCapabilities.KubeVersion.Version+")")
	f.StringArrayVar(&o.APIVersions, "api-versions", nil, "API version charts see in .Capabilities.APIVersions, \"group/version\" or \"group/version/Kind\" (repeatable; added to the Helm SDK's)")
	f.StringVar(&o.KustomizeBuildOptions, "kustomize-build-options", "", "argocd-cm's kustomize.buildOptions, the `FLAGS` of kustomize build every Kustomize render gets (--load-restrictor, --reorder, --enable-managedby-label, --enable-helm and --helm-*; others are refused by name)")
	f.StringArrayVar(&o.Plugins, "plugin", nil, "`NAME=COMMAND`: run COMMAND with sh -c in the source's directory in place of the config management plugin NAME (spec.source.plugin.name), with the variables Argo CD gives plugins; its standard output is the manifests (repeatable; other plugins are not run, a note names them)")
	f.StringVar(&o.argocdNS, "argocd-namespace", policies.DefaultArgoCDNamespace, "namespace Argo CD runs in (overrides the configuration)")
}

// testMemoryLimit is the soft memory limit of a `tollgate test` run unless
// GOMEMLIMIT sets one. A run holds every decoded document until evaluation
// starts (judge then releases them chunk by chunk), and the garbage of
// decoding and evaluation would otherwise let the heap grow to twice that;
// the limit keeps a run over 10,000 documents under about 190 MiB of RSS at
// the cost of some more collections. It is soft: a larger repository still
// gets the memory it needs.
const testMemoryLimit = 120 << 20

// runTest checks, writes the report and returns the exit status as an
// error: nil, deniedError or usageError.
func runTest(cmd *cobra.Command, o testOptions) error {
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(testMemoryLimit))
	}
	if o.CPUProfile != "" {
		stop, err := startCPUProfile(o.CPUProfile)
		if err != nil {
			return usageError(err)
		}
		defer stop()
	}
	format := cmp.Or(o.Output, report.FormatText)
	if !slices.Contains(report.Formats(), format) {
		return usageError(fmt.Errorf("invalid --output %q: valid formats are %s", format, strings.Join(report.Formats(), ", ")))
	}
	opts, err := o.options(cmd)
	if err != nil {
		return err
	}
	rep, notes, err := check.Run(cmd.Context(), opts)
	if err != nil {
		return checkError(err)
	}
	if format == report.FormatText {
		writeNotes(cmd.ErrOrStderr(), notes)
	}
	rep.ToolVersion = version
	if err := report.Write(cmd.OutOrStdout(), format, rep); err != nil {
		return err
	}
	if n := rep.Summary.Errors; n > 0 {
		return usageError(fmt.Errorf("%d of the files, directories and Applications checked could not be decoded or rendered; the report lists them, and everything else was judged", n))
	}
	if rep.Summary.Denied > 0 || o.FailOnWarn && rep.Summary.Warned > 0 {
		return deniedError()
	}
	return nil
}

// checkError is the exit status of an error of the check: 2 for what it
// was given, the error itself (interrupted) otherwise.
func checkError(err error) error {
	var ie *check.InputError
	if errors.As(err, &ie) {
		return usageError(err)
	}
	return err
}

// options turns the shared flags into the check's options: the Argo CD
// namespace when given, the capabilities, the plugins, and the sandbox
// every Kustomize and Helm render runs in. Its errors carry exit status 2.
func (o checkFlags) options(cmd *cobra.Command) (check.Options, error) {
	if cmd.Flags().Changed("argocd-namespace") {
		o.ArgoCDNamespace = o.argocdNS
	}
	if o.KubeVersion != "" {
		v, err := kubeversion.ParseGeneric(o.KubeVersion)
		if err != nil {
			return check.Options{}, usageError(fmt.Errorf("invalid --kube-version %q: %w", o.KubeVersion, err))
		}
		o.Capabilities.KubeVersion = v.String()
	}
	o.Capabilities.APIVersions = o.APIVersions
	for _, p := range o.Plugins {
		name, command, ok := strings.Cut(p, "=")
		if !ok || name == "" || strings.TrimSpace(command) == "" {
			return check.Options{}, usageError(fmt.Errorf("invalid --plugin %q: want NAME=COMMAND", p))
		}
		if _, dup := o.Options.Plugins[name]; dup {
			return check.Options{}, usageError(fmt.Errorf("invalid --plugin %q: plugin %s is given twice", p, name))
		}
		if o.Options.Plugins == nil {
			o.Options.Plugins = map[string]string{}
		}
		o.Options.Plugins[name] = command
	}
	lim, err := sandboxLimits(cmp.Or(o.RenderTimeout, server.DefaultLimits().Timeout), cmp.Or(o.RenderMemory, defaultRenderMemory))
	if err != nil {
		return check.Options{}, err
	}
	// Kustomize overlays and Helm charts render in children of this
	// binary, as the controller's do, so a hostile chart in a pull request
	// cannot hang or exhaust the CI runner.
	if o.Renderer, err = newSandbox(lim); err != nil {
		return check.Options{}, usageError(err)
	}
	return o.Options, nil
}

// startCPUProfile starts writing a CPU profile to path; stop ends it.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// writeNotes prints the notes as "note: ..." lines.
func writeNotes(w io.Writer, notes []check.Note) {
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
