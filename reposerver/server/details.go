package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/render"
)

// AppDetails tells what req's first source is, as Argo CD's repo-server
// answers GetAppDetails: its type; for a Helm chart its value files,
// values.yaml and the parameters they set, read in the renderer (a
// sandbox child for a repo-server) without rendering the chart; for a
// Kustomize source the images its render holds, from the render cache
// when it has the render.
func (s *Service) AppDetails(ctx context.Context, req *reposerver.Request) (*reposerver.AppDetails, error) {
	if len(req.Sources) == 0 {
		return nil, &reposerver.Error{Code: reposerver.CodeInvalid, Message: "spec.source or spec.sources must be set"}
	}
	srcs, err := s.fetch(ctx, req, false)
	if err != nil {
		return nil, err
	}
	jobs, err := s.resolve(ctx, req, srcs, false)
	if err != nil {
		return nil, err
	}
	j := jobs[0]
	if !j.renders() {
		return nil, &reposerver.Error{Code: reposerver.CodeInvalid, Message: j.field + " is only a reference to be read by the other sources"}
	}
	kind, err := render.DetectKind(j.checkout.Dir, j.dir(), j.opts)
	if err != nil {
		return nil, err
	}
	d := &reposerver.AppDetails{Type: sourceType(kind)}
	switch kind {
	case render.KindHelm:
		if d.Helm, err = s.helmDetailsOf(ctx, j, req.NoCache); err != nil {
			return nil, err
		}
	case render.KindKustomize:
		out, ok := s.renders.Get(j.key)
		if !ok {
			if out, err = s.render(ctx, j); err != nil {
				return nil, err
			}
			s.renders.Add(j.key, out)
		}
		d.Kustomize = &reposerver.KustomizeDetails{}
		for _, raw := range out.objects {
			var obj map[string]any
			if err := json.Unmarshal(raw, &obj); err != nil {
				return nil, err
			}
			d.Kustomize.Images = appendImages(d.Kustomize.Images, obj)
		}
		slices.Sort(d.Kustomize.Images)
	}
	return d, nil
}

// helmDetailsCacheSize bounds the bytes of Helm details kept per Service.
const helmDetailsCacheSize = 16 << 20

// helmDetailsSize is what a Helm source's details cost the cache.
func helmDetailsSize(h *reposerver.HelmDetails) int64 {
	n := int64(len(h.Values)) + 64
	for _, f := range h.ValueFiles {
		n += int64(len(f)) + 16
	}
	for k, v := range h.Parameters {
		n += int64(len(k)+len(v)) + 32
	}
	return n
}

// helmDetailsOf reads the details of j's Helm chart in the renderer,
// without rendering it, or takes them from the cache by j's render key
// (what they are read from is part of it); noCache reads them again.
func (s *Service) helmDetailsOf(ctx context.Context, j *job, noCache bool) (*reposerver.HelmDetails, error) {
	if h, ok := s.helmDetails.Get(j.key); ok && !noCache {
		return h, nil
	}
	hj := *j
	hj.opts.HelmDetails = true
	res, err := s.build(ctx, &hj)
	if err != nil {
		return nil, fmt.Errorf("%s (%s at %s): %w", j.field, reposerver.RedactURL(j.source.RepoURL), v1alpha1.ShortRevision(j.checkout.Revision), err)
	}
	if res.Helm == nil {
		return nil, fmt.Errorf("%s: the renderer told no Helm details", j.field)
	}
	h := &reposerver.HelmDetails{ValueFiles: res.Helm.ValueFiles, Values: res.Helm.Values, Parameters: res.Helm.Parameters}
	s.helmDetails.Add(j.key, h)
	return h, nil
}

// appendImages appends the image of every container and init container
// in obj, at any depth, as Argo CD's kustomize.getImages finds them.
func appendImages(images []string, obj map[string]any) []string {
	for k, v := range obj {
		switch v := v.(type) {
		case []any:
			for _, item := range v {
				m, ok := item.(map[string]any)
				if !ok {
					continue
				}
				if k != "containers" && k != "initContainers" {
					images = appendImages(images, m)
				} else if image, ok := m["image"]; ok {
					images = append(images, fmt.Sprintf("%s", image))
				}
			}
		case map[string]any:
			images = appendImages(images, v)
		}
	}
	return images
}
