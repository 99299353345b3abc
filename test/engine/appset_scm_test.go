package engine_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/scmapi"
)

// pullRequestSet generates one Application per open pull request labelled
// preview of repository org/<fixture> on the GitHub API %[5]s, with the
// token of Secret %[6]s, polling every 2 seconds.
const pullRequestSet = `
spec:
  generators:
  - pullRequest:
      github:
        owner: org
        repo: '%[1]s'
        api: '%[5]s'
        tokenRef: {secretName: '%[6]s', key: token}
        labels: [preview]
      requeueAfterSeconds: 2
  template:
    metadata:
      name: '%[1]s-pr-{{number}}'
      annotations: {tollgate.dev/head: '{{head_short_sha}}', tollgate.dev/branch: '{{branch_slug}}'}
    spec:
      project: %[1]s
      source: {repoURL: '%[3]s', targetRevision: '%[4]s', path: apps/alpha}
      destination: {server: 'https://kubernetes.default.svc', namespace: '%[2]s'}
`

// scmSecret creates a Secret holding token (and url, when set) in the
// control-plane namespace, labelled as SCM credentials when labelled.
func (f *fixture) scmSecret(name, token, url string, labelled bool) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: argoNS}, StringData: map[string]string{"token": token}}
	if url != "" {
		s.StringData["url"] = url
	}
	if labelled {
		s.Labels = map[string]string{"argocd.argoproj.io/secret-type": "scm-creds"}
	}
	f.create(s)
}

// TestApplicationSetPullRequests: the pull request generator, through the
// repo-server's sandboxed generation, asks a GitHub API (an in-process
// fake answering as GitHub documents) with the token of an scm-creds
// Secret and generates one Application per labelled open pull request; a
// pull request opened or closed changes them at the next poll. A Secret
// without the scm-creds label is refused with Argo CD's message; a token
// whose Secret names another API is not sent to the generator's, and
// that API hears nothing.
func TestApplicationSetPullRequests(t *testing.T) {
	f := newFixture(t, map[string]string{"apps/alpha/cm.yaml": configMap("alpha", "1")})
	f.project()
	api := scmapi.New(t, "gh-t0ken")
	api.SetPulls("org/"+f.name,
		scmapi.PullRequest{Number: 1, Title: "Add cache", Branch: "feat/Cache_Layer", TargetBranch: "main", SHA: "0123456789abcdef0123456789abcdef01234567", Author: "ann", Labels: []string{"preview"}},
		scmapi.PullRequest{Number: 2, Title: "No preview", Branch: "chore", TargetBranch: "main", SHA: "1111111111111111111111111111111111111111", Author: "bob"},
		scmapi.PullRequest{Number: 3, Title: "Docs", Branch: "docs", TargetBranch: "main", SHA: "2222222222222222222222222222222222222222", Author: "cy", Labels: []string{"preview", "docs"}},
	)
	f.scmSecret(f.name+"-gh", "gh-t0ken", api.URL, true)
	expand := func(secret, apiURL string) string {
		return strings.NewReplacer("%[5]s", apiURL, "%[6]s", secret).Replace(pullRequestSet)
	}
	set := f.appSet(argoNS, expand(f.name+"-gh", api.URL))
	apps := waitGenerated(t, argoNS, set, f.name+"-pr-1", f.name+"-pr-3")
	if h := waitCondition(t, set, v1alpha1.ApplicationSetConditionResourcesUpToDate, v1alpha1.ApplicationSetConditionStatusTrue,
		v1alpha1.ApplicationSetReasonApplicationSetUpToDate).Status.Health; h.Status != v1alpha1.HealthStatusHealthy {
		t.Errorf("status.health %+v, want Healthy", h)
	}
	if a := apps[f.name+"-pr-1"]; a.Annotations["tollgate.dev/head"] != "01234567" || a.Annotations["tollgate.dev/branch"] != "feat-cache-layer" {
		t.Errorf("parameters of pull request 1: %v", a.Annotations)
	}
	api.SetPulls("org/"+f.name,
		scmapi.PullRequest{Number: 3, Title: "Docs", Branch: "docs", TargetBranch: "main", SHA: "2222222222222222222222222222222222222222", Author: "cy", Labels: []string{"preview"}},
		scmapi.PullRequest{Number: 4, Title: "New", Branch: "new", TargetBranch: "main", SHA: "3333333333333333333333333333333333333333", Author: "dee", Labels: []string{"preview"}},
	)
	waitGenerated(t, argoNS, set, f.name+"-pr-3", f.name+"-pr-4")

	// A Secret that is not labelled as SCM credentials is not read.
	f.scmSecret(f.name+"-plain", "gh-t0ken", api.URL, false)
	plain := f.appSetNamed(argoNS, f.name+"-plain", expand(f.name+"-plain", api.URL))
	waitCondition(t, plain, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue,
		v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError,
		"spec.generators[0].pullRequest.github.tokenRef: error fetching Secret token: secret "+argoNS+"/"+f.name+"-plain is not a valid SCM creds secret: secret must have label \"argocd.argoproj.io/secret-type\"=\"scm-creds\"")

	// The token's Secret names api; an ApplicationSet pointing it at
	// another API gets nothing sent there.
	other := scmapi.New(t, "")
	other.SetPulls("org/"+f.name, scmapi.PullRequest{Number: 9, Branch: "x", TargetBranch: "main", SHA: "9999999999999999999999999999999999999999", Labels: []string{"preview"}})
	stolen := f.appSetNamed(argoNS, f.name+"-stolen", expand(f.name+"-gh", other.URL))
	live := waitCondition(t, stolen, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue,
		v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError,
		"the token was not sent", "not to "+other.URL)
	if h := live.Status.Health; h.Status != v1alpha1.HealthStatusDegraded || !strings.Contains(h.Message, "the token was not sent") {
		t.Errorf("status.health %+v, want Degraded with the error", h)
	}
	if reqs := other.Requests(); len(reqs) != 0 {
		t.Errorf("the other API was asked: %v", reqs)
	}
	if apps := generated(t, argoNS, stolen); len(apps) != 0 {
		t.Errorf("generated %v", apps)
	}
}

// TestApplicationSetPullRequestWebhook: a GitHub pull_request event on the
// Git webhook regenerates at once the ApplicationSet whose pull request
// generator reads that repository, although its next poll is an hour
// away, as Argo CD's ApplicationSet webhook does; an event of another
// repository regenerates nothing.
func TestApplicationSetPullRequestWebhook(t *testing.T) {
	f := newFixture(t, map[string]string{"apps/alpha/cm.yaml": configMap("alpha", "1")})
	f.project()
	api := scmapi.New(t, "gh-t0ken")
	first := scmapi.PullRequest{Number: 1, Title: "Add cache", Branch: "cache", TargetBranch: "main", SHA: "0123456789abcdef0123456789abcdef01234567", Author: "ann", Labels: []string{"preview"}}
	api.SetPulls("org/"+f.name, first)
	f.scmSecret(f.name+"-gh", "gh-t0ken", api.URL, true)
	manifest := strings.NewReplacer("%[5]s", api.URL, "%[6]s", f.name+"-gh", "requeueAfterSeconds: 2", "requeueAfterSeconds: 3600").Replace(pullRequestSet)
	set := f.appSet(argoNS, manifest)
	waitGenerated(t, argoNS, set, f.name+"-pr-1")

	api.SetPulls("org/"+f.name, first,
		scmapi.PullRequest{Number: 5, Title: "New", Branch: "new", TargetBranch: "main", SHA: "3333333333333333333333333333333333333333", Author: "dee", Labels: []string{"preview"}})
	event := func(repo string) pushAnswer {
		return f.notify("pull_request", map[string]any{
			"action": "opened", "number": 5,
			"repository": map[string]any{"name": repo, "url": api.URL + "/repos/org/" + repo, "owner": map[string]any{"login": "org"}},
		})
	}
	if a := event(f.name + "-other"); len(a.RefreshedApplicationSets) != 0 {
		t.Errorf("an event of another repository regenerated %v", a.RefreshedApplicationSets)
	}
	if a := event(f.name); !slices.Contains(a.RefreshedApplicationSets, argoNS+"/"+f.name) {
		t.Fatalf("the event regenerated %v (%q), want %s/%s", a.RefreshedApplicationSets, a.Message, argoNS, f.name)
	}
	waitGenerated(t, argoNS, set, f.name+"-pr-1", f.name+"-pr-5")
}

// TestApplicationSetSCMProvider: the SCM provider generator lists a GitLab
// group's projects (an in-process fake answering as GitLab documents)
// with the token of an scm-creds Secret, keeps those with a deploy/
// directory (asked of the API, on each default branch), and generates one
// Application per project with Argo CD's parameters.
func TestApplicationSetSCMProvider(t *testing.T) {
	f := newFixture(t, map[string]string{"apps/alpha/cm.yaml": configMap("alpha", "1")})
	f.project()
	api := scmapi.New(t, "gl-t0ken")
	api.SetRepos(f.name,
		scmapi.Repo{Name: "web", DefaultBranch: "main", Branches: map[string]string{"main": "aaaaaaaaaaaa"}, Topics: []string{"frontend"}, Files: []string{"deploy/kustomization.yaml"}},
		scmapi.Repo{Name: "docs", DefaultBranch: "main", Branches: map[string]string{"main": "bbbbbbbbbbbb"}, Files: []string{"README.md"}},
		scmapi.Repo{Name: "api", DefaultBranch: "trunk", Branches: map[string]string{"trunk": "cccccccccccc"}, Files: []string{"deploy/chart/Chart.yaml"}},
	)
	f.scmSecret(f.name+"-gl", "gl-t0ken", api.URL, true)
	set := f.appSet(argoNS, strings.NewReplacer("%[5]s", api.URL).Replace(`
spec:
  goTemplate: true
  generators:
  - scmProvider:
      gitlab:
        group: '%[1]s'
        api: '%[5]s'
        tokenRef: {secretName: '%[1]s-gl', key: token}
      cloneProtocol: https
      filters:
      - pathsExist: [deploy]
  template:
    metadata:
      name: '{{.repository}}-%[1]s'
      annotations: {tollgate.dev/url: '{{.url}}', tollgate.dev/branch: '{{.branch}}', tollgate.dev/sha: '{{.short_sha_7}}', tollgate.dev/labels: '{{.labels}}'}
    spec:
      project: %[1]s
      source: {repoURL: '%[3]s', targetRevision: '%[4]s', path: apps/alpha}
      destination: {server: 'https://kubernetes.default.svc', namespace: '%[2]s'}
`))
	apps := waitGenerated(t, argoNS, set, "api-"+f.name, "web-"+f.name)
	want := map[string]string{"tollgate.dev/url": api.URL + "/" + f.name + "/web.git", "tollgate.dev/branch": "main", "tollgate.dev/sha": "aaaaaaa", "tollgate.dev/labels": "frontend"}
	for k, v := range want {
		if got := apps["web-"+f.name].Annotations[k]; got != v {
			t.Errorf("web's %s = %q, want %q", k, got, v)
		}
	}
}
