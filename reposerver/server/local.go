package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/render"
)

// SourceRender is what Render did with one source of a request: its
// documents, why it was not rendered, or its error.
type SourceRender struct {
	// Field names the source: "spec.source" or "spec.sources[1]".
	Field string
	// Dir is the source's directory in its checkout ("." for the root).
	Dir string
	// Result is what the source rendered, each document with its file
	// and line.
	Result render.Result
	// RefOnly is set for a source that only provides files to the others
	// (render.AppSource.RefOnly): it is not rendered.
	RefOnly bool
	// NotServed is set for a source that was not fetched: it has no
	// repository URL, the Fetcher does not serve its repository
	// (*NotServedError), or it is a chart source and the Service fetches
	// no charts.
	NotServed bool
	// ValueFile is set for a source that was not rendered because this
	// value file of it comes from a ref source that was not served.
	ValueFile string
	// RemoteBase is set for a source that was not rendered because the
	// base Fetcher does not serve this remote Kustomize base of it
	// (*UnservedBaseError).
	RemoteBase *UnservedBaseError
	// Plugin is set for a plugin source that was not rendered because
	// its plugin is not run here (*UnservedPluginError).
	Plugin *UnservedPluginError
	// Err is the source's render error, naming its field.
	Err error
}

// Rendered reports whether the source was rendered.
func (r SourceRender) Rendered() bool {
	return !r.RefOnly && !r.NotServed && r.ValueFile == "" && r.RemoteBase == nil && r.Plugin == nil && r.Err == nil
}

// Render fetches, resolves and renders the sources of req the way Generate
// does, for a caller in this process that reads documents with their
// files and lines (tollgate test, with a Fetcher that serves the checkout
// under test). It does not use the render cache. Unlike Generate, a source
// that cannot be fetched here, or one of whose remote Kustomize bases
// cannot, is left out and marked, and a source that
// fails to render does not stop the others. The error is one that fails
// the whole request, as in Generate: no sources, a field tollgate does not
// honour, a commit not signed with an allowed key, or ctx's.
func (s *Service) Render(ctx context.Context, req *reposerver.Request) ([]SourceRender, error) {
	if len(req.Sources) == 0 {
		return nil, &reposerver.Error{Code: reposerver.CodeInvalid, Message: "spec.source or spec.sources must be set"}
	}
	srcs, err := s.fetch(ctx, req, true)
	if err != nil {
		return nil, err
	}
	if _, allowed := signatures(req, srcs); !allowed {
		return nil, errors.New("a source's commit is not signed with a key the project allows")
	}
	jobs, err := s.resolve(ctx, req, srcs, true)
	if err != nil {
		return nil, err
	}
	out := make([]SourceRender, len(jobs))
	for i, j := range jobs {
		out[i] = SourceRender{Field: j.field, Dir: j.dir(), RefOnly: j.refOnly, NotServed: j.unserved, ValueFile: j.unservedValueFile, RemoteBase: j.unservedBase}
		if !j.renders() {
			continue
		}
		res, err := s.build(ctx, j)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if up := (*UnservedPluginError)(nil); errors.As(err, &up) {
				out[i].Plugin = up
				continue
			}
			out[i].Err = fmt.Errorf("%s: %w", j.field, err)
			continue
		}
		out[i].Result = res
	}
	return out, nil
}
