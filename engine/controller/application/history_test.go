package application

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// commitRecorder answers every commit request with a commit named after
// its repository and revision, and records the requests.
type commitRecorder struct{ reqs []reposerver.CommitRequest }

func (r *commitRecorder) Commit(_ context.Context, req *reposerver.CommitRequest) (*reposerver.Commit, error) {
	r.reqs = append(r.reqs, *req)
	return &reposerver.Commit{SHA: req.Revision, Message: "commit of " + req.RepoURL}, nil
}

// TestHistoryCommitsOnlyPermitted: history entries are untrusted. A
// commit is asked for only for a repository the project's sourceRepos
// permit, with that project's credentials; an entry naming another
// repository (as anyone who may update the Application can write one),
// or any entry when the project does not exist, is never fetched and
// says why.
func TestHistoryCommitsOnlyPermitted(t *testing.T) {
	const (
		team    = "https://git.example.com/team/app.git"
		private = "https://git.example.com/platform/secrets.git"
	)
	repoSecret := func(name, url, project, password string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd", Labels: map[string]string{SecretTypeLabel: "repository"}},
			Data:       map[string][]byte{"url": []byte(url), "project": []byte(project), "username": []byte("git"), "password": []byte(password)},
		}
	}
	scheme := testutil.Scheme(t)
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		repoSecret("team", team, "team", "team-password"),
		repoSecret("platform", private, "platform", "platform-password"),
	).Build()
	git := func(url string) v1alpha1.ApplicationSource {
		return v1alpha1.ApplicationSource{RepoURL: url, Path: "."}
	}
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd"},
		Spec:       v1alpha1.ApplicationSpec{Project: "team", Source: &v1alpha1.ApplicationSource{RepoURL: team, Path: "."}},
		Status: v1alpha1.ApplicationStatus{History: []v1alpha1.RevisionHistory{
			{ID: 1, Source: git(team), Revision: "aaa"},
			{ID: 2, Source: git(private), Revision: "bbb"},
			{ID: 3, Sources: []v1alpha1.ApplicationSource{git(team), git(private), {RepoURL: "https://charts.example.com", Chart: "web"}}, Revisions: []string{"ccc", "ddd", "1.0.0"}},
			{ID: 4, Source: git("GIT@git.example.com:team/app"), Revision: "eee"},
		}},
	}
	project := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: "argocd"},
		Spec:       v1alpha1.AppProjectSpec{SourceRepos: []string{"https://git.example.com/team/*", "git@git.example.com:team/*"}},
	}
	commit := func(url, rev string) HistoryCommit {
		return HistoryCommit{Commit: &reposerver.Commit{SHA: rev, Message: "commit of " + url}}
	}
	refused := HistoryCommit{Unread: HistoryNotPermitted}

	t.Run("project permits its repositories only", func(t *testing.T) {
		rec := &commitRecorder{}
		got, err := HistoryCommits(t.Context(), c, "argocd", rec, app, project)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64][]HistoryCommit{
			1: {commit(team, "aaa")},
			2: {refused},
			3: {commit(team, "ccc"), refused, {}},
			4: {commit("GIT@git.example.com:team/app", "eee")},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("HistoryCommits (-want +got):\n%s", diff)
		}
		var asked []string
		for _, r := range rec.reqs {
			asked = append(asked, r.RepoURL+"@"+r.Revision)
			if r.Credentials.Password != "team-password" && r.RepoURL == team {
				t.Errorf("commit of %s asked with password %q, want the team project's", r.RepoURL, r.Credentials.Password)
			}
		}
		if diff := cmp.Diff([]string{team + "@aaa", team + "@ccc", "GIT@git.example.com:team/app@eee"}, asked); diff != "" {
			t.Errorf("commits asked for (-want +got):\n%s", diff)
		}
	})

	t.Run("missing project permits nothing", func(t *testing.T) {
		rec := &commitRecorder{}
		got, err := HistoryCommits(t.Context(), c, "argocd", rec, app, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64][]HistoryCommit{1: {refused}, 2: {refused}, 3: {refused, refused, {}}, 4: {refused}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("HistoryCommits (-want +got):\n%s", diff)
		}
		if len(rec.reqs) != 0 {
			t.Errorf("asked for %d commits without a project: %+v", len(rec.reqs), rec.reqs)
		}
	})
}
