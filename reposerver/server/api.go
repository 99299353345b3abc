package server

import (
	"context"
	"errors"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/appset"
	"github.com/tollgate-dev/tollgate/reposerver/render"
	"github.com/tollgate-dev/tollgate/reposerver/source"
)

// wireError turns an error of Generate into the reposerver.Error sent back.
func wireError(err error) *reposerver.Error {
	var we *reposerver.Error
	var sl *LimitError
	var fl *source.LimitError
	switch {
	case errors.As(err, &we):
		return we
	case errors.Is(err, reposerver.ErrRepoUnreachable):
		return &reposerver.Error{Code: reposerver.CodeUnreachable, Message: err.Error()}
	case errors.As(err, &sl), errors.As(err, &fl):
		return &reposerver.Error{Code: reposerver.CodeLimit, Message: err.Error()}
	}
	return &reposerver.Error{Code: reposerver.CodeInvalid, Message: err.Error()}
}

// Renderer evaluates tenant input: it renders one application source,
// with render.Build's signature, and generates an ApplicationSet's
// Applications, with appset.Generate's. *Runner implements it.
type Renderer interface {
	Build(ctx context.Context, root, dir string, opts render.Options, lim render.Limits) (render.Result, error)
	Generate(ctx context.Context, set *v1alpha1.ApplicationSet, src appset.Sources) ([]reposerver.Generated, error)
}

// InProcess renders with render.Build and generates with appset.Generate
// in the calling process: for tests and tools, never for tenant input in a
// process with cluster credentials.
type InProcess struct{}

// Build calls render.Build.
func (InProcess) Build(ctx context.Context, root, dir string, opts render.Options, lim render.Limits) (render.Result, error) {
	return render.Build(ctx, root, dir, opts, lim)
}

// Generate calls appset.Generate.
func (InProcess) Generate(ctx context.Context, set *v1alpha1.ApplicationSet, src appset.Sources) ([]reposerver.Generated, error) {
	return appset.Generate(ctx, set, src)
}
