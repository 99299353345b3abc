package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge2"
	sigsyaml "sigs.k8s.io/yaml"
)

// Kustomize's helmCharts are inflated here, with the Helm SDK, the way
// kustomize's HelmChartInflationGenerator runs `helm pull` and `helm
// template` when kustomize build gets --enable-helm: a chart found in the
// kustomization's chart home (helmGlobals.chartHome, "charts" by default,
// "<name>-<version>" below it for an entry with a repo and a version) is
// used as it is; any other is the chart the repo-server pulled
// (Options.KustomizeCharts). Values are the entry's valuesFile (default
// the chart's values.yaml) with valuesInline merged as valuesMerge says,
// then additionalValuesFiles; the release is named by releaseName or
// nameTemplate, in the entry's namespace, else the kustomization's, else
// that of the nearest kustomization above it that sets one. Each chart's
// output becomes a resource file of the kustomization, held in memory,
// whose objects kustomize's namespace transformer leaves alone, as it does
// for its own generator's. krusty's generator, which runs a helm binary,
// is never configured.

// helmSettings are the helm flags of kustomize build
// (kustomizerOptions): given only with --enable-helm.
type helmSettings struct {
	enabled bool
	// kubeVersion and apiVersions are --helm-kube-version and
	// --helm-api-versions.
	kubeVersion string
	apiVersions []string
}

// Fields of a kustomization that configure helmCharts.
const (
	helmChartsField  = "helmCharts"
	helmGlobalsField = "helmGlobals"
	helmLegacyField  = "helmChartInflationGenerator"
)

// helmGenerator is the kind kustomize names its helm generator by in
// origin annotations.
const helmGenerator = "HelmChartInflationGenerator"

// errHelmNotEnabled refuses helmCharts without --enable-helm, as
// kustomize does.
var errHelmNotEnabled = errors.New("helmCharts need --enable-helm in " + BuildOptionsField + " (kustomize: must specify --enable-helm)")

// kustomizeHelm inflates the helmCharts of the kustomizations of one build.
type kustomizeHelm struct {
	settings helmSettings
	// caps are the source's capabilities (the destination cluster's, or
	// the source's kustomize overrides), which Argo CD passes as
	// --helm-kube-version and --helm-api-versions after the build
	// options.
	caps    *Capabilities
	charts  []KustomizeChart
	lim     Limits
	rootDir bool // LoadRestrictionsRootOnly
	// namespaces is the namespace a kustomization directory (real path)
	// inherits for its charts from the kustomization that names it.
	namespaces map[string]string
	// files maps each inflated chart's in-memory resource file (real
	// path) to the kustomization that configures it and the chart.
	files map[string]helmFile
}

// helmFile is one chart's inflated output, as a resource file.
type helmFile struct {
	kustPath, chart string
}

// helmEntries are the helmCharts configuration of one kustomization.
type helmEntries struct {
	charts  []types.HelmChart
	globals types.HelmGlobals
	// line is that of the first field, for messages.
	line int
}

// readHelmEntries reads the helmCharts, helmGlobals and (deprecated)
// helmChartInflationGenerator fields of the kustomization top, as
// kustomize's FixKustomization combines them; nil when there are none.
func readHelmEntries(top *yaml.Node) (*helmEntries, error) {
	var raw struct {
		Charts  []types.HelmChart     `json:"helmCharts"`
		Globals *types.HelmGlobals    `json:"helmGlobals"`
		Legacy  []types.HelmChartArgs `json:"helmChartInflationGenerator"`
	}
	var e helmEntries
	sub := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(top.Content); i += 2 {
		switch k := top.Content[i]; k.Value {
		case helmChartsField, helmGlobalsField, helmLegacyField:
			sub.Content = append(sub.Content, k, top.Content[i+1])
			if e.line == 0 {
				e.line = k.Line
			}
		}
	}
	if len(sub.Content) == 0 {
		return nil, nil
	}
	data, err := yaml.Marshal(sub)
	if err != nil {
		return nil, err
	}
	if err := sigsyaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("line %d: helmCharts: %w", e.line, err)
	}
	charts, legacyGlobals := types.SplitHelmParameters(raw.Legacy)
	e.charts = append(raw.Charts, charts...)
	switch {
	case raw.Globals != nil:
		e.globals = *raw.Globals
	default:
		e.globals = legacyGlobals
	}
	if len(e.charts) == 0 {
		return nil, nil
	}
	return &e, nil
}

// templateName renders a release name template as helm's --name-template:
// a text template with sprig's functions and no data, less those that
// read the process's environment, which Helm's chart engine leaves out
// too.
func templateName(text string) (string, error) {
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	t, err := template.New("name-template").Funcs(funcs).Parse(text)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, nil); err != nil {
		return "", err
	}
	return b.String(), nil
}

// chartHome returns the directory chart ch is looked for in, below the
// kustomization directory dir, as kustomize's absChartHome.
func chartHome(dir string, g types.HelmGlobals, ch types.HelmChart) (string, error) {
	home := g.ChartHome
	if home == "" {
		home = types.HelmDefaultHome
	}
	if filepath.IsAbs(home) {
		return "", fmt.Errorf("helmGlobals.chartHome %q: an absolute chart home is outside the repository", home)
	}
	home = filepath.Join(dir, home)
	if ch.Version != "" && ch.Repo != "" {
		home = filepath.Join(home, ch.Name+"-"+ch.Version)
	}
	return home, nil
}

// inflate renders the helmCharts of the kustomization at kustPath (real
// path), which the checker rc is serving, into in-memory resource files
// and rewrites the kustomization to list them as resources.
func (h *kustomizeHelm) inflate(rc *remoteChecker, top *yaml.Node, e *helmEntries, namespace string) error {
	dir := rc.dir
	if namespace == "" {
		namespace = h.namespaces[dir]
	}
	var files []string
	for i, ch := range e.charts {
		if ch.Namespace == "" {
			ch.Namespace = namespace
		}
		data, err := h.chart(rc.fs, dir, e.globals, ch)
		if err != nil {
			return fmt.Errorf("%s line %d: helmCharts entry %q: %w", rc.name, e.line, ch.Name, err)
		}
		// Not named after the chart, whose name may hold a path.
		name := fmt.Sprintf(".helmcharts-%d.yaml", i)
		real := filepath.Join(dir, name)
		rc.fs.overlay[real] = data
		h.files[real] = helmFile{kustPath: rc.kustPath, chart: ch.Name}
		files = append(files, name)
	}
	// The kustomization without its helm fields, the charts' output
	// listed after its resources.
	var kept []*yaml.Node
	var resources *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		switch k := top.Content[i]; k.Value {
		case helmChartsField, helmGlobalsField, helmLegacyField:
			continue
		case "resources":
			resources = deref(top.Content[i+1])
			if resources.Kind == yaml.ScalarNode && resources.ShortTag() == "!!null" {
				// "resources:" with nothing: the list of the charts.
				resources = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
				top.Content[i+1] = resources
			}
		}
		kept = append(kept, top.Content[i], top.Content[i+1])
	}
	if resources == nil {
		resources = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		kept = append(kept, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "resources"}, resources)
	}
	if resources.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s: resources is not a list", rc.name)
	}
	for _, f := range files {
		resources.Content = append(resources.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: f})
	}
	top.Content = kept
	rc.edited = true
	return nil
}

// chart inflates one entry of the kustomization directory dir.
func (h *kustomizeHelm) chart(c *confinedFS, dir string, g types.HelmGlobals, ch types.HelmChart) ([]byte, error) {
	switch {
	case ch.Name == "":
		return nil, errors.New("chart name cannot be empty")
	case strings.HasPrefix(ch.Name, "-"):
		return nil, fmt.Errorf("chart name must not start with '-', got %q", ch.Name)
	case strings.HasPrefix(ch.ReleaseName, "-"):
		return nil, fmt.Errorf("releaseName must not start with '-', got %q", ch.ReleaseName)
	}
	release := ch.ReleaseName
	switch {
	case release != "" && ch.NameTemplate != "":
		return nil, errors.New("cannot set --name-template and also specify a name (helm)")
	case ch.NameTemplate != "":
		name, err := templateName(ch.NameTemplate)
		if err != nil {
			return nil, fmt.Errorf("nameTemplate: %w", err)
		}
		release = name
	case release == "":
		return nil, errors.New("releaseName is empty: kustomize would run helm template --generate-name, which names the release after the time of the render, so that every render differs; set releaseName")
	}
	home, err := chartHome(dir, g, ch)
	if err != nil {
		return nil, err
	}
	src, defaultValues, err := h.chartSource(c, home, ch)
	if err != nil {
		return nil, err
	}
	values, err := h.values(c, dir, defaultValues, ch, func() ([]byte, error) { return pulledValues(src, c.max) })
	if err != nil {
		return nil, err
	}
	src.opts = Options{
		Helm: &HelmOptions{ReleaseName: release, Namespace: ch.Namespace, ValuesObject: values,
			SkipCrds: !ch.IncludeCRDs, SkipTests: ch.SkipTests, SkipHooks: ch.SkipHooks},
		Capabilities: h.capabilities(ch),
	}
	src.lim = h.lim
	docs, _, err := src.helm()
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, d := range docs {
		if d.Object == nil {
			continue
		}
		setAnnotation(d.Object, konfig.HelmGeneratedAnnotation, "true")
		data, err := json.Marshal(d.Object)
		if err != nil {
			return nil, err
		}
		out = append(append(out, "---\n"...), data...)
		out = append(out, '\n')
	}
	return out, nil
}

// chartSource returns the chart of ch as a source to render: the one in
// its chart home, else the one the repo-server pulled; and the path of
// its default values file in the kustomization's tree, "" for a pulled
// chart.
func (h *kustomizeHelm) chartSource(c *confinedFS, home string, ch types.HelmChart) (source, string, error) {
	local := filepath.Join(home, ch.Name)
	if c.IsDir(local) {
		real, err := c.resolve(local)
		if err != nil {
			return source{}, "", err
		}
		r := c.repo
		if i := c.rootOf(real); i >= 0 {
			r = c.roots[i].repo
		}
		return source{repo: r, dir: real, rel: r.rel(real)}, filepath.Join(local, "values.yaml"), nil
	}
	if ch.Repo == "" {
		return source{}, "", fmt.Errorf("no repo specified for pull, no chart found at '%s'", c.name(local))
	}
	i := slices.IndexFunc(h.charts, func(k KustomizeChart) bool {
		return k.Repo == ch.Repo && k.Name == ch.Name && k.Version == ch.Version
	})
	if i < 0 {
		return source{}, "", fmt.Errorf("%w: chart %s of %s was not pulled", ErrRemoteReference, ch.Name, ch.Repo)
	}
	r, err := openRepo(h.charts[i].Dir)
	if err != nil {
		return source{}, "", fmt.Errorf("chart %s: %w", ch.Name, err)
	}
	return source{repo: r, dir: r.root, rel: "."}, "", nil
}

// pulledValues reads the values.yaml of a pulled chart, which kustomize
// finds where `helm pull` unpacked it.
func pulledValues(src source, max int64) ([]byte, error) {
	data, err := readFile(filepath.Join(src.dir, "values.yaml"), max)
	if err != nil {
		return nil, fmt.Errorf("the chart's values.yaml: %w", err)
	}
	return data, nil
}

// values returns the values of ch as kustomize hands them to helm
// template: the values file (valuesFile, else the chart's values.yaml)
// merged with valuesInline as valuesMerge says, then each
// additionalValuesFiles file over it. defaultValues is the chart's
// values.yaml in the kustomization's tree, "" for a pulled chart, whose
// values.yaml pulled reads.
func (h *kustomizeHelm) values(c *confinedFS, dir, defaultValues string, ch types.HelmChart, pulled func() ([]byte, error)) (map[string]any, error) {
	merge := ch.ValuesMerge
	switch merge {
	case "":
		merge = "override"
	case "merge", "override", "replace":
	default:
		return nil, fmt.Errorf("valuesMerge must be one of [merge override replace]")
	}
	var file []byte
	if len(ch.ValuesInline) == 0 || merge != "replace" {
		var err error
		switch {
		case ch.ValuesFile != "":
			file, err = h.load(c, dir, filepath.Join(dir, ch.ValuesFile), ch.ValuesFile)
		case defaultValues != "":
			file, err = h.load(c, dir, defaultValues, filepath.ToSlash(mustRel(dir, defaultValues)))
		default:
			file, err = pulled()
		}
		if err != nil {
			return nil, err
		}
	}
	if len(ch.ValuesInline) > 0 {
		merged, err := mergeInline(file, ch.ValuesInline, merge)
		if err != nil {
			return nil, err
		}
		if file, err = sigsyaml.Marshal(merged); err != nil {
			return nil, err
		}
	}
	vals, err := chartutil.ReadValues(file)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	for _, f := range ch.AdditionalValuesFiles {
		data, err := h.load(c, dir, filepath.Join(dir, f), f)
		if err != nil {
			return nil, fmt.Errorf("could not load additionalValuesFile: %w", err)
		}
		m, err := chartutil.ReadValues(data)
		if err != nil {
			return nil, fmt.Errorf("additionalValuesFiles %s: %w", f, err)
		}
		vals = MergeValues(vals, m)
	}
	return vals, nil
}

// mergeInline merges valuesInline with the values file as kustomize does,
// with kyaml's merge: override lets the inline values win, merge the
// file's; replace keeps the inline values alone.
func mergeInline(file []byte, inline map[string]any, how string) (map[string]any, error) {
	if how == "replace" {
		return inline, nil
	}
	fileNode, err := kyaml.Parse(string(file))
	if err != nil {
		return nil, fmt.Errorf("could not parse values file into rnode: %w", err)
	}
	inlineNode, err := kyaml.FromMap(inline)
	if err != nil {
		return nil, fmt.Errorf("could not parse values inline into rnode: %w", err)
	}
	var out *kyaml.RNode
	if how == "override" {
		out, err = merge2.Merge(inlineNode, fileNode.Copy(), kyaml.MergeOptions{})
	} else {
		out, err = merge2.Merge(fileNode, inlineNode.Copy(), kyaml.MergeOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("could not merge values: %w", err)
	}
	return out.Map()
}

// load reads a values file of the kustomization in dir: confined to its
// roots and, with LoadRestrictionsRootOnly, to dir, as kustomize's loader
// reads it.
func (h *kustomizeHelm) load(c *confinedFS, dir, p, written string) ([]byte, error) {
	real, err := c.refuse(p)
	if err != nil {
		return nil, err
	}
	if h.rootDir {
		realDir, err := c.resolve(dir)
		if err != nil {
			return nil, err
		}
		if real != realDir && !strings.HasPrefix(real, realDir+string(filepath.Separator)) {
			return nil, fmt.Errorf("security; file '%s' is not in or below '%s'", written, c.name(realDir))
		}
	}
	data, err := readFile(real, c.max)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", c.name(real), err)
	}
	return data, nil
}

// capabilities are what chart ch sees, as kustomize's generator sets
// them: the command line's (Argo CD passes the source's after the build
// options') win over the entry's.
func (h *kustomizeHelm) capabilities(ch types.HelmChart) *Capabilities {
	kube := ch.KubeVersion
	if h.settings.kubeVersion != "" {
		kube = h.settings.kubeVersion
	}
	apis := slices.Clone(h.settings.apiVersions)
	if h.caps != nil {
		if h.caps.KubeVersion != "" {
			kube = h.caps.KubeVersion
		}
		apis = append(apis, h.caps.APIVersions...)
	}
	if len(apis) == 0 {
		apis = ch.ApiVersions
	}
	if kube == "" && len(apis) == 0 {
		return nil
	}
	return &Capabilities{KubeVersion: kube, APIVersions: apis}
}

// origin returns, for the origin of a resource of a build in dir read
// from an inflated chart's file, the origin kustomize gives its helm
// generator's output: configured in the kustomization, by the generator;
// nil for any other origin.
func (h *kustomizeHelm) origin(c *confinedFS, dir string, origin *resource.Origin) *resource.Origin {
	if h == nil || origin == nil || origin.Path == "" || origin.Repo != "" {
		return nil
	}
	real, err := c.resolve(filepath.Join(dir, filepath.FromSlash(origin.Path)))
	if err != nil {
		return nil
	}
	f, ok := h.files[real]
	if !ok {
		return nil
	}
	return &resource.Origin{
		ConfiguredIn: filepath.ToSlash(mustRel(dir, f.kustPath)),
		ConfiguredBy: kyaml.ResourceIdentifier{
			TypeMeta: kyaml.TypeMeta{APIVersion: "builtin", Kind: helmGenerator},
			NameMeta: kyaml.NameMeta{Name: f.chart},
		},
	}
}

// inherit records the namespace the local kustomizations named by the
// kustomization in dir inherit for their charts: its own, else the one
// it inherited.
func (h *kustomizeHelm) inherit(dir, namespace string, entries []string) {
	if namespace == "" {
		namespace = h.namespaces[dir]
	}
	if namespace == "" {
		return
	}
	for _, e := range entries {
		if filepath.IsAbs(e) {
			continue
		}
		if real, err := filepath.EvalSymlinks(filepath.Join(dir, e)); err == nil {
			h.namespaces[real] = namespace
		}
	}
}

// mustRel is filepath.Rel, or target itself when it has no relative path
// from base.
func mustRel(base, target string) string {
	if rel, err := filepath.Rel(base, target); err == nil {
		return rel
	}
	return target
}

// setAnnotation sets annotation key of the object obj.
func setAnnotation(obj map[string]any, key, value string) {
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		md["annotations"] = ann
	}
	ann[key] = value
}
