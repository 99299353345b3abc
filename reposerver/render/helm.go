package render

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// ErrMissingDependency is returned (wrapped) when Chart.yaml lists a
// dependency that is not vendored under charts/.
var ErrMissingDependency = errors.New("missing chart dependency")

// Defaults of `helm template`.
const (
	defaultReleaseName = "release-name"
	defaultNamespace   = "default"
	notesFile          = "NOTES.txt"
)

// helm renders the chart in the source directory with `helm template
// --include-crds` semantics (client only, install), with the source's
// capabilities (`--kube-version`, `--api-versions`).
func (s source) helm() ([]Document, []Note, error) {
	files, err := s.chartFiles()
	if err != nil {
		return nil, nil, err
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		return nil, nil, fmt.Errorf("load chart: %w", err)
	}
	if err := checkChart(ch); err != nil {
		return nil, nil, err
	}
	vals, err := s.helmValues()
	if err != nil {
		return nil, nil, err
	}
	opts := chartutil.ReleaseOptions{
		Name:      s.releaseName(),
		Namespace: s.releaseNamespace(),
		Revision:  1,
		IsInstall: true,
	}
	if err := chartutil.ValidateReleaseName(opts.Name); err != nil {
		return nil, nil, fmt.Errorf("release name %q: %w", opts.Name, err)
	}
	if err := chartutil.ProcessDependenciesWithMerge(ch, vals); err != nil {
		return nil, nil, fmt.Errorf("process dependencies: %w", err)
	}
	caps, err := s.capabilities()
	if err != nil {
		return nil, nil, err
	}
	if kv := ch.Metadata.KubeVersion; kv != "" && !chartutil.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return nil, nil, fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", kv, caps.KubeVersion.String())
	}
	skipSchema := s.opts.Helm != nil && s.opts.Helm.SkipSchemaValidation
	renderVals, err := chartutil.ToRenderValuesWithSchemaValidation(ch, vals, opts, caps, skipSchema)
	if err != nil {
		return nil, nil, err
	}
	rendered, err := engine.Engine{}.Render(ch, renderVals)
	if err != nil {
		return nil, nil, err
	}
	for name := range rendered {
		if strings.HasSuffix(name, notesFile) {
			delete(rendered, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(rendered, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, nil, err
	}

	out := helmOutput{src: s, layout: newChartLayout(s.rel, files), rendered: rendered,
		split: map[string][]string{}, used: map[string][]bool{}}
	if s.opts.Helm == nil || !s.opts.Helm.SkipCrds {
		if err := out.crds(ch); err != nil {
			return nil, nil, err
		}
	}
	for _, m := range manifests {
		if err := out.add(m.Name, m.Content); err != nil {
			return nil, nil, err
		}
	}
	skipTests := s.opts.Helm != nil && s.opts.Helm.SkipTests
	if s.opts.Helm != nil && s.opts.Helm.SkipHooks {
		hooks = nil
	}
	for _, h := range hooks {
		if skipTests && slices.Contains(h.Events, release.HookTest) {
			continue
		}
		if err := out.add(h.Path, h.Manifest); err != nil {
			return nil, nil, err
		}
	}
	return out.docs, out.notes, nil
}

func (s source) releaseName() string {
	if h := s.opts.Helm; h != nil && h.ReleaseName != "" {
		return h.ReleaseName
	}
	if s.opts.AppName != "" {
		return s.opts.AppName
	}
	return defaultReleaseName
}

func (s source) releaseNamespace() string {
	if h := s.opts.Helm; h != nil && h.Namespace != "" {
		return h.Namespace
	}
	if s.opts.Namespace != "" {
		return s.opts.Namespace
	}
	return defaultNamespace
}

// checkChart refuses what `helm template` refuses before rendering: library
// charts and dependencies that are not vendored.
func checkChart(ch *chart.Chart) error {
	if t := ch.Metadata.Type; t != "" && t != "application" {
		return fmt.Errorf("%s charts are not installable", t)
	}
	var missing []string
outer:
	for _, dep := range ch.Metadata.Dependencies {
		for _, sub := range ch.Dependencies() {
			if sub.Name() == dep.Name {
				continue outer
			}
		}
		missing = append(missing, dep.Name)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s listed in Chart.yaml but not found in charts/ (run `helm dependency build` and commit charts/)",
			ErrMissingDependency, strings.Join(missing, ", "))
	}
	return nil
}

// helmOutput collects the documents of a Helm render.
type helmOutput struct {
	src    source
	layout chartLayout
	// rendered is the engine's output by template path; split the
	// documents of each template in order, used marks those already
	// placed, so that each manifest gets its index within its template.
	rendered map[string]string
	split    map[string][]string
	used     map[string][]bool
	docs     []Document
	notes    []Note
}

// crds adds the chart's and subcharts' crds/ files, which Helm passes
// through without templating: they keep their lines.
func (o *helmOutput) crds(ch *chart.Chart) error {
	crds := ch.CRDObjects()
	// Subcharts come in map order from the loader: sort for stable output,
	// the top chart first.
	sort.SliceStable(crds, func(i, j int) bool {
		di, dj := strings.Count(crds[i].Filename, "/charts/"), strings.Count(crds[j].Filename, "/charts/")
		if di != dj {
			return di < dj
		}
		return crds[i].Filename < crds[j].Filename
	})
	for _, c := range crds {
		file := o.layout.file(path.Clean(strings.ReplaceAll(c.Filename, "\\", "/")))
		docs, notes, err := Decode(file, c.File.Data, o.src.lim)
		if err != nil {
			return err
		}
		for i := range docs {
			docs[i].Rendered, docs[i].Origin = true, KindHelm
		}
		o.docs = append(o.docs, docs...)
		o.notes = append(o.notes, notes...)
	}
	return nil
}

// add decodes one rendered manifest of the template at tpl.
func (o *helmOutput) add(tpl, content string) error {
	file := o.layout.file(tpl)
	index := o.index(tpl, content)
	docs, notes, err := Decode(file, []byte(content), o.src.lim)
	if err != nil {
		// Lines of rendered text mean nothing in the template.
		var de *DecodeError
		if errors.As(err, &de) {
			de.Index, de.Line = index, 0
			de.Err = fmt.Errorf("rendered from %s: %w", tpl, de.Err)
		}
		return err
	}
	for i := range docs {
		docs[i].Index, docs[i].Line, docs[i].Rendered, docs[i].Origin, docs[i].node = index, 0, true, KindHelm, nil
	}
	for i := range notes {
		notes[i].Index, notes[i].Line = index, 0
	}
	o.docs = append(o.docs, docs...)
	o.notes = append(o.notes, notes...)
	return nil
}

// index returns the position of the manifest content among the documents
// its template rendered. SortManifests reorders manifests by kind, so the
// position is recovered from the template's own output.
func (o *helmOutput) index(tpl, content string) int {
	docs, ok := o.split[tpl]
	if !ok {
		m := releaseutil.SplitManifests(o.rendered[tpl])
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Sort(releaseutil.BySplitManifestsOrder(keys))
		for _, k := range keys {
			docs = append(docs, m[k])
		}
		o.split[tpl], o.used[tpl] = docs, make([]bool, len(docs))
	}
	for i, d := range docs {
		if d == content && !o.used[tpl][i] {
			o.used[tpl][i] = true
			return i
		}
	}
	return 0
}

// capabilities returns the Helm SDK's default capabilities with the
// source's Kubernetes version and its API versions added, as `helm template
// --kube-version --api-versions` sets them.
func (s source) capabilities() (*chartutil.Capabilities, error) {
	caps := chartutil.DefaultCapabilities.Copy()
	c := s.opts.Capabilities
	if c == nil {
		return caps, nil
	}
	if c.KubeVersion != "" {
		kv, err := chartutil.ParseKubeVersion(c.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("kube version %q: %w", c.KubeVersion, err)
		}
		caps.KubeVersion = *kv
	}
	caps.APIVersions = append(caps.APIVersions, c.APIVersions...)
	return caps, nil
}
