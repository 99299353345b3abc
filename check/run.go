package check

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/policies/report"
	"github.com/tollgate-dev/tollgate/reposerver/chart"
	"github.com/tollgate-dev/tollgate/reposerver/render"
	"github.com/tollgate-dev/tollgate/reposerver/server"
	"github.com/tollgate-dev/tollgate/reposerver/source"
)

// Options are the settings of a check, the flags of `tollgate test`.
type Options struct {
	// Paths are the files and directories to check.
	Paths []string
	// RepoRoot is the checkout Applications render from; "" means ".".
	RepoRoot string
	// RepoURL is the URL of the repository under test; "" means the origin
	// remote of the Git repository containing RepoRoot.
	RepoURL string
	// ArgoCDNamespace overrides the configuration's; "" keeps it.
	ArgoCDNamespace string
	// Projects are files of AppProjects added to the project set.
	Projects []string
	// HelmValues are value files for the charts found by walking.
	HelmValues []string
	// ConfigFile is the policy configuration file, "" for none.
	ConfigFile string
	// PolicyDirs are directories of user Rego policies.
	PolicyDirs []string
	// Namespaces restricts the user policy packages used.
	Namespaces []string
	// NoBuiltin turns the built-in rules off.
	NoBuiltin bool
	// AllowNetwork lets user policies call http.send, net.* and
	// opa.runtime, and has the remote Kustomize bases of the
	// kustomizations rendered fetched (RemoteBases) and the charts of
	// their helmCharts pulled (Charts); without it such a base or chart
	// is a note and its kustomization is not rendered.
	AllowNetwork bool
	// RemoteBases fetches the repositories of remote Kustomize bases when
	// AllowNetwork is set (the repository under test is read from its
	// checkout); nil fetches them anonymously into a temporary directory
	// removed when Run returns (source.NewCache, default options).
	RemoteBases server.Fetcher
	// Charts pulls the charts of kustomizations' helmCharts when
	// AllowNetwork is set; nil pulls them into a temporary directory
	// removed when Run returns (chart.New, default options).
	Charts *chart.Cache
	// Capabilities are the Kubernetes version and API versions Helm charts
	// render against (`helm template --kube-version --api-versions`), in
	// place of a destination cluster's; an Application's source overrides
	// them as in Argo CD. Empty fields keep the Helm SDK's defaults.
	Capabilities render.Capabilities
	// KustomizeBuildOptions are argocd-cm's kustomize.buildOptions, given
	// to every Kustomize render (--kustomize-build-options).
	KustomizeBuildOptions string
	// Plugins are local commands run in place of config management
	// plugins, by plugin name (--plugin NAME=COMMAND); a plugin source
	// whose plugin is not here is a note.
	Plugins map[string]string
	// Revision is the commit RepoRoot holds, Argo CD's ARGOCD_APP_REVISION
	// when Applications render; "" reads it from the checkout's HEAD.
	// tollgate diff sets it for a revision written out of Git.
	Revision string
	// Renders, when set, keeps the Applications' renders, and may give
	// an Application one kept from an earlier run instead of rendering it
	// (RenderMemo.Reuse decides).
	Renders *RenderMemo
	// ClusterFiles hold Argo CD cluster Secrets for the clusters generators
	// of ApplicationSets, beside those found under Paths.
	ClusterFiles []string
	// Renderer renders Kustomize overlays and Helm charts and generates
	// ApplicationSets, such as a *server.Runner that evaluates each in a
	// child process under limits; nil evaluates them in process
	// (render.Build, appset.Generate). Plain directories are always
	// decoded in process, under the decoder's own limits.
	Renderer Renderer
}

// InputError is an error in what Run was given: options, unreadable or
// malformed files, a render failure (a render that passed its limits holds
// a *server.LimitError), an Application tollgate refuses (a
// *render.UnsupportedError) or policies that do not compile or evaluate.
// Its message is that of Err, which names the file. tollgate test exits 2
// on it.
type InputError struct {
	Err error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// compiled is the outcome of compiling the policies.
type compiled struct {
	ev       *policies.Evaluator
	argocdNS string
	err      error
}

// gathered is everything tollgate test reviews together.
type gathered struct {
	// entries are the documents to evaluate, sorted by file, index and
	// line.
	entries []entry
	// projects are the AppProjects of --project files.
	projects []map[string]any
	// files are the reported names of the files read, including files
	// without documents.
	files map[string]bool
	notes []Note
	// failures are the error results of what could not be decoded or
	// rendered: walked files and directories, and Applications.
	failures []report.Result
}

// Run is `tollgate test` without its output: it finds the documents under
// o.Paths, renders kustomizations, charts and the Applications of the
// repository under test, evaluates every document and builds the report,
// with one result per checked document (the caller sets ToolVersion). The
// notes are remarks about skipped input, in a stable order; the text
// report prints them.
//
// Every error is an *InputError naming the file, except the context's
// when ctx is done; policy and configuration errors are reported before
// errors in the files.
func Run(ctx context.Context, o Options) (report.Report, []Note, error) {
	s, err := snapshot(ctx, o, false)
	return s.Report, s.Notes, err
}

// Snapshot is what Run found, with the objects behind the report's results.
type Snapshot struct {
	Report report.Report
	Notes  []Note
	// Objects are the documents judged, each with its result (the
	// report's results but the error results, in the same order), as
	// decoded or rendered.
	Objects []Checked
}

// Checked is one judged document: its result and its object.
type Checked struct {
	Result report.Result
	Object map[string]any
}

// Take is Run keeping the object of every result, for tollgate diff,
// which compares two snapshots.
func Take(ctx context.Context, o Options) (Snapshot, error) {
	return snapshot(ctx, o, true)
}

// snapshot is Run, and Take when objects is set.
func snapshot(ctx context.Context, o Options, objects bool) (Snapshot, error) {
	s, err := run(ctx, o, objects)
	if err != nil && ctx.Err() == nil {
		return Snapshot{}, &InputError{Err: err}
	}
	return s, err
}

// run is snapshot with the errors unmarked.
func run(ctx context.Context, o Options, objects bool) (Snapshot, error) {
	lim := render.DefaultLimits()
	if len(o.Paths) == 0 {
		return Snapshot{}, errors.New("check: no paths given")
	}
	if o.NoBuiltin && len(o.PolicyDirs) == 0 {
		return Snapshot{}, errors.New("check: --no-builtin without --policy leaves no rules to check")
	}
	// Compiling the policies overlaps with reading the files.
	compileCh := make(chan compiled, 1)
	go func() {
		ev, ns, err := newEvaluator(ctx, o)
		compileCh <- compiled{ev: ev, argocdNS: ns, err: err}
	}()
	g, gatherErr := gather(ctx, o, lim)
	c := <-compileCh
	switch {
	case c.err != nil:
		return Snapshot{}, c.err
	case gatherErr != nil:
		return Snapshot{}, gatherErr
	}
	return judge(ctx, c, g, lim, objects)
}

// gather reads, renders and collects the documents under o.Paths and the
// Applications' sources.
func gather(ctx context.Context, o Options, lim render.Limits) (gathered, error) {
	g := gathered{files: map[string]bool{}}
	rootDir := cmp.Or(o.RepoRoot, ".")
	root, err := openRepoRoot(rootDir)
	if err != nil {
		return g, err
	}
	if o.Revision != "" {
		root.revision = o.Revision
	}
	repoURL, unrendered, err := repositoryURL(o.RepoURL, root, rootDir)
	if err != nil {
		return g, err
	}
	build := o.builder()
	helmValues, err := loadHelmValues(o.HelmValues, lim)
	if err != nil {
		return g, err
	}
	network, charts, done, err := o.network()
	if err != nil {
		return g, err
	}
	defer done()
	co := checkout{root: root, repoURL: repoURL}
	svc, err := newAppService(co, checkout{root: root, repoURL: repoURL, network: network}, charts, localRenderer{r: o.Renderer, buildOptions: o.KustomizeBuildOptions}, o.Plugins, lim)
	if err != nil {
		return g, err
	}
	if g.projects, err = loadProjects(o.Projects, lim); err != nil {
		return g, err
	}
	units, walkNotes, err := discover(root, o.Paths, helmValues != nil)
	if err != nil {
		return g, err
	}
	g.notes = append(g.notes, walkNotes...)
	remote := func(ctx context.Context, root, dir string, opts render.Options) (render.Options, error) {
		opts.KustomizeBuildOptions = o.KustomizeBuildOptions
		return svc.FetchRemote(ctx, root, dir, opts)
	}
	ld := unitLoader{helmValues: helmValues, build: build, bases: remote, lim: lim}
	loaded, err := ld.loadWalked(ctx, root, repoURL, units)
	if err != nil {
		return g, err
	}
	var walked []entry
	for _, l := range loaded {
		walked = append(walked, l.entries...)
	}
	// The Applications of the ApplicationSets found are judged and
	// rendered like Applications written by hand.
	secrets, err := clusterSecrets(o.ClusterFiles, walked, lim)
	if err != nil {
		return g, err
	}
	// AppProjects of --project files and under PATH judge the git
	// generators' repositories, as the controller does.
	projects := slices.Clone(g.projects)
	for _, e := range walked {
		if isKind(e.doc.Object, v1alpha1.Group, v1alpha1.AppProjectKind) {
			projects = append(projects, e.doc.Object)
		}
	}
	controlNS := cmp.Or(argoCDNamespace(o), policies.DefaultArgoCDNamespace)
	known, err := newAppSetProjects(controlNS, projects)
	if err != nil {
		return g, err
	}
	generated, setFailures, setNotes := expandApplicationSets(ctx, generator(o.Renderer), walked, newAppSetSources(root, repoURL, secrets), known)
	g.failures = append(g.failures, setFailures...)
	g.notes = append(g.notes, setNotes...)
	walked = append(walked, generated...)
	appEntries, cl, appNotes, appFailures, err := renderApplications(ctx, svc, root, controlNS, o.Capabilities, known, repoURL != "", o.Renders, walked)
	if err != nil {
		return g, err
	}
	if repoURL == "" && len(applications(walked)) > 0 {
		g.notes = append(g.notes, Note{Message: unrendered})
	}
	if err := ld.loadUnclaimed(ctx, root, cl, loaded); err != nil {
		return g, err
	}
	// What an Application rendered replaces the walked copy of the same
	// files: it is what Argo CD deploys, checked in its context.
	for _, l := range loaded {
		if l.unit.kind == unitFile {
			g.files[l.unit.display(l.unit.rel)] = true
		}
		if cl.claimsUnit(root, l.unit) {
			continue
		}
		if l.err != nil {
			g.failures = append(g.failures, unitFailure(l))
			continue
		}
		g.notes = append(g.notes, l.notes...)
		for _, e := range l.entries {
			if !cl.claimsEntry(root, e) {
				g.entries = append(g.entries, e)
			}
		}
	}
	g.entries = append(g.entries, generated...)
	g.entries = append(g.entries, appEntries...)
	g.notes = append(g.notes, appNotes...)
	g.notes = append(g.notes, signatureNote(g)...)
	g.failures = append(g.failures, appFailures...)
	slices.SortStableFunc(g.entries, func(a, b entry) int {
		return cmp.Or(strings.Compare(a.file, b.file), cmp.Compare(a.doc.Index, b.doc.Index), cmp.Compare(a.doc.Line, b.doc.Line))
	})
	return g, nil
}

// network is what fetches the remote Kustomize bases of other
// repositories than the one under test, and the charts of helmCharts: nil
// without AllowNetwork, else RemoteBases and Charts, or caches in a
// temporary directory that done removes.
func (o Options) network() (f server.Fetcher, charts *chart.Cache, done func(), err error) {
	if !o.AllowNetwork {
		return nil, nil, func() {}, nil
	}
	f, charts, done = o.RemoteBases, o.Charts, func() {}
	if f != nil && charts != nil {
		return f, charts, done, nil
	}
	dir, err := os.MkdirTemp("", "tollgate-bases-")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("create the cache of remote bases: %w", err)
	}
	done = func() { _ = os.RemoveAll(dir) }
	if f == nil {
		if f, err = source.NewCache(filepath.Join(dir, "git"), source.DefaultOptions()); err != nil {
			done()
			return nil, nil, nil, err
		}
	}
	if charts == nil {
		if charts, err = chart.New(chart.Options{Dir: filepath.Join(dir, "charts")}); err != nil {
			done()
			return nil, nil, nil, err
		}
	}
	return f, charts, done, nil
}

// evalChunk is about how many documents judge evaluates at a time before
// it turns their decisions into results and lets go of their objects.
const evalChunk = 512

// judge evaluates the gathered documents together and builds the report.
// The inputs are built from every document at once (AppProjects, CRDs and
// HPAs anywhere change the review of others), then evaluated a chunk of
// files at a time: the objects of a chunk are released as soon as its
// results are built, so the live heap shrinks while the evaluator
// allocates, instead of every document staying live to the end.
func judge(ctx context.Context, c compiled, g gathered, lim render.Limits, objects bool) (Snapshot, error) {
	inputs, scopeNotes := buildInputs(c.argocdNS, g)
	g.notes = append(g.notes, scopeNotes...)
	results := make([]report.Result, 0, len(g.entries))
	var checked []Checked
	var keep func(report.Result, map[string]any)
	if objects {
		keep = func(r report.Result, obj map[string]any) { checked = append(checked, Checked{Result: r, Object: obj}) }
	}
	seen := map[string]bool{}
	for start := 0; start < len(g.entries); {
		end := chunkEnd(g.entries, start, evalChunk)
		entries := g.entries[start:end]
		decisions, err := c.ev.EvaluateAll(ctx, inputs[start:end])
		if err != nil {
			return Snapshot{}, evaluationError(err, entries)
		}
		if results, err = buildResults(ctx, results, seen, entries, decisions, lim, keep); err != nil {
			return Snapshot{}, err
		}
		clear(inputs[start:end])
		for i := range entries {
			entries[i].doc.Object = nil
		}
		start = end
	}
	// What could not be checked is reported in file order with the rest.
	results = append(results, g.failures...)
	slices.SortStableFunc(results, compareResults)
	slices.SortStableFunc(checked, func(a, b Checked) int { return compareResults(a.Result, b.Result) })
	for _, r := range results {
		g.files[r.File] = true
	}
	summary := report.Summarize(results)
	summary.Files = len(g.files)
	rep := report.Report{
		Results:          results,
		Summary:          summary,
		RuleDescriptions: ruleDescriptions(),
	}
	return Snapshot{Report: rep, Notes: uniqueNotes(g.notes), Objects: checked}, nil
}

// compareResults orders results by file, document and line.
func compareResults(a, b report.Result) int {
	return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Document, b.Document), cmp.Compare(a.Line, b.Line))
}

// buildInputs builds the inputs of all gathered documents, in entry order,
// and a note for each kind it cannot place (cluster-scoped or namespaced)
// without a cluster: neither a built-in kind nor one a CRD among the
// documents declares. The AppProjects among the documents join the
// --project files, and a missing "default" project is Argo CD's implicit
// one, which every Argo CD creates when it starts.
func buildInputs(argocdNS string, g gathered) ([]policies.Input, []Note) {
	items := make([]policies.Item, len(g.entries))
	for i, e := range g.entries {
		items[i] = policies.Item{Object: e.doc.Object, Application: e.app}
	}
	ins := policies.BuildInputs(policies.InputOptions{
		Point:                  policies.PointCLI,
		ArgoCDNamespace:        argocdNS,
		Projects:               g.projects,
		ProjectsFromItems:      true,
		ImplicitDefaultProject: true,
	}, items)
	var notes []Note
	for i, in := range ins {
		if !in.Context.KindUnplaced {
			continue
		}
		apiVersion, _ := in.Object["apiVersion"].(string)
		kind, _ := in.Object["kind"].(string)
		e := g.entries[i]
		notes = append(notes, Note{File: e.file, Line: e.doc.Line, Message: fmt.Sprintf(
			"%s %s: cannot tell whether the kind is cluster-scoped (no CRD for it among the manifests); judged as namespaced", apiVersion, kind)})
	}
	return ins, notes
}

// chunkEnd returns the end of the chunk of entries starting at start: at
// least size entries (or the rest), extended to the end of the last file so
// that a file's documents are evaluated, and its lines found, together.
func chunkEnd(entries []entry, start, size int) int {
	end := min(start+size, len(entries))
	for end < len(entries) && entries[end].file == entries[end-1].file {
		end++
	}
	return end
}

// argoCDNamespace is the Argo CD namespace of o: --argocd-namespace, else
// the configuration's, else "argocd". A configuration that does not load
// is newEvaluator's error to report.
func argoCDNamespace(o Options) string {
	cfg, err := o.policyConfig()
	if err != nil {
		return o.ArgoCDNamespace
	}
	return cfg.ArgoCDNamespace
}

// policyConfig is the policy configuration of o: ConfigFile with
// --argocd-namespace over it.
func (o Options) policyConfig() (policies.Config, error) {
	return policies.LoadConfigWith(o.ConfigFile, policies.ConfigOverrides{ArgoCDNamespace: o.ArgoCDNamespace})
}

// newEvaluator loads the configuration and compiles the policies once. It
// returns the Argo CD namespace in effect.
func newEvaluator(ctx context.Context, o Options) (*policies.Evaluator, string, error) {
	cfg, err := o.policyConfig()
	if err != nil {
		return nil, "", err
	}
	opts := policies.DefaultOptions()
	opts.Builtin = !o.NoBuiltin
	opts.PolicyDirs = o.PolicyDirs
	opts.Namespaces = o.Namespaces
	opts.AllowNetwork = o.AllowNetwork
	opts.Config = cfg
	ev, err := policies.New(ctx, opts)
	if err != nil {
		return nil, "", err
	}
	return ev, cmp.Or(cfg.ArgoCDNamespace, policies.DefaultArgoCDNamespace), nil
}

// evaluationError names the document behind an EvaluateAll error on one
// input (a *policies.InputError).
func evaluationError(err error, entries []entry) error {
	var ie *policies.InputError
	if errors.As(err, &ie) && ie.Index >= 0 && ie.Index < len(entries) {
		e := entries[ie.Index]
		where := fmt.Sprintf("%s: document %d", location(e.file, e.doc.Line), e.doc.Index+1)
		return &locatedError{where: where, msg: ie.Err.Error(), err: err}
	}
	return err
}

// locatedError is an error of another layer with its message rewritten to
// name where it happened. It unwraps to the original error.
type locatedError struct {
	where, msg string
	err        error
}

func (e *locatedError) Error() string { return e.where + ": " + e.msg }
func (e *locatedError) Unwrap() error { return e.err }

// ruleDescriptions maps the built-in rule ids to their descriptions.
func ruleDescriptions() map[string]string {
	out := map[string]string{}
	for _, r := range policies.Rules() {
		out[r.ID] = r.Description
	}
	return out
}

// uniqueNotes drops repeated notes, keeping the first of each.
func uniqueNotes(notes []Note) []Note {
	seen := map[Note]bool{}
	var out []Note
	for _, n := range notes {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
