package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/render"
	"github.com/tollgate-dev/tollgate/reposerver/source"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// baseFixture is a Git server (behind basic auth) with an application
// repository whose overlay names a remote base in a second repository,
// and a Service over a fresh cache that renders in child processes.
type baseFixture struct {
	srv        *gitserver.Server
	svc        *Service
	cache      *source.Cache
	apps, base string
	entry      string
}

func newBaseFixture(t *testing.T) *baseFixture {
	t.Helper()
	srv := gitserver.New(t, gitserver.WithBasicAuth("reader", "s3cret"))
	f := &baseFixture{srv: srv}
	f.base = srv.CreateRepo(t, "base", map[string]string{
		"base/kustomization.yaml": "resources: [deploy.yaml]\n",
		"base/deploy.yaml":        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1}\n",
	})
	f.entry = f.base + "//base?ref=" + gitserver.DefaultBranch
	f.apps = srv.CreateRepo(t, "apps", map[string]string{
		"overlay/kustomization.yaml": "resources:\n- " + f.entry + "\nnamePrefix: prod-\n",
	})
	var err error
	if f.cache, err = source.NewCache(t.TempDir(), source.Options{AllowInsecure: true}); err != nil {
		t.Fatal(err)
	}
	// The child process reads the base's checkout as it reads the
	// source's.
	opts := DefaultOptions()
	opts.Renderer = runner(DefaultLimits())
	if f.svc, err = New(f.cache, opts); err != nil {
		t.Fatal(err)
	}
	return f
}

// request asks for the overlay with the source's credentials, the
// project's sourceRepos and the Git repositories given.
func (f *baseFixture) request(sourceRepos []string, repos ...reposerver.GitRepository) *reposerver.Request {
	s := src(f.apps, "overlay")
	s.Credentials = reposerver.Credentials{Username: "reader", Password: "s3cret"}
	return &reposerver.Request{AppName: "web", Project: "team", Sources: []reposerver.Source{s}, SourceRepos: sourceRepos, GitRepositories: repos}
}

// TestGenerateRemoteBase renders an overlay on a remote base fetched with
// the credentials of a repo-creds template the request carries, and again
// when the base's branch moves, though the overlay did not.
func TestGenerateRemoteBase(t *testing.T) {
	f := newBaseFixture(t)
	creds := reposerver.GitRepository{URL: f.srv.URL(), Template: true, Credentials: reposerver.Credentials{Username: "reader", Password: "s3cret"}}
	req := f.request([]string{f.apps, f.base}, creds)
	resp, err := f.svc.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"prod-web"}, names(t, resp.Objects)); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}

	f.srv.Commit(t, "base", map[string]string{"base/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n", "base/kustomization.yaml": "resources: [deploy.yaml, extra.yaml]\n"}, "add extra")
	req.KnownKey = resp.Key
	again, err := f.svc.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Unchanged || again.Key == resp.Key {
		t.Fatalf("after the base moved: unchanged %v, same key %v; want a new render", again.Unchanged, again.Key == resp.Key)
	}
	if d := cmp.Diff([]string{"prod-extra", "prod-web"}, names(t, again.Objects)); d != "" {
		t.Errorf("objects after the base moved (-want +got):\n%s", d)
	}

	// Without credentials for the base, its fetch is refused.
	if _, err := f.svc.Generate(t.Context(), f.request([]string{"*"})); err == nil || !strings.Contains(err.Error(), `spec.source: overlay/kustomization.yaml line 2: remote base "`+f.entry+`"`) {
		t.Errorf("without the base's credentials: error = %v, want its fetch refused, naming it", err)
	}
}

// TestGenerateRemoteBaseNotPermitted: a remote base from a repository the
// project does not permit fails the render with the rule's id, the
// kustomization, the entry and the repository, and is never fetched.
func TestGenerateRemoteBaseNotPermitted(t *testing.T) {
	f := newBaseFixture(t)
	_, err := f.svc.Generate(t.Context(), f.request([]string{f.apps}))
	want := `project-source-denied: spec.source: overlay/kustomization.yaml line 2: remote base "` + f.entry + `": repository ` + f.base +
		` is not permitted in project "team": add it to the project's spec.sourceRepos`
	var we *reposerver.Error
	if !errors.As(err, &we) || we.Code != reposerver.CodeInvalid || we.Message != want {
		t.Errorf("error:\n got %v\nwant %s (Invalid)", err, want)
	}
	if n := f.srv.Fetches("base"); n != 0 {
		t.Errorf("the base's repository was read %d times, want never", n)
	}
}

// TestRenderRemoteBaseNotServed: Render leaves out a source whose remote
// base the base Fetcher does not serve and names the base; Generate fails.
func TestRenderRemoteBaseNotServed(t *testing.T) {
	f := newBaseFixture(t)
	opts := DefaultOptions()
	opts.Bases = servedOnly{Fetcher: f.cache, url: f.apps}
	svc, err := New(f.cache, opts)
	if err != nil {
		t.Fatal(err)
	}
	req := f.request([]string{"*"})
	got, err := svc.Render(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := &UnservedBaseError{Entry: f.entry, File: "overlay/kustomization.yaml", Line: 2}
	if len(got) != 1 || got[0].Rendered() || cmp.Diff(want, got[0].RemoteBase) != "" {
		t.Errorf("Render = %+v, want the source left out for base %+v", got, want)
	}
	if _, err := svc.Generate(t.Context(), req); !errors.As(err, &want) {
		t.Errorf("Generate: error = %v, want an *UnservedBaseError", err)
	}
	fetched, err := svc.FetchRemote(t.Context(), t.TempDir(), ".", render.Options{})
	if err != nil || fetched.RemoteBases != nil || fetched.KustomizeCharts != nil {
		t.Errorf("FetchRemote of a directory without a kustomization = %+v, %v; want nothing fetched", fetched, err)
	}
}
