package check

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/render"
)

// appSource is one source of an Application that tollgate test renders from
// the local checkout.
type appSource struct {
	// Field is where the source sits in the Application, for messages:
	// "spec.source" or "spec.sources[1]".
	Field string
	// Path is the source's path in the repository ("." for the root).
	Path string
	// Options are the source's rendering options.
	Options render.Options
}

// appPlan is what planApplication decided for an Application.
type appPlan struct {
	Sources []appSource
	// Skipped explains, one message each, the sources that are not
	// rendered.
	Skipped []string
}

// planApplication works out which sources of the Application document obj
// come from the repository under test (repoURL, as reposerver.NormalizeURL
// gives it; "" matches nothing) and how to render each from the checkout at
// root, with the repo-server's resolver: render.ApplicationSources lists
// the sources as Argo CD reads them, render.SourceOptions merges each
// one's Argo CD override files (.argocd-source*.yaml) and turns it into
// render options, and a `ref` source of the repository under test
// provides its checkout, root, to "$ref/path" value files. An
// Application outside controlNS, the namespace Argo CD runs in, is the
// instance "<namespace>_<name>" (v1alpha1.Application.InstanceName) for
// its build variables and override file, as in the controller.
//
// tollgate test cannot fetch other repositories: their sources, Helm
// repository charts, and sources with value files from another
// repository's ref are skipped with a message. A field of the wrong type
// is an error naming the field, and a source with a field tollgate does not
// honour is the engine's *render.UnsupportedError: the engine refuses such
// an Application rather than render it differently from Argo CD.
func planApplication(obj map[string]any, repoURL, controlNS string, root repoRoot) (appPlan, error) {
	app, err := decodeApplication(obj)
	if err != nil {
		return appPlan{}, err
	}
	srcs := render.ApplicationSources(app.Spec)
	if len(srcs) == 0 {
		return appPlan{Skipped: []string{"has no spec.source or spec.sources; nothing to render"}}, nil
	}
	local := func(s v1alpha1.ApplicationSource) bool {
		return repoURL != "" && reposerver.NormalizeURL(s.RepoURL) == repoURL
	}
	// As in the engine, a later source with the same ref name wins.
	refs, remoteRefs := map[string]string{}, map[string]bool{}
	for _, s := range srcs {
		if ref := s.Source.Ref; ref != "" {
			delete(refs, ref)
			delete(remoteRefs, ref)
			if local(s.Source) {
				refs[ref] = root.given
			} else {
				remoteRefs[ref] = true
			}
		}
	}
	var plan appPlan
	for _, s := range srcs {
		src := s.Source
		var skip string
		switch {
		case src.RepoURL == "":
			skip = "has no repoURL; not rendered"
		case src.Chart != "":
			skip = fmt.Sprintf("Helm chart %q from repository %s is not rendered (only sources from the repository under test are)", src.Chart, src.RepoURL)
		case !local(src):
			skip = fmt.Sprintf("repository %s is not the repository under test; not rendered", src.RepoURL)
		case s.RefOnly(len(srcs)):
			skip = fmt.Sprintf("ref %q only provides value files; not rendered on its own", src.Ref)
		default:
			skip = remoteValueFile(src, remoteRefs)
		}
		if skip != "" {
			plan.Skipped = append(plan.Skipped, s.Field+": "+skip)
			continue
		}
		info := render.AppInfo{Name: app.InstanceName(controlNS), Namespace: app.Spec.Destination.Namespace, Project: cmp.Or(app.Spec.Project, "default")}
		_, opts, err := render.SourceOptions(info, s, root.given, cmp.Or(src.Path, "."), root.revision, refs)
		if err != nil {
			return appPlan{}, err
		}
		plan.Sources = append(plan.Sources, appSource{Field: s.Field, Path: cmp.Or(src.Path, "."), Options: opts})
	}
	return plan, nil
}

// remoteValueFile returns a skip message for a source with a Helm value
// file or file parameter from the ref source of another repository ("$name/path", name in
// remoteRefs), which cannot be read offline; "" when it has none.
func remoteValueFile(src v1alpha1.ApplicationSource, remoteRefs map[string]bool) string {
	if src.Helm == nil {
		return ""
	}
	files := slices.Clone(src.Helm.ValueFiles)
	for _, fp := range src.Helm.FileParameters {
		files = append(files, fp.Path)
	}
	for _, vf := range files {
		name, ok := strings.CutPrefix(vf, "$")
		if !ok {
			continue
		}
		if name, _, _ = strings.Cut(name, "/"); remoteRefs[name] {
			return fmt.Sprintf("value file %q comes from a source that is not the repository under test; not rendered", vf)
		}
	}
	return ""
}
