package reposerver

import (
	"context"

	"github.com/tollgate-dev/tollgate/engine/source"
)

// CommitPath is where a repo-server answers a CommitRequest with a
// source.Commit: who wrote a deployed revision, for the web UI's history
// (Argo CD's revision metadata).
const CommitPath = "/v1/commit"

// CommitRequest asks for one commit of a Git repository.
type CommitRequest struct {
	RepoURL     string             `json:"repoURL"`
	Revision    string             `json:"revision"`
	Credentials source.Credentials `json:"credentials"`
}

// CommitReader reads commits: Service in process, Client through
// repo-servers.
type CommitReader interface {
	Commit(ctx context.Context, req *CommitRequest) (*source.Commit, error)
}

// commitSource is a Fetcher that also reads commits (source.Cache).
type commitSource interface {
	Commit(ctx context.Context, repoURL, revision string, creds source.Credentials) (source.Commit, error)
}

// Commit reads the commit req names, fetching it as a render would.
func (s *Service) Commit(ctx context.Context, req *CommitRequest) (*source.Commit, error) {
	cs, ok := s.sources.(commitSource)
	if !ok {
		return nil, &Error{Code: CodeInvalid, Message: "this repository service reads no commit metadata"}
	}
	if req.RepoURL == "" || req.Revision == "" {
		return nil, &Error{Code: CodeInvalid, Message: "commit request: repoURL and revision are required"}
	}
	c, err := cs.Commit(ctx, req.RepoURL, req.Revision, req.Credentials)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// Commit sends req to a repo-server as Generate does.
func (c *Client) Commit(ctx context.Context, req *CommitRequest) (*source.Commit, error) {
	var resp source.Commit
	if err := c.post(ctx, CommitPath, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
