package appset

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver/scm"
)

// TestGenerateSCMProvider: Argo CD's parameters of each repository branch,
// with and without goTemplate (without it repository_id, a number, is
// left as written, as Argo CD's fasttemplate leaves every parameter that
// is not a string), values, and the refusals before the provider is
// asked.
func TestGenerateSCMProvider(t *testing.T) {
	src := &fakeSCM{repos: []scm.Repository{
		{Organization: "org", Repository: "web", URL: "git@github.com:org/web.git", Branch: "feat/New_UI", SHA: "0123456789abcdef", Labels: []string{"frontend", "team-a"}, RepositoryID: 1234567890},
		{Organization: "org", Repository: "api", URL: "git@github.com:org/api.git", Branch: "main", SHA: "abc", RepositoryID: 7},
	}}
	const set = `
metadata: {name: repos, namespace: argocd}
spec:
  %s
  generators:
  - scmProvider:
      github: {organization: org, tokenRef: {secretName: gh, key: token}}
      values: {env: 'preview'}
  template:
    metadata:
      name: '%s'
      annotations: {params: '%s'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/web.git, path: deploy}
      destination: {server: https://kubernetes.default.svc, namespace: web}
`
	for _, tc := range []struct {
		name, mode, appName, params string
		want                        []string
	}{
		{"fasttemplate", "", "{{repository}}-{{branchNormalized}}",
			"{{organization}} {{repository_id}} {{url}} {{branch}} {{sha}} {{short_sha}} {{short_sha_7}} {{labels}} {{values.env}}",
			[]string{
				"web-feat-new-ui org {{repository_id}} git@github.com:org/web.git feat/New_UI 0123456789abcdef 01234567 0123456 frontend,team-a preview",
				"api-main org {{repository_id}} git@github.com:org/api.git main abc abc abc  preview",
			}},
		{"goTemplate", "goTemplate: true", "{{.repository}}-{{.branchNormalized}}",
			"{{.organization}} {{.repository_id}} {{.labels}} {{.values.env}}",
			[]string{"web-feat-new-ui org 1234567890 frontend,team-a preview", "api-main org 7  preview"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gen, err := Generate(t.Context(), decodeSet(t, fmt.Sprintf(set, tc.mode, tc.appName, tc.params)), Sources{SCM: src})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, g := range gen {
				md := g.Application["metadata"].(map[string]any)
				got = append(got, fmt.Sprint(md["name"], " ", md["annotations"].(map[string]any)["params"]))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("applications (-want +got):\n%s", diff)
			}
		})
	}

	refuse := func(sp string) string {
		return `
metadata: {name: s, namespace: argocd}
spec:
  generators:
  - scmProvider: ` + sp + `
  template:
    metadata: {name: '{{repository}}'}
    spec:
      project: default
      source: {repoURL: '{{url}}', path: deploy}
      destination: {server: https://kubernetes.default.svc, namespace: web}
`
	}
	for _, tc := range []struct{ sp, want string }{
		{`{awsCodeCommit: {region: eu-west-1}}`, "spec.generators[0].scmProvider.awsCodeCommit is not supported: tollgate's SCM provider generator serves GitHub, GitLab and Gitea"},
		{`{bitbucketServer: {project: p, api: https://bb.example.com}}`, "spec.generators[0].scmProvider.bitbucketServer is not supported"},
		{`{github: {organization: o, appSecretName: app}}`, "spec.generators[0].scmProvider.github.appSecretName is not supported"},
		{`{github: {organization: o}, gitea: {owner: o, api: x}}`, "spec.generators[0].scmProvider: more than one provider is set"},
		{`{github: {organization: o}, filters: [{branchMatch: '(['}]}`, "spec.generators[0].scmProvider.filters[0].branchMatch: error parsing regexp"},
		{`{github: {organization: o}, cloneProtocol: git}`, `spec.generators[0].scmProvider.cloneProtocol: unknown clone protocol "git" (want ssh or https)`},
	} {
		src := &fakeSCM{}
		_, err := Generate(t.Context(), decodeSet(t, refuse(tc.sp)), Sources{SCM: src})
		if err == nil || !strings.Contains(err.Error(), tc.want) || ReasonOf(err) != v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError || len(src.asked) != 0 {
			t.Errorf("%s: %v (asked %v), want %q", tc.sp, err, src.asked, tc.want)
		}
	}
	_, err := Generate(t.Context(), decodeSet(t, refuse(`{github: {organization: o}}`)), Sources{})
	if err == nil || !strings.Contains(err.Error(), "spec.generators[0].scmProvider: not generated here") {
		t.Errorf("without an SCM source: %v", err)
	}
}
