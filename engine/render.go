package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"

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
	refs := map[string]string{}
	for _, f := range srcs {
		if f.source.Ref != "" {
			refs[f.source.Ref] = f.checkout.Dir
		}
	}
	var set renderedSet
	keys := sha256.New()
	for i, f := range srcs {
		as := render.AppSource{Field: sourceField(app, i), Source: f.source}
		if as.RefOnly(len(srcs)) {
			set.sourceTypes = append(set.sourceTypes, "")
			continue
		}
		opts, err := render.ApplicationOptions(app.Name, app.Spec.Destination.Namespace, as, refs)
		if err != nil {
			return renderedSet{}, err
		}
		key, err := renderKey(f, opts, srcs)
		if err != nil {
			return renderedSet{}, fmt.Errorf("%s: %w", as.Field, err)
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
				return renderedSet{}, fmt.Errorf("%s (%s at %s): %w", as.Field, source.RedactURL(f.source.RepoURL), shortSHA(f.checkout.Revision), err)
			}
			out = rendered{kind: res.Kind, objects: make([][]byte, len(res.Documents))}
			for j, d := range res.Documents {
				if out.objects[j], err = json.Marshal(d.Object); err != nil {
					return renderedSet{}, fmt.Errorf("%s: %s document %d: %w", as.Field, d.File, d.Index+1, err)
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

// sourceField names the i-th source of app the way Argo CD's fields do.
func sourceField(app *v1alpha1.Application, i int) string {
	if app.Spec.HasMultipleSources() {
		return fmt.Sprintf("spec.sources[%d]", i)
	}
	return "spec.source"
}

// renderKey identifies a render: repository, commit, path and options, and
// the repository and commit of every ref source (their files may be read
// as value files) in place of their checkout directories.
func renderKey(f fetched, opts render.Options, srcs []fetched) (string, error) {
	opts.Refs = nil
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
	if opts.Helm != nil {
		for _, ref := range srcs {
			if ref.source.Ref != "" {
				fmt.Fprintf(h, "\x00%s\x00%s\x00%s", ref.source.Ref, source.NormalizeURL(ref.source.RepoURL), ref.checkout.Revision)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
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
