package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/render"
	"github.com/tollgate-dev/tollgate/reposerver/source"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

const (
	configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"
	chartYAML = "apiVersion: v2\nname: web\nversion: 0.1.0\n"
	// chartTemplate renders the values it was given.
	chartTemplate = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}}\ndata: {region: {{ .Values.region | quote }}}\n"
)

// countingRenderer counts renders and renders (and generates) in-process.
type countingRenderer struct {
	InProcess
	n atomic.Int32
}

func (c *countingRenderer) Build(ctx context.Context, root, dir string, opts render.Options, lim render.Limits) (render.Result, error) {
	c.n.Add(1)
	return render.Build(ctx, root, dir, opts, lim)
}

// fixture is a Git server with a chart repository and a values repository,
// and a Service over a fresh cache.
type fixture struct {
	srv      *gitserver.Server
	svc      *Service
	renders  *countingRenderer
	charts   string
	values   string
	chartRev string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := gitserver.New(t)
	f := &fixture{srv: srv, renders: &countingRenderer{}}
	f.charts = srv.CreateRepo(t, "charts", map[string]string{
		"web/Chart.yaml":               chartYAML,
		"web/templates/configmap.yaml": chartTemplate,
		"web/values.yaml":              "region: home\n",
		"plain/a.yaml":                 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"overlay/kustomization.yaml":   "resources: [cm.yaml]\n",
		"overlay/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k}\n",
	})
	f.values = srv.CreateRepo(t, "values", map[string]string{"prod.yaml": "region: eu\n"})
	f.chartRev = srv.Head(t, "charts", gitserver.DefaultBranch)
	cache, err := source.NewCache(t.TempDir(), source.Options{AllowInsecure: true})
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Renderer = f.renders
	if f.svc, err = New(cache, opts); err != nil {
		t.Fatal(err)
	}
	return f
}

func src(url, path string) reposerver.Source {
	return reposerver.Source{Source: v1alpha1.ApplicationSource{RepoURL: url, Path: path}}
}

// names returns the metadata.name of each object.
func names(t *testing.T, objs []json.RawMessage) []string {
	t.Helper()
	var out []string
	for _, o := range objs {
		var m struct {
			Metadata struct{ Name string } `json:"metadata"`
			Data     map[string]string     `json:"data"`
		}
		if err := json.Unmarshal(o, &m); err != nil {
			t.Fatal(err)
		}
		n := m.Metadata.Name
		if r := m.Data["region"]; r != "" {
			n += "=" + r
		}
		out = append(out, n)
	}
	return out
}

func TestGenerate(t *testing.T) {
	f := newFixture(t)
	chart := src(f.charts, "web")
	chart.Source.Helm = &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$values/prod.yaml"}}
	values := src(f.values, "")
	values.Source.Ref = "values"
	req := &reposerver.Request{AppName: "shop", Namespace: "web", MultipleSources: true, Sources: []reposerver.Source{chart, values, src(f.charts, "overlay"), src(f.charts, "plain")}}

	resp, err := f.svc.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"shop=eu", "k", "a"}, names(t, resp.Objects)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	wantTypes := []v1alpha1.ApplicationSourceType{v1alpha1.ApplicationSourceTypeHelm, "", v1alpha1.ApplicationSourceTypeKustomize, v1alpha1.ApplicationSourceTypeDirectory}
	if diff := cmp.Diff(wantTypes, resp.SourceTypes); diff != "" {
		t.Errorf("source types (-want +got):\n%s", diff)
	}
	if len(resp.Revisions) != 4 || resp.Revisions[0] != f.chartRev || resp.Rendered != 3 || resp.Cached != 0 || resp.Key == "" {
		t.Errorf("response = revisions %v rendered %d cached %d key %q", resp.Revisions, resp.Rendered, resp.Cached, resp.Key)
	}

	// The same request again is served from the cache.
	again, err := f.svc.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Key != resp.Key || again.Cached != 3 || again.Rendered != 0 || len(again.Objects) != 3 || f.renders.n.Load() != 3 {
		t.Errorf("second request: key same %v, cached %d, rendered %d, objects %d, renders %d", again.Key == resp.Key, again.Cached, again.Rendered, len(again.Objects), f.renders.n.Load())
	}

	// Knowing the key, the caller gets no objects.
	known := *req
	known.KnownKey = resp.Key
	unchanged, err := f.svc.Generate(t.Context(), &known)
	if err != nil {
		t.Fatal(err)
	}
	if !unchanged.Unchanged || len(unchanged.Objects) != 0 || unchanged.Key != resp.Key || !cmp.Equal(unchanged.SourceTypes, wantTypes) {
		t.Errorf("with KnownKey: unchanged %v, objects %d, types %v", unchanged.Unchanged, len(unchanged.Objects), unchanged.SourceTypes)
	}

	// A new commit of the values repository changes the chart's render.
	f.srv.Commit(t, "values", map[string]string{"prod.yaml": "region: us\n"}, "move to us")
	moved, err := f.svc.Generate(t.Context(), &known)
	if err != nil {
		t.Fatal(err)
	}
	if moved.Unchanged || moved.Key == resp.Key || moved.Rendered != 1 || moved.Cached != 2 {
		t.Errorf("after a values commit: unchanged %v, key changed %v, rendered %d, cached %d", moved.Unchanged, moved.Key != resp.Key, moved.Rendered, moved.Cached)
	}
	if got := names(t, moved.Objects)[0]; got != "shop=us" {
		t.Errorf("chart rendered %s, want shop=us", got)
	}

	// NoCache renders again.
	hard := *req
	hard.NoCache, hard.KnownKey = true, moved.Key
	before := f.renders.n.Load()
	if res, err := f.svc.Generate(t.Context(), &hard); err != nil || res.Unchanged || res.Rendered != 3 || f.renders.n.Load() != before+3 {
		t.Errorf("hard refresh: err %v, unchanged %v, rendered %d", err, res != nil && res.Unchanged, f.renders.n.Load()-before)
	}
}

func TestGenerateErrors(t *testing.T) {
	f := newFixture(t)
	patched := src(f.charts, "overlay")
	patched.Source.Kustomize = &v1alpha1.ApplicationSourceKustomize{Version: "v5.4.0"}
	chart := reposerver.Source{Source: v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.0.0"}}
	tests := []struct {
		name     string
		req      reposerver.Request
		wantCode string
		want     string
	}{
		{name: "no sources", req: reposerver.Request{}, wantCode: reposerver.CodeInvalid, want: "spec.source or spec.sources must be set"},
		{name: "no repoURL", req: reposerver.Request{Sources: []reposerver.Source{{}}}, wantCode: reposerver.CodeInvalid, want: "spec.source.repoURL is empty"},
		{name: "helm repository", req: reposerver.Request{Sources: []reposerver.Source{src(f.charts, "plain"), chart}, MultipleSources: true}, wantCode: reposerver.CodeInvalid, want: `spec.sources[1].chart is not supported: this repo-server fetches no Helm repository sources (chart "web" from https://charts.example.com)`},
		{name: "unsupported field", req: reposerver.Request{Sources: []reposerver.Source{patched}}, wantCode: reposerver.CodeInvalid, want: "spec.source.kustomize.version is not supported"},
		{name: "missing path", req: reposerver.Request{Sources: []reposerver.Source{src(f.charts, "nope")}}, wantCode: reposerver.CodeInvalid, want: "spec.source ("},
		{name: "missing revision", req: reposerver.Request{Sources: []reposerver.Source{{Source: v1alpha1.ApplicationSource{RepoURL: f.charts, TargetRevision: "v9"}}}}, wantCode: reposerver.CodeInvalid, want: "v9"},
		{name: "unreachable", req: reposerver.Request{Sources: []reposerver.Source{src("http://127.0.0.1:1/x.git", "")}}, wantCode: reposerver.CodeUnreachable, want: "repository unreachable"},
		{name: "kustomize build option", req: reposerver.Request{Sources: []reposerver.Source{src(f.charts, "overlay")}, KustomizeBuildOptions: "--enable-exec"}, wantCode: reposerver.CodeInvalid,
			want: "argocd-cm kustomize.buildOptions --enable-exec is not supported: it would run programs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.Generate(t.Context(), &tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
			if we := wireError(err); we.Code != tc.wantCode {
				t.Errorf("code = %s, want %s", we.Code, tc.wantCode)
			}
			if tc.wantCode == reposerver.CodeUnreachable && !errors.Is(err, reposerver.ErrRepoUnreachable) {
				t.Errorf("error does not wrap reposerver.ErrRepoUnreachable")
			}
		})
	}
}

// TestGenerateKustomizeBuildOptions: argocd-cm's kustomize.buildOptions
// reach Kustomize renders only: a directory renders the same, with the
// same key, whatever they are.
func TestGenerateKustomizeBuildOptions(t *testing.T) {
	f := newFixture(t)
	plain := &reposerver.Request{AppName: "shop", Sources: []reposerver.Source{src(f.charts, "plain")}}
	before, err := f.svc.Generate(t.Context(), plain)
	if err != nil {
		t.Fatal(err)
	}
	withOptions := *plain
	withOptions.KustomizeBuildOptions = "--enable-exec"
	after, err := f.svc.Generate(t.Context(), &withOptions)
	if err != nil || after.Key != before.Key {
		t.Errorf("a directory with build options: error %v, key changed %v", err, err == nil && after.Key != before.Key)
	}
	overlay := &reposerver.Request{AppName: "shop", Sources: []reposerver.Source{src(f.charts, "overlay")}}
	first, err := f.svc.Generate(t.Context(), overlay)
	if err != nil {
		t.Fatal(err)
	}
	reordered := *overlay
	reordered.KustomizeBuildOptions = "--reorder none"
	second, err := f.svc.Generate(t.Context(), &reordered)
	if err != nil || second.Key == first.Key {
		t.Errorf("a kustomization with build options: error %v, key unchanged %v", err, err == nil && second.Key == first.Key)
	}
}

func TestRenderKey(t *testing.T) {
	chart := fetched{source: v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/charts.git", Path: "web"}, checkout: source.Checkout{Revision: "aaa", Dir: "/c/1"}}
	values := fetched{source: v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/values", Ref: "values"}, checkout: source.Checkout{Revision: "bbb", Dir: "/c/2"}}
	opts := render.Options{Helm: &render.HelmOptions{ValueFiles: []string{"$values/prod.yaml"}}, Refs: map[string]string{"values": "/c/2"}}
	key := func(f fetched, o render.Options, srcs ...fetched) string {
		t.Helper()
		k, err := renderKey(f, o, srcs, nil)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key(chart, opts, chart, values)

	moved := values
	moved.checkout.Dir = "/elsewhere"
	movedOpts := opts
	movedOpts.Refs = map[string]string{"values": "/elsewhere"}
	if got := key(chart, movedOpts, chart, moved); got != base {
		t.Error("key changed with the ref checkout's directory; want it to depend on its revision only")
	}
	newer := values
	newer.checkout.Revision = "ccc"
	if got := key(chart, opts, chart, newer); got == base {
		t.Error("key unchanged when the ref source moved to another commit")
	}
	other := chart
	other.checkout.Revision = "ddd"
	if got := key(other, opts, other, values); got == base {
		t.Error("key unchanged when the chart moved to another commit")
	}

	// A remote Kustomize base counts by its commit, not its checkout.
	overlay := fetched{source: v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "web"}, checkout: source.Checkout{Revision: "eee", Dir: "/c/3"}}
	kopts := func(dir string) render.Options {
		return render.Options{RemoteBases: map[string]render.RemoteBase{"github.com/org/base//b?ref=v1": {Root: dir, Path: "b", RepoURL: "https://github.com/org/base", Ref: "v1"}}}
	}
	bkey := func(dir, rev string) string {
		t.Helper()
		k, err := renderKey(overlay, kopts(dir), []fetched{overlay}, []fetchedBase{{entry: "github.com/org/base//b?ref=v1", repoURL: "https://github.com/org/base", revision: rev}})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if bkey("/c/4", "fff") != bkey("/elsewhere", "fff") {
		t.Error("key changed with the remote base's checkout directory; want it to depend on its revision only")
	}
	if bkey("/c/4", "fff") == bkey("/c/4", "ggg") {
		t.Error("key unchanged when the remote base's ref moved to another commit")
	}
}

// servedOnly serves one repository through a cache and no other, as
// tollgate test's checkout does.
type servedOnly struct {
	Fetcher
	url string
}

func (s servedOnly) Fetch(ctx context.Context, repoURL, revision string, creds reposerver.Credentials, opts ...source.FetchOption) (source.Checkout, error) {
	if repoURL != s.url {
		return source.Checkout{}, &NotServedError{RepoURL: repoURL}
	}
	return s.Fetcher.Fetch(ctx, repoURL, revision, creds, opts...)
}

// TestRender: Render leaves out what is not served, says why, and renders
// the other sources past one that fails.
func TestRender(t *testing.T) {
	f := newFixture(t)
	cache, err := source.NewCache(t.TempDir(), source.Options{AllowInsecure: true})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(servedOnly{Fetcher: cache, url: f.charts}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	chart := src(f.charts, "web")
	chart.Source.Helm = &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$values/prod.yaml"}}
	values := src(f.values, "")
	values.Source.Ref = "values"
	helmRepo := reposerver.Source{Source: v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.0.0"}}
	req := &reposerver.Request{AppName: "shop", MultipleSources: true, Sources: []reposerver.Source{
		chart, values, src(f.charts, "nope"), src(f.charts, "overlay"), helmRepo, {}, src(f.charts, "web"),
	}}
	got, err := svc.Render(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		Field, Dir, Kind, ValueFile string
		RefOnly, NotServed, Failed  bool
		Docs                        int
	}
	var outcomes []outcome
	for _, r := range got {
		outcomes = append(outcomes, outcome{Field: r.Field, Dir: r.Dir, Kind: r.Result.Kind, ValueFile: r.ValueFile,
			RefOnly: r.RefOnly, NotServed: r.NotServed, Failed: r.Err != nil, Docs: len(r.Result.Documents)})
	}
	want := []outcome{
		{Field: "spec.sources[0]", Dir: "web", ValueFile: "$values/prod.yaml"},
		{Field: "spec.sources[1]", Dir: ".", RefOnly: true, NotServed: true},
		{Field: "spec.sources[2]", Dir: "nope", Failed: true},
		{Field: "spec.sources[3]", Dir: "overlay", Kind: render.KindKustomize, Docs: 1},
		{Field: "spec.sources[4]", Dir: ".", NotServed: true},
		{Field: "spec.sources[5]", Dir: ".", NotServed: true},
		{Field: "spec.sources[6]", Dir: "web", Kind: render.KindHelm, Docs: 1},
	}
	if diff := cmp.Diff(want, outcomes); diff != "" {
		t.Errorf("Render (-want +got):\n%s", diff)
	}
	if err := got[2].Err; err == nil || !strings.HasPrefix(err.Error(), "spec.sources[2]: ") {
		t.Errorf("failed source's error = %v, want it to name spec.sources[2]", err)
	}
	if d := got[6].Result.Documents; len(d) == 1 && d[0].File != "web/templates/configmap.yaml" {
		t.Errorf("rendered document's file = %q, want the template's", d[0].File)
	}

	// Generate serves no partial answer: a repository not served fails it.
	if _, err := svc.Generate(t.Context(), req); err == nil {
		t.Error("Generate with a source not served: no error")
	}
}
