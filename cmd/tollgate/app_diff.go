package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/server"
	"github.com/tollgate-dev/tollgate/reposerver/source"
)

// appDiffOptions are the flags of `tollgate app diff`.
type appDiffOptions struct {
	appTarget
	repoOptions
	revision string
	exitCode bool
	// local and localRoot: render the files of local, inside the
	// repository checkout localRoot, instead of fetching from Git.
	local, localRoot string
	// configFile is the controller's policy configuration (--config),
	// which the diff is judged with.
	configFile string
	// trackingMethod is the controller's (--tracking-method); it
	// overrides the trackingMethod of configFile.
	trackingMethod string
}

func newAppDiffCmd() *cobra.Command {
	o := appDiffOptions{repoOptions: defaultRepoOptions(), exitCode: true}
	cmd := &cobra.Command{
		Use:   "diff NAME",
		Short: "Show how an Application's desired state differs from the live one, like argocd app diff",
		Long: `Show how the live objects of the Application NAME differ from its desired
state, as the controller compares them: its sources fetched at their target
revisions and rendered in this process (each render in a child process, with
the repository credentials of the Argo CD Secrets in --namespace), hooks and
ignored objects left out, each object dry-run applied server-side with the
controller's field manager, the Application's ignoreDifferences honoured.
Live objects the Application tracks that it no longer renders (what a sync
with prune deletes) are shown as removed. Nothing is changed.

Live objects are read only when the Application's AppProject permits them,
as a sync writes them: its destination, every desired object and every
live object to prune must pass the boundary rules (project-destination-
denied, project-resource-denied, protected-namespace; a missing project
permits nothing), judged with the policy configuration of --config (the
controller's: protected namespaces, exemptions, implicitDefaultProject).
Otherwise nothing is shown, and the error names each object and rule.

Each object that differs gets a header line
"===== GROUP/KIND NAMESPACE/NAME ======" and a unified diff from its live
YAML to its desired YAML, without status and server-maintained metadata;
coloured when standard output is a terminal and NO_COLOR is not set.
Secret values are masked (++++++++); a changed value shows as a mask of
another length.

With --local DIR, the files of DIR are rendered instead of the source's
path in Git, as argocd app diff --local does (single-source Applications
only); --local-repo-root names the checkout DIR is part of (default: DIR
itself), which Kustomize bases and Helm value files may reach into.

Without --repo-cache, repositories are cloned into a temporary directory
removed afterwards.

Exit status: 0 when nothing differs; 1 when something differs (0 with
--exit-code=false); 2 on usage errors, when the Application does not exist,
when its sources or the cluster cannot be read, or when its project does
not permit the diff.`,
		Example: `  tollgate app diff guestbook
  tollgate app diff guestbook --revision feature-x --kubeconfig .tollgate/kubeconfig
  tollgate app diff guestbook --exit-code=false | less
  tollgate app diff guestbook --local apps/guestbook/overlays/dev --local-repo-root .`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return runAppDiff(cmd, o)
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.StringVar(&o.revision, "revision", "", "compare with this Git revision instead of the target revision (the first source's, for several)")
	f.BoolVar(&o.exitCode, "exit-code", true, "exit with status 1 when something differs")
	f.StringVar(&o.local, "local", "", "render the files of `DIR` instead of the source's path in Git")
	f.StringVar(&o.localRoot, "local-repo-root", "", "with --local, the repository checkout `DIR` that --local is part of (default: --local)")
	f.StringVar(&o.configFile, "config", "", "the controller's policy configuration `FILE` (protected namespaces, exemptions, implicitDefaultProject, trackingMethod), which the diff is judged with")
	f.StringVar(&o.trackingMethod, "tracking-method", "", "the controller's tracking method, which marks desired objects and finds those to prune: annotation, label or annotation+label (default: trackingMethod of --config, else annotation)")
	addRepoFlags(f, &o.repoOptions)
	return cmd
}

// runAppDiff reads the Application, compares it and prints the difference.
func runAppDiff(cmd *cobra.Command, o appDiffOptions) error {
	ctx := cmd.Context()
	comp, err := openComparison(ctx, o)
	if err != nil {
		return err
	}
	defer comp.close()
	d, err := comp.differ.Diff(ctx, comp.app)
	if err != nil {
		return fmt.Errorf("diff application %s: %w", o.name, err)
	}
	for _, w := range d.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
	}
	out := cmd.OutOrStdout()
	if err := writeAppDiff(out, d, colorful(out)); err != nil {
		return err
	}
	if o.exitCode && d.Modified() {
		return deniedError()
	}
	return nil
}

// appComparison is an Application read for a comparison with its desired
// state, at the revision (or the local files) asked for, and the Differ
// that compares it as the controller does.
type appComparison struct {
	app    *v1alpha1.Application
	differ *application.Differ
	// close releases the Differ and the repository cache.
	close func()
}

// openComparison checks o, reads the Application, points it at
// o.revision or o.local, and opens a Differ with the controller's policy
// configuration and a repository service (app diff's and app manifests').
func openComparison(ctx context.Context, o appDiffOptions) (*appComparison, error) {
	if _, err := o.check(); err != nil {
		return nil, err
	}
	if o.local != "" && o.revision != "" {
		return nil, usageError(errors.New("--local and --revision cannot be used together"))
	}
	if o.localRoot != "" && o.local == "" {
		return nil, usageError(errors.New("--local-repo-root needs --local"))
	}
	pol, eval, err := loadEnginePolicies(ctx, o.configFile, o.namespace, o.trackingMethod)
	if err != nil {
		return nil, err
	}
	c, kc, err := newAppClient(o.kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	app, err := readApp(ctx, c, o.key())
	if err != nil {
		return nil, err
	}
	setRevision(app, o.revision)
	svc, cleanup, err := diffManifests(app, o)
	if err != nil {
		return nil, err
	}
	opts := application.DefaultOptions()
	opts.Namespace, opts.ImplicitDefaultProject = o.namespace, pol.ImplicitDefaultProject
	if pol.TrackingMethod != "" {
		opts.TrackingMethod = v1alpha1.TrackingMethod(pol.TrackingMethod)
	}
	d, err := application.NewDiffer(application.DiffDependencies{Client: c, Config: kc.rest, Scheme: scheme, Manifests: svc, Evaluator: eval}, opts)
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("compare application %s: %w", o.name, err)
	}
	return &appComparison{app: app, differ: d, close: func() { d.Close(); cleanup() }}, nil
}

// diffManifests returns the repository service of the diff and a function
// that removes what it leaves behind: a Git cache in --repo-cache (a
// temporary directory without it), or with --local the local files, in
// which case app's source is pointed at them.
func diffManifests(app *v1alpha1.Application, o appDiffOptions) (reposerver.Generator, func(), error) {
	if o.local != "" {
		root, err := useLocal(app, o.local, o.localRoot)
		if err != nil {
			return nil, nil, err
		}
		rs, err := o.check()
		if err != nil {
			return nil, nil, err
		}
		runner, err := newSandbox(rs.limits)
		if err != nil {
			return nil, nil, err
		}
		ropts := server.DefaultOptions()
		ropts.Renderer = runner
		svc, err := server.New(localSource{root: root}, ropts)
		return svc, func() {}, err
	}
	cleanup := func() {}
	if o.repoCache == "" {
		dir, err := os.MkdirTemp("", "tollgate-diff-")
		if err != nil {
			return nil, nil, fmt.Errorf("create repository cache: %w", err)
		}
		o.repoCache = dir
		cleanup = func() { os.RemoveAll(dir) }
	}
	svc, err := newRepoService(o.repoOptions, nil)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return svc, cleanup, nil
}

// localRevision is the revision of --local files.
const localRevision = "local"

// localSource serves the directory root as the checkout of every
// repository, for --local.
type localSource struct{ root string }

func (l localSource) Fetch(context.Context, string, string, reposerver.Credentials, ...source.FetchOption) (source.Checkout, error) {
	return source.Checkout{Dir: l.root, Revision: localRevision}, nil
}

// useLocal points app's single source at dir, which must be a directory
// inside root (default: dir itself), and returns root as an absolute path.
func useLocal(app *v1alpha1.Application, dir, root string) (string, error) {
	if app.Spec.HasMultipleSources() || app.Spec.Source == nil {
		return "", usageError(errors.New("--local needs an application with one source (spec.source)"))
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", usageError(fmt.Errorf("--local %s: not a directory", dir))
	}
	if root == "" {
		root = dir
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", usageError(fmt.Errorf("--local %s: %w", dir, err))
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", usageError(fmt.Errorf("--local-repo-root %s: %w", root, err))
	}
	rel, err := filepath.Rel(absRoot, absDir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", usageError(fmt.Errorf("--local %s is not inside --local-repo-root %s", dir, root))
	}
	app.Spec.Source.Path = filepath.ToSlash(rel)
	return absRoot, nil
}

// setRevision points the Application's source (the first of several) at
// revision, as app sync --revision does; an empty revision changes nothing.
func setRevision(app *v1alpha1.Application, revision string) {
	switch {
	case revision == "":
	case app.Spec.HasMultipleSources():
		app.Spec.Sources[0].TargetRevision = revision
	case app.Spec.Source != nil:
		app.Spec.Source.TargetRevision = revision
	}
}

// colorful reports whether w is a terminal and NO_COLOR is unset or empty
// (https://no-color.org).
func colorful(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && os.Getenv("NO_COLOR") == "" && term.IsTerminal(int(f.Fd()))
}

// ANSI colours of a diff.
const (
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiCyan  = "\x1b[36m"
	ansiReset = "\x1b[0m"
)

// writeAppDiff prints each object that differs, in d's order, as Argo CD's
// app diff does: a header line, then a unified diff from the live YAML to
// the desired YAML (or the dry run's rejection), coloured with color.
// Objects are separated by an empty line; nothing is printed when nothing
// differs.
func writeAppDiff(w io.Writer, d *application.AppDiff, color bool) error {
	bw := bufio.NewWriter(w)
	first := true
	for _, o := range d.Objects {
		if !o.Modified {
			continue
		}
		if !first {
			bw.WriteString("\n")
		}
		first = false
		fmt.Fprintf(bw, "===== %s/%s %s/%s ======\n", o.Ref.Group, o.Ref.Kind, o.Ref.Namespace, o.Ref.Name)
		if o.Error != "" {
			fmt.Fprintf(bw, "dry run rejected: %s\n", o.Error)
			continue
		}
		text, err := o.UnifiedDiff()
		if err != nil {
			return fmt.Errorf("diff %s: %w", o.Ref, err)
		}
		writeColored(bw, text, color)
	}
	return bw.Flush()
}

// writeColored writes a unified diff, with removed lines red, added lines
// green and hunk headers cyan when color is set.
func writeColored(w *bufio.Writer, text string, color bool) {
	if !color {
		w.WriteString(text)
		return
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for n, line := range lines {
		var c string
		switch {
		case n < 2: // the --- and +++ file headers
		case strings.HasPrefix(line, "@@"):
			c = ansiCyan
		case strings.HasPrefix(line, "-"):
			c = ansiRed
		case strings.HasPrefix(line, "+"):
			c = ansiGreen
		}
		if c == "" {
			w.WriteString(line)
		} else {
			w.WriteString(c + line + ansiReset)
		}
		w.WriteString("\n")
	}
}
