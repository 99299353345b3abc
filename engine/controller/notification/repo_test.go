package notification

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/notify"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// fakeCommits records the requests and answers one commit.
type fakeCommits struct{ reqs []*reposerver.CommitRequest }

func (f *fakeCommits) Commit(_ context.Context, req *reposerver.CommitRequest) (*reposerver.Commit, error) {
	f.reqs = append(f.reqs, req)
	return &reposerver.Commit{SHA: req.Revision, Author: "Ann <ann@example.com>", Message: "fix", Date: time.Unix(0, 0).UTC(), Tags: []string{"v1"}}, nil
}

// TestCommits: repo.GetCommitMetadata reads a commit of the Application's
// source repository through the repo-server, once per evaluation, and
// only when its project permits the repository.
func TestCommits(t *testing.T) {
	const repoURL = "https://git.example.com/shop.git"
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Project: "shop", Source: &v1alpha1.ApplicationSource{RepoURL: repoURL}}}
	project := func(repos ...string) *v1alpha1.AppProject {
		return &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "shop"}, Spec: v1alpha1.AppProjectSpec{SourceRepos: repos}}
	}
	c := fake.NewClientBuilder().Build()
	server := &fakeCommits{}
	r := &commits{ctx: t.Context(), reader: c, namespace: "argocd", server: server, app: app, project: project(repoURL)}
	for range 2 {
		got, err := r.CommitMetadata("abc")
		if err != nil {
			t.Fatal(err)
		}
		want := notify.CommitMetadata{Message: "fix", Author: "Ann <ann@example.com>", Date: time.Unix(0, 0).UTC(), Tags: []string{"v1"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("metadata (-want +got):\n%s", diff)
		}
	}
	if len(server.reqs) != 1 || server.reqs[0].RepoURL != repoURL || server.reqs[0].Revision != "abc" {
		t.Errorf("requests %+v, want one for the source's repository", server.reqs)
	}
	for name, p := range map[string]*v1alpha1.AppProject{"not permitted": project("https://git.example.com/other.git"), "no project": nil} {
		r := &commits{ctx: t.Context(), reader: c, namespace: "argocd", server: server, app: app, project: p}
		if _, err := r.CommitMetadata("abc"); !errors.Is(err, errNotPermitted) {
			t.Errorf("%s: %v, want %v", name, err, errNotPermitted)
		}
	}
}
