package server

import (
	"context"

	"github.com/tollgate-dev/tollgate/reposerver"
)

// commitSource is a Fetcher that also reads commits (source.Cache).
type commitSource interface {
	Commit(ctx context.Context, repoURL, revision string, creds reposerver.Credentials) (reposerver.Commit, error)
}

// Commit reads the commit req names, fetching it as a render would.
func (s *Service) Commit(ctx context.Context, req *reposerver.CommitRequest) (*reposerver.Commit, error) {
	cs, ok := s.sources.(commitSource)
	if !ok {
		return nil, &reposerver.Error{Code: reposerver.CodeInvalid, Message: "this repository service reads no commit metadata"}
	}
	if req.RepoURL == "" || req.Revision == "" {
		return nil, &reposerver.Error{Code: reposerver.CodeInvalid, Message: "commit request: repoURL and revision are required"}
	}
	c, err := cs.Commit(ctx, req.RepoURL, req.Revision, req.Credentials)
	if err != nil {
		return nil, err
	}
	return &c, nil
}
