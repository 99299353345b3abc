package server

import (
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// TestCommitOverTheWire: a commit read through a repo-server is the one
// read in process, and a bad request fails the same way on both.
func TestCommitOverTheWire(t *testing.T) {
	f := newFixture(t)
	ca := newTestCA(t)
	c := newClient(t, ca, ca.serve(t, "repo.test", NewHandler(f.svc, logr.Discard())))
	req := &reposerver.CommitRequest{RepoURL: f.charts, Revision: f.chartRev}
	local, err := f.svc.Commit(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if local.SHA != f.chartRev || local.Author == "" || local.Message == "" {
		t.Errorf("in process: %+v", local)
	}
	remote, err := c.Commit(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(local, remote); diff != "" {
		t.Errorf("over the wire (-in process +remote):\n%s", diff)
	}
	_, err = c.Commit(t.Context(), &reposerver.CommitRequest{RepoURL: f.charts})
	var we *reposerver.Error
	if !errors.As(err, &we) || we.Code != reposerver.CodeInvalid {
		t.Errorf("no revision: %v, want an invalid request", err)
	}
}
