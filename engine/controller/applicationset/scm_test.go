package applicationset

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// TestSCMAccess: the tokens of pull request generators are read from
// scm-creds Secrets of the ApplicationSet's namespace with Argo CD's
// errors, a Secret scoped to a project serves that project's
// ApplicationSets only, and --enable-scm-providers=false refuses them.
func TestSCMAccess(t *testing.T) {
	secret := func(name string, labelled bool, data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"}, Data: map[string][]byte{}}
		if labelled {
			s.Labels = map[string]string{reposerver.SecretTypeLabel: reposerver.SecretTypeSCMCreds}
		}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(
		secret("gh", true, map[string]string{"token": "t0k", "url": "https://ghe.example.com"}),
		secret("plain", false, map[string]string{"token": "t0k"}),
		secret("scoped", true, map[string]string{"token": "t0k", "project": "team-a"}),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ca", Namespace: "team-a"}, Data: map[string]string{"ca.crt": "PEM"}},
	).Build()
	set := func(project, pr string) *v1alpha1.ApplicationSet {
		var s v1alpha1.ApplicationSet
		if err := yaml.Unmarshal([]byte(`{metadata: {name: s, namespace: team-a}, spec: {generators: [{list: {elements: []}}, {matrix: {generators: [{list: {elements: []}}, {pullRequest: `+pr+`}]}}], template: {spec: {project: '`+project+`'}}}}`), &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	r := &Reconciler{deps: Dependencies{APIReader: c}, opts: Options{AllowedSCMProviders: []string{"https://ghe.example.com"}}}
	access, err := r.scmAccess(t.Context(), set("team-a", `{gitlab: {project: p, tokenRef: {secretName: gh, key: token}, caRef: {configMapName: ca, key: ca.crt}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := reposerver.SCMAccess{Tokens: []reposerver.SCMToken{{SecretName: "gh", Key: "token", Token: "t0k", URL: "https://ghe.example.com"}},
		CAs: []reposerver.SCMCA{{ConfigMapName: "ca", Key: "ca.crt", PEM: []byte("PEM")}}, Allowed: []string{"https://ghe.example.com"}}
	if diff := cmp.Diff(&want, access); diff != "" {
		t.Errorf("access (-want +got):\n%s", diff)
	}
	if access, err := r.scmAccess(t.Context(), set("team-a", `{github: {owner: o, repo: r, tokenRef: {secretName: '{{.secret}}', key: token}}}`)); err != nil || len(access.Tokens) != 0 {
		t.Errorf("a templated tokenRef is not read: %+v, %v", access, err)
	}
	if access, err := r.scmAccess(t.Context(), set("team-a", `{github: {owner: o, repo: r}}`)); err != nil || access == nil {
		t.Errorf("anonymous: %+v, %v", access, err)
	}
	// No provider, or one tollgate does not serve: left to the
	// repo-server, which refuses it by name.
	if access, err := r.scmAccess(t.Context(), set("team-a", `{bitbucketServer: {project: p}}`)); err != nil || len(access.Tokens) != 0 {
		t.Errorf("an unserved provider: %+v, %v", access, err)
	}
	const field = "spec.generators[1].matrix.generators[1].pullRequest"
	for _, tc := range []struct{ name, project, pr, want string }{
		{"not labelled", "team-a", `{github: {owner: o, repo: r, tokenRef: {secretName: plain, key: token}}}`,
			field + `.github.tokenRef: error fetching Secret token: secret team-a/plain is not a valid SCM creds secret: secret must have label "argocd.argoproj.io/secret-type"="scm-creds"`},
		{"missing", "team-a", `{gitea: {owner: o, repo: r, api: x, tokenRef: {secretName: nope, key: token}}}`,
			field + `.gitea.tokenRef: error fetching Secret token: error fetching secret team-a/nope: secrets "nope" not found`},
		{"missing key", "team-a", `{github: {owner: o, repo: r, tokenRef: {secretName: gh, key: other}}}`,
			`key "other" in secret team-a/gh not found`},
		{"another project", "team-b", `{github: {owner: o, repo: r, tokenRef: {secretName: scoped, key: token}}}`,
			`secret team-a/scoped serves AppProject "team-a" only, and this ApplicationSet's template names project "team-b"`},
		{"a templated project", "{{.p}}", `{github: {owner: o, repo: r, tokenRef: {secretName: scoped, key: token}}}`,
			`and this ApplicationSet's template names a project that depends on parameters`},
		{"missing CA", "team-a", `{gitlab: {project: p, caRef: {configMapName: ca, key: other}}}`,
			field + `.gitlab.caRef: error fetching CA certificates from ConfigMap: key other not found in ConfigMap ca`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.scmAccess(t.Context(), set(tc.project, tc.pr))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	off := &Reconciler{deps: Dependencies{APIReader: c}, opts: Options{SCMProvidersDisabled: true}}
	if _, err := off.scmAccess(t.Context(), set("team-a", `{github: {owner: o, repo: r}}`)); err == nil || err.Error() != field+": scm providers are disabled (--enable-scm-providers=false)" {
		t.Errorf("disabled: %v", err)
	}
	if access, err := off.scmAccess(t.Context(), set("team-a", `null`)); err != nil || access != nil {
		t.Errorf("no pull request generator: %+v, %v", access, err)
	}
}
