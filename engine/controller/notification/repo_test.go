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

// fakeRepoServer records the requests and answers one commit and the
// details of a Helm chart.
type fakeRepoServer struct {
	reqs    []*reposerver.CommitRequest
	details []*reposerver.Request
}

func (f *fakeRepoServer) AppDetails(_ context.Context, req *reposerver.Request) (*reposerver.AppDetails, error) {
	f.details = append(f.details, req)
	return &reposerver.AppDetails{Type: v1alpha1.ApplicationSourceTypeHelm, Helm: &reposerver.HelmDetails{
		ValueFiles: []string{"values.yaml"}, Values: "image:\n  tag: 1.0.0\n",
		Parameters: map[string]string{"replicas": "2", "image.tag": "1.0.0"},
	}}, nil
}

func (f *fakeRepoServer) Commit(_ context.Context, req *reposerver.CommitRequest) (*reposerver.Commit, error) {
	f.reqs = append(f.reqs, req)
	if req.Revision == "missing" {
		return nil, errors.New("revision missing not found")
	}
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
	server := &fakeRepoServer{}
	r := &repoCalls{ctx: t.Context(), reader: c, namespace: "argocd", server: server, app: app, project: project(repoURL)}
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
	// A failure is asked for once per evaluation too.
	for range 2 {
		if _, err := r.CommitMetadata("missing"); err == nil {
			t.Error("a missing revision: no error")
		}
	}
	if len(server.reqs) != 2 {
		t.Errorf("%d requests, want 2: one each for abc and the missing revision", len(server.reqs))
	}
	for name, p := range map[string]*v1alpha1.AppProject{"not permitted": project("https://git.example.com/other.git"), "no project": nil} {
		r := &repoCalls{ctx: t.Context(), reader: c, namespace: "argocd", server: server, app: app, project: p}
		if _, err := r.CommitMetadata("abc"); !errors.Is(err, errNotPermitted) {
			t.Errorf("%s: %v, want %v", name, err, errNotPermitted)
		}
	}
}

// TestAppDetails: repo.GetAppDetails asks the repo-server for the
// details of the Application's sources at their target revisions, once
// per evaluation, with the Application's own Helm parameters beside the
// chart's; only when its project permits every source's repository.
func TestAppDetails(t *testing.T) {
	const repoURL = "https://git.example.com/shop.git"
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Project: "shop", Sources: []v1alpha1.ApplicationSource{
		{RepoURL: repoURL, Path: "chart", TargetRevision: "main", Helm: &v1alpha1.ApplicationSourceHelm{
			Parameters:     []v1alpha1.HelmParameter{{Name: "image.tag", Value: "1.2.0"}},
			FileParameters: []v1alpha1.HelmFileParameter{{Name: "config", Path: "files/config.json"}},
		}},
		{RepoURL: "https://git.example.com/values.git", TargetRevision: "main", Ref: "values"},
	}}}
	project := func(repos ...string) *v1alpha1.AppProject {
		return &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "shop"}, Spec: v1alpha1.AppProjectSpec{SourceRepos: repos}}
	}
	c := fake.NewClientBuilder().Build()
	server := &fakeRepoServer{}
	r := &repoCalls{ctx: t.Context(), reader: c, namespace: "argocd", server: server, app: app, project: project("https://git.example.com/*"),
		kustomizeBuildOptions: "--enable-helm", listingMaxAge: 3 * time.Second}
	for range 2 {
		got, err := r.AppDetails()
		if err != nil {
			t.Fatal(err)
		}
		want := notify.AppDetail{Type: "Helm", Helm: &notify.CustomHelmAppSpec{
			HelmAppSpec: notify.HelmAppSpec{
				ValueFiles: []string{"values.yaml"}, Values: "image:\n  tag: 1.0.0\n",
				Parameters:     []*notify.HelmParameter{{Name: "image.tag", Value: "1.0.0"}, {Name: "replicas", Value: "2"}},
				FileParameters: []*notify.HelmFileParameter{{Name: "config", Path: "files/config.json"}},
			},
			HelmParameterOverrides: []notify.HelmParameter{{Name: "image.tag", Value: "1.2.0"}},
		}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("details (-want +got):\n%s", diff)
		}
		if v := got.Helm.GetParameterValueByName("image.tag"); v != "1.2.0" {
			t.Errorf("image.tag = %q, want the Application's own 1.2.0", v)
		}
	}
	if len(server.details) != 1 || len(server.details[0].Sources) != 2 || server.details[0].Sources[0].Source.TargetRevision != "main" {
		t.Fatalf("requests %+v, want one with both sources at their target revisions", server.details)
	}
	if req := server.details[0]; req.KustomizeBuildOptions != "--enable-helm" || req.ListingMaxAge != 3*time.Second {
		t.Errorf("request with build options %q and listing age %v, want the controller's", req.KustomizeBuildOptions, req.ListingMaxAge)
	}
	for name, p := range map[string]*v1alpha1.AppProject{"a source not permitted": project(repoURL), "no project": nil} {
		r := &repoCalls{ctx: t.Context(), reader: c, namespace: "argocd", server: server, app: app, project: p}
		if _, err := r.AppDetails(); !errors.Is(err, errNotPermitted) {
			t.Errorf("%s: %v, want %v", name, err, errNotPermitted)
		}
	}
	if len(server.details) != 1 {
		t.Errorf("%d requests, want none for a project that does not permit the sources", len(server.details)-1)
	}
}
