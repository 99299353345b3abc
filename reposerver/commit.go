package reposerver

import "context"

// CommitPath is where a repo-server answers a CommitRequest with a
// Commit: who wrote a deployed revision, for the web UI's history
// (Argo CD's revision metadata).
const CommitPath = "/v1/commit"

// CommitRequest asks for one commit of a Git repository.
type CommitRequest struct {
	RepoURL     string      `json:"repoURL"`
	Revision    string      `json:"revision"`
	Credentials Credentials `json:"credentials"`
}

// CommitReader reads commits: Service in process, Client through
// repo-servers.
type CommitReader interface {
	Commit(ctx context.Context, req *CommitRequest) (*Commit, error)
}

// Commit sends req to a repo-server as Generate does.
func (c *Client) Commit(ctx context.Context, req *CommitRequest) (*Commit, error) {
	var resp Commit
	if err := c.post(ctx, CommitPath, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
