package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/render"
	"github.com/tollgate-dev/tollgate/engine/source"
)

// rendered is the cached output of one source at one revision, shared
// between reconciles and never modified. Objects are kept as compact JSON,
// a third of the memory of decoded maps: an idle Application only needs
// the render key, and decoding yields the fresh copies a full comparison
// needs anyway.
type rendered struct {
	objects [][]byte
	kind    string
}

// renderedSet is what every source of an Application rendered.
type renderedSet struct {
	// objects are JSON documents shared with the render cache.
	objects [][]byte
	// sourceTypes has one entry per source; ref-only sources are empty.
	sourceTypes []v1alpha1.ApplicationSourceType
	// key identifies the set: the render keys of every source.
	key string
}

// renderSources renders every source that is not only a reference (a
// source with ref provides value files to the others) and concatenates the
// objects in source order. Rendered output is cached per repository,
// revision, path and options; hard (a hard refresh) renders again anyway.
func (r *Reconciler) renderSources(ctx context.Context, app *v1alpha1.Application, srcs []fetched, hard bool) (renderedSet, error) {
	refs := map[string]fetched{}
	for _, f := range srcs {
		if f.source.Ref != "" {
			refs[f.source.Ref] = f
		}
	}
	var set renderedSet
	keys := sha256.New()
	for i, f := range srcs {
		if f.source.Ref != "" && len(srcs) > 1 {
			set.sourceTypes = append(set.sourceTypes, "")
			continue
		}
		opts, err := renderOptions(app, f.source)
		if err != nil {
			return renderedSet{}, fmt.Errorf("source %d: %w", i+1, err)
		}
		if opts.Helm != nil {
			if err := r.resolveValueFiles(f, refs, opts.Helm); err != nil {
				return renderedSet{}, fmt.Errorf("source %d: %w", i+1, err)
			}
		}
		key, err := renderKey(f, opts)
		if err != nil {
			return renderedSet{}, fmt.Errorf("source %d: %w", i+1, err)
		}
		keys.Write([]byte(key))
		out, ok := r.renders.Get(key)
		if ok && !hard {
			r.metrics.renders.WithLabelValues("hit").Inc()
		} else {
			r.metrics.renders.WithLabelValues("miss").Inc()
			path := f.source.Path
			if path == "" {
				path = "."
			}
			res, err := r.renderer.Build(ctx, f.checkout.Dir, path, opts, r.opts.RenderLimits)
			if err != nil {
				return renderedSet{}, fmt.Errorf("source %d (%s at %s): %w", i+1, source.RedactURL(f.source.RepoURL), shortSHA(f.checkout.Revision), err)
			}
			out = rendered{kind: res.Kind, objects: make([][]byte, len(res.Documents))}
			for j, d := range res.Documents {
				if out.objects[j], err = json.Marshal(d.Object); err != nil {
					return renderedSet{}, fmt.Errorf("source %d: %s document %d: %w", i+1, d.File, d.Index+1, err)
				}
			}
			r.renders.Add(key, out)
		}
		set.sourceTypes = append(set.sourceTypes, sourceType(out.kind))
		set.objects = append(set.objects, out.objects...)
	}
	set.key = hex.EncodeToString(keys.Sum(nil))
	return set, nil
}

// renderKey identifies a render: repository, commit, path and options
// (value files read from other sources are already inlined in opts).
func renderKey(f fetched, opts render.Options) (string, error) {
	data, err := json.Marshal(opts)
	if err != nil {
		return "", fmt.Errorf("encode render options: %w", err)
	}
	h := sha256.New()
	for _, s := range []string{source.NormalizeURL(f.source.RepoURL), f.checkout.Revision, path.Clean("/" + f.source.Path)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// renderOptions maps an ApplicationSource's rendering fields to render
// options. Fields tollgate cannot honour are errors rather than silently
// rendering something else.
func renderOptions(app *v1alpha1.Application, s v1alpha1.ApplicationSource) (render.Options, error) {
	opts := render.Options{Namespace: app.Spec.Destination.Namespace, AppName: app.Name}
	if s.Plugin != nil {
		return opts, errors.New("config management plugins are not supported")
	}
	if d := s.Directory; d != nil {
		if d.Jsonnet != nil && len(d.Jsonnet.Raw) > 0 && string(d.Jsonnet.Raw) != "{}" && string(d.Jsonnet.Raw) != "null" {
			return opts, errors.New("directory.jsonnet is not supported")
		}
		opts.Directory = &render.DirectoryOptions{Recurse: d.Recurse, Include: d.Include, Exclude: d.Exclude}
	}
	if k := s.Kustomize; k != nil {
		switch {
		case len(k.Replicas) > 0:
			return opts, errors.New("kustomize.replicas is not supported")
		case len(k.Patches) > 0:
			return opts, errors.New("kustomize.patches is not supported")
		case len(k.Components) > 0:
			return opts, errors.New("kustomize.components is not supported")
		}
		opts.Kustomize = &render.KustomizeOptions{
			Images: k.Images, NamePrefix: k.NamePrefix, NameSuffix: k.NameSuffix, Namespace: k.Namespace,
			CommonLabels: k.CommonLabels, CommonAnnotations: k.CommonAnnotations,
		}
	}
	if h := s.Helm; h != nil {
		if len(h.FileParameters) > 0 {
			return opts, errors.New("helm.fileParameters is not supported")
		}
		ho := &render.HelmOptions{
			ValueFiles: h.ValueFiles, Values: h.Values, ReleaseName: h.ReleaseName,
			Namespace: h.Namespace, SkipCrds: h.SkipCrds,
		}
		if h.ValuesObject != nil && len(h.ValuesObject.Raw) > 0 {
			if err := json.Unmarshal(h.ValuesObject.Raw, &ho.ValuesObject); err != nil {
				return opts, fmt.Errorf("decode helm.valuesObject: %w", err)
			}
		}
		for _, p := range h.Parameters {
			ho.Parameters = append(ho.Parameters, render.HelmParameter{Name: p.Name, Value: p.Value, ForceString: p.ForceString})
		}
		opts.Helm = ho
	}
	return opts, nil
}

// resolveValueFiles handles value files that Helm itself cannot read: files
// of another source (`$ref/path`) and, with ignoreMissingValueFiles, files
// that do not exist. When either occurs, every value file, values and
// valuesObject are merged here, in Helm's order, into ValuesObject; render
// then applies the parameters on top as usual.
func (r *Reconciler) resolveValueFiles(f fetched, refs map[string]fetched, h *render.HelmOptions) error {
	ignoreMissing := f.source.Helm != nil && f.source.Helm.IgnoreMissingValueFiles
	hasRef := false
	for _, vf := range h.ValueFiles {
		hasRef = hasRef || strings.HasPrefix(vf, "$")
	}
	if !hasRef && !ignoreMissing {
		return nil
	}
	limit := r.opts.RenderLimits.MaxFileBytes
	if limit <= 0 {
		limit = render.DefaultMaxFileBytes
	}
	vals := map[string]any{}
	for _, vf := range h.ValueFiles {
		root, rel := f.checkout.Dir, vf
		switch {
		case strings.HasPrefix(vf, "$"):
			name, rest, _ := strings.Cut(vf[1:], "/")
			ref, found := refs[name]
			if !found {
				return fmt.Errorf("helm value file %q: no source of the application has ref %q", vf, name)
			}
			root, rel = ref.checkout.Dir, rest
		case !strings.HasPrefix(vf, "/"):
			rel = path.Join(f.source.Path, vf)
		}
		if strings.Contains(vf, "://") {
			return fmt.Errorf("helm value file %s: remote value files are not supported", vf)
		}
		data, err := render.ReadFile(root, rel, limit)
		if errors.Is(err, fs.ErrNotExist) && ignoreMissing {
			continue
		}
		if err != nil {
			return fmt.Errorf("read helm value file %s: %w", vf, err)
		}
		m, err := chartutil.ReadValues(data)
		if err != nil {
			return fmt.Errorf("parse helm value file %s: %w", vf, err)
		}
		vals = render.MergeValues(vals, m)
	}
	if strings.TrimSpace(h.Values) != "" {
		m, err := chartutil.ReadValues([]byte(h.Values))
		if err != nil {
			return fmt.Errorf("parse helm values: %w", err)
		}
		vals = render.MergeValues(vals, m)
	}
	if h.ValuesObject != nil {
		vals = render.MergeValues(vals, h.ValuesObject)
	}
	h.ValueFiles, h.Values, h.ValuesObject = nil, "", vals
	return nil
}

// sourceType maps a render kind to Argo CD's source type.
func sourceType(kind string) v1alpha1.ApplicationSourceType {
	switch kind {
	case render.KindHelm:
		return v1alpha1.ApplicationSourceTypeHelm
	case render.KindKustomize:
		return v1alpha1.ApplicationSourceTypeKustomize
	}
	return v1alpha1.ApplicationSourceTypeDirectory
}

// shortSHA abbreviates a commit SHA for messages.
func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
