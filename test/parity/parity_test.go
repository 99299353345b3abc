// Package parity proves that `tollgate test` judges what the sync engine
// applies (issue #11): every Application of the examples, of the CLI's
// test corpora and of a hand-written corpus of the fields where the two
// used to disagree is rendered by the CLI's path (check.RenderApplication:
// the steps check.Run takes for each Application, from a local checkout)
// and by the engine's (server.Service.Generate, as the reconciler asks
// for it, fetching the same files from a real Git server), and the two give
// the same objects with the same fields, or both refuse the Application
// with the same message.
//
// Each corpus is one repository under test: its files are pushed to the
// test Git server, and the URL the Applications name it by is rewritten to
// the served URL (keeping its spelling as far as a loopback http server
// allows), which the CLI is then given as the repository under test. An
// Application with a source in any other repository is counted and left
// out: the CLI does not fetch, by design.
//
// Two differences are normalized, both by construction: numbers (the
// engine's objects cross the repo-server's wire as JSON) and the
// repository and commit the engine names in a failed render's message.
// The CLI's objects carry nothing the engine's do not: both are
// render.Build's documents, without file or line annotations; check.Run
// adds the Application's file, line and name in front of the messages.
package parity

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/check"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/render"
	"github.com/tollgate-dev/tollgate/reposerver/server"
	"github.com/tollgate-dev/tollgate/reposerver/source"
	"github.com/tollgate-dev/tollgate/test/gitserver"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// The URLs the corpora's Applications name their repository by, the ones
// hack/demo.sh and the CLI's tests pass as --repo-url.
const (
	exampleRepoURL = "https://github.com/tollgate-dev/example-config.git"
	fixtureRepoURL = "https://git.example.com/acme/shop-config.git"
	// devRepoURL is the dev stack's Git server serving examples/config-repo,
	// which the `tollgate app get` fixtures point at.
	devRepoURL  = "http://127.0.0.1:18080/example-config.git"
	handRepoURL = "https://git.example.com/parity/hand.git"
)

// corpus is one repository under test and the Applications to render from
// it.
type corpus struct {
	name string
	// group sums corpora for the minimum counts (the cases of examples/bad
	// are one group).
	group string
	// root is the repository on disk: the CLI's checkout, and the files
	// pushed to the Git server.
	root string
	// appsDir is where the Applications are collected; root when empty.
	appsDir string
	// repoURL is how the Applications name the repository.
	repoURL string
}

// minimum is how many Applications a group must hold and how many of them
// must be compared, so that the test cannot pass by finding nothing.
type minimum struct{ found, compared int }

var minimums = map[string]minimum{
	// guestbook-dev, guestbook-prod (kustomize), podinfo (Helm), billing
	// (directory).
	"examples/config-repo": {found: 4, compared: 4},
	// argocd-destination, clusterrole, networkpolicy, self-exemption;
	// source-repo names another repository.
	"examples/bad": {found: 5, compared: 4},
	// web (kustomize), api (Helm), stray (directory), under three
	// spellings of the repository URL.
	"cmd/tollgate/testdata/repo": {found: 3, compared: 3},
	// Two billing Applications of examples/config-repo; podinfo takes its
	// chart from a Helm repository.
	"cmd/tollgate/testdata/app-get": {found: 3, compared: 2},
	"hand-written":                  {found: len(handCases), compared: len(handCases)},
}

// corpora lists the corpora under the repository root.
func corpora(t *testing.T) []corpus {
	t.Helper()
	top := filepath.Join("..", "..")
	out := []corpus{
		{name: "examples/config-repo", root: filepath.Join(top, "examples", "config-repo"), repoURL: exampleRepoURL},
		{name: "cmd/tollgate/testdata/repo", root: filepath.Join(top, "cmd", "tollgate", "testdata", "repo"), repoURL: fixtureRepoURL},
		{
			name: "cmd/tollgate/testdata/app-get", root: filepath.Join(top, "examples", "config-repo"),
			appsDir: filepath.Join(top, "cmd", "tollgate", "testdata", "app-get"), repoURL: devRepoURL,
		},
	}
	// Each bad case is a repository of its own, as hack/demo.sh and
	// cmd/tollgate's TestExampleBadCases check them.
	bad := filepath.Join(top, "examples", "bad")
	cases, err := os.ReadDir(bad)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.IsDir() {
			out = append(out, corpus{name: "examples/bad/" + c.Name(), group: "examples/bad", root: filepath.Join(bad, c.Name()), repoURL: exampleRepoURL})
		}
	}
	hand := t.TempDir()
	testutil.WriteFiles(t, hand, handRepo())
	out = append(out, corpus{name: "hand-written", root: hand, repoURL: handRepoURL})
	for i := range out {
		out[i].group = cmp.Or(out[i].group, out[i].name)
	}
	return out
}

// app is an Application document found in a corpus.
type app struct {
	file string
	obj  map[string]any
}

// name is the Application's metadata.name.
func (a app) name() string {
	meta, _ := a.obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return name
}

// outcome is what one path made of an Application: its objects, or the
// message it refused it with.
type outcome struct {
	Objects []object
	Err     string
}

// object is a rendered object with its identity, group/kind/namespace/name.
type object struct {
	ID     string
	Object map[string]any
}

func TestCLIAndEngineRenderAlike(t *testing.T) {
	srv := gitserver.New(t)
	base := hostLike(t, srv)
	cache, err := source.NewCache(t.TempDir(), source.Options{AllowInsecure: true})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := server.New(cache, server.Options{Renderer: server.InProcess{}})
	if err != nil {
		t.Fatal(err)
	}
	found, compared := map[string]int{}, map[string]int{}
	handSeen := map[string]bool{}
	for i, c := range corpora(t) {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("repo%d", i)
			srv.CreateRepo(t, name, readFiles(t, c.root))
			served := base + "/" + name + ".git"
			apps := collectApplications(t, cmp.Or(c.appsDir, c.root), false)
			found[c.group] += len(apps)
			for _, a := range apps {
				t.Run(a.name(), func(t *testing.T) {
					obj, local := servedApplication(t, a.obj, c.repoURL, served)
					if !local {
						t.Logf("%s: Application %q has a source outside the repository under test; not compared", a.file, a.name())
						return
					}
					compared[c.group]++
					cli := cliRender(t, obj, c.root, served)
					eng := engineRender(t, svc, obj)
					if diff := gocmp.Diff(cli, eng); diff != "" {
						t.Errorf("%s: Application %q renders differently (-cli +engine):\n%s", a.file, a.name(), diff)
					}
					if c.name == "hand-written" {
						handSeen[a.name()] = true
						checkHandCase(t, a.name(), cli)
					}
				})
			}
		})
	}
	for group, min := range minimums {
		if found[group] < min.found || compared[group] < min.compared {
			t.Errorf("%s: found %d Applications and compared %d, want at least %d and %d", group, found[group], compared[group], min.found, min.compared)
		}
	}
	for _, hc := range handCases {
		if !handSeen[hc.name] {
			t.Errorf("hand-written case %q was not compared", hc.name)
		}
	}
}

// cliRender renders the Application obj the way tollgate test does, with
// the checkout at root as the repository repoURL.
func cliRender(t *testing.T, obj map[string]any, root, repoURL string) outcome {
	t.Helper()
	objs, err := check.RenderApplication(t.Context(), obj, root, repoURL, server.InProcess{})
	if err != nil {
		return outcome{Err: err.Error()}
	}
	out := make([]object, len(objs))
	for i, o := range objs {
		// Normalization: the engine's objects cross the repo-server's wire
		// as JSON, so its numbers are float64 where the CLI's decoder keeps
		// int64. The CLI's are taken through the same encoding; nothing
		// else about them changes.
		data, err := json.Marshal(o)
		if err != nil {
			t.Fatalf("encode CLI object: %v", err)
		}
		out[i] = decodeObject(t, data)
	}
	return sorted(out)
}

// renderedAt is the repository and commit the engine names in a failed
// render's message: "spec.source (URL at 1a2b3c4): render ...".
var renderedAt = regexp.MustCompile(`^(spec\.sources?(?:\[\d+\])?) \([^ ]+ at [0-9a-f]+\): `)

// engineRender renders the Application obj the way the sync engine does
// (engine.manifestRequest, then the repo-server's Generate).
func engineRender(t *testing.T, svc *server.Service, obj map[string]any) outcome {
	t.Helper()
	// The engine reads Applications from the API server as JSON into the
	// typed Application; unknown fields are dropped, as the CRD's schema
	// prunes them.
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("encode Application: %v", err)
	}
	var app v1alpha1.Application
	if err := json.Unmarshal(data, &app); err != nil {
		t.Fatalf("decode Application: %v", err)
	}
	req := &reposerver.Request{
		AppName: app.Name, Namespace: app.Spec.Destination.Namespace,
		MultipleSources: app.Spec.HasMultipleSources(),
	}
	for _, s := range app.Sources() {
		req.Sources = append(req.Sources, reposerver.Source{Source: s})
	}
	resp, err := svc.Generate(t.Context(), req)
	if err != nil {
		// Normalization: a failed render names the repository and commit
		// it was fetched at, which the CLI (rendering a checkout) has no
		// commit for; the rest of the message is the same error.
		return outcome{Err: renderedAt.ReplaceAllString(err.Error(), "$1: ")}
	}
	out := make([]object, len(resp.Objects))
	for i, raw := range resp.Objects {
		out[i] = decodeObject(t, raw)
	}
	return sorted(out)
}

// decodeObject decodes a JSON object and names it.
func decodeObject(t *testing.T, data []byte) object {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("decode object: %v", err)
	}
	apiVersion, _ := m["apiVersion"].(string)
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	kind, _ := m["kind"].(string)
	meta, _ := m["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	return object{ID: fmt.Sprintf("%s/%s/%s/%s", group, kind, ns, name), Object: m}
}

// sorted orders the objects by identity, keeping the render order of
// objects with the same identity: the comparison is of the sets.
func sorted(objs []object) outcome {
	slices.SortStableFunc(objs, func(a, b object) int { return strings.Compare(a.ID, b.ID) })
	return outcome{Objects: objs}
}

// servedApplication returns a copy of the Application obj whose sources in
// the repository repoURL name served instead, and whether every source is
// in that repository (and there is at least one). A source keeps the
// spelling of its URL: without ".git" when it had none, with a trailing
// slash when it had one, an upper-case scheme. Hosts cannot keep theirs
// (the server is on a loopback address), so https://GIT.example.com/...
// becomes the served URL in lower case.
//
// An scp-like spelling (git@host:org/repo) cannot be served: such an
// address carries no port, and the test server's SSH transport listens on
// a random one. That both doors match it with the same normalization
// (reposerver.NormalizeURL) is covered by check's TestRunRepoURL and
// reposerver/source's URL tests.
func servedApplication(t *testing.T, obj map[string]any, repoURL, served string) (map[string]any, bool) {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("encode Application: %v", err)
	}
	var cp map[string]any
	if err := json.Unmarshal(data, &cp); err != nil {
		t.Fatalf("decode Application: %v", err)
	}
	want := reposerver.NormalizeURL(repoURL)
	spec, _ := cp["spec"].(map[string]any)
	var srcs []map[string]any
	if list, ok := spec["sources"].([]any); ok && len(list) > 0 {
		for _, s := range list {
			m, _ := s.(map[string]any)
			srcs = append(srcs, m)
		}
	} else if m, ok := spec["source"].(map[string]any); ok {
		srcs = append(srcs, m)
	}
	local := len(srcs) > 0
	for _, s := range srcs {
		u, _ := s["repoURL"].(string)
		chart, _ := s["chart"].(string)
		if s == nil || chart != "" || reposerver.NormalizeURL(u) != want {
			local = false
			continue
		}
		s["repoURL"] = respell(u, served)
	}
	return cp, local
}

// respell returns served spelled like orig: an upper-case scheme when
// orig's is, without ".git" when orig has none, with a trailing slash when
// orig has one.
func respell(orig, served string) string {
	if scheme, _, ok := strings.Cut(orig, "://"); ok && scheme != strings.ToLower(scheme) {
		servedScheme, rest, _ := strings.Cut(served, "://")
		served = strings.ToUpper(servedScheme) + "://" + rest
	}
	trimmed := strings.TrimRight(orig, "/")
	if !strings.HasSuffix(trimmed, ".git") {
		served = strings.TrimSuffix(served, ".git")
	}
	if trimmed != orig {
		served += "/"
	}
	return served
}

// hostLike serves the repositories of srv as Git hosting services do, at
// their names with and without ".git" (the test server answers only the
// former), and returns its base URL.
func hostLike(t *testing.T, srv *gitserver.Server) string {
	t.Helper()
	target, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	direct := proxy.Director
	proxy.Director = func(r *http.Request) {
		direct(r)
		name, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if !strings.HasSuffix(name, ".git") {
			r.URL.Path, r.URL.RawPath = "/"+name+".git/"+rest, ""
		}
	}
	ts := httptest.NewServer(proxy)
	t.Cleanup(ts.Close)
	return ts.URL
}

// collectApplications returns every Application (argoproj.io/v1alpha1) in
// the YAML and JSON files under dir, read with the CLI's decoder. Chart
// directories are skipped: their templates are not manifests. A file that
// does not decode fails the test, unless skipInvalid (the CLI's testdata
// holds invalid files on purpose).
func collectApplications(t *testing.T, dir string, skipInvalid bool) []app {
	t.Helper()
	var out []app
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if _, err := os.Stat(filepath.Join(p, "Chart.yaml")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		docs, _, err := render.DecodeFile(dir, rel, render.Limits{})
		var de *render.DecodeError
		if skipInvalid && errors.As(err, &de) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, d := range docs {
			if d.Object["apiVersion"] == "argoproj.io/v1alpha1" && d.Object["kind"] == "Application" {
				out = append(out, app{file: filepath.ToSlash(rel), obj: d.Object})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("collect Applications under %s: %v", dir, err)
	}
	return out
}

// readFiles returns the regular files under dir by slash-separated path.
func readFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	if len(files) == 0 {
		t.Fatalf("read %s: no files", dir)
	}
	return files
}

// TestCorporaHoldEveryApplication: every Application under examples/ and
// the CLI's testdata is in a corpus, so that a new directory of them cannot
// be left out of the comparison unnoticed.
func TestCorporaHoldEveryApplication(t *testing.T) {
	top := filepath.Join("..", "..")
	count := func(dir string, into map[string]int) {
		for _, a := range collectApplications(t, dir, true) {
			into[filepath.ToSlash(filepath.Join(dir, a.file))]++
		}
	}
	want, got := map[string]int{}, map[string]int{}
	count(filepath.Join(top, "examples"), want)
	count(filepath.Join(top, "cmd", "tollgate", "testdata"), want)
	for _, c := range corpora(t) {
		if c.name != "hand-written" {
			count(cmp.Or(c.appsDir, c.root), got)
		}
	}
	if len(want) == 0 {
		t.Fatal("found no Applications under examples/ and cmd/tollgate/testdata")
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("Applications outside the corpora (-everywhere +corpora):\n%s", diff)
	}
}
