package push

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// pullRequestSet is an ApplicationSet of namespace ns with the generators
// given as JSON.
func pullRequestSet(t *testing.T, ns, name, generators string) *v1alpha1.ApplicationSet {
	t.Helper()
	set := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := json.Unmarshal([]byte(generators), &set.Spec.Generators); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return set
}

// TestPullRequestHandler: a GitHub pull_request or GitLab Merge Request
// Hook event regenerates the ApplicationSets served whose pull request
// generator may read that repository (nested ones included; a templated
// field matches any value, the others must match), for the actions Argo
// CD's webhook takes, and nothing else; one already waiting for its
// generation is not written again.
func TestPullRequestHandler(t *testing.T) {
	const secret = "s3cret"
	github := func(action, owner, repo, apiURL string) string {
		return `{"action":"` + action + `","number":7,"repository":{"name":"` + repo + `","url":"` + apiURL + `/repos/` + owner + `/` + repo + `","owner":{"login":"` + owner + `"}}}`
	}
	gitlab := func(action string, project int) string {
		b, _ := json.Marshal(map[string]any{
			"object_kind":       "merge_request",
			"object_attributes": map[string]any{"action": action, "target_project_id": project, "iid": 3},
			"project":           map[string]any{"web_url": "https://gitlab.example.com/team/config"},
		})
		return string(b)
	}
	tests := []struct {
		name        string
		event       string
		body        string
		sign        bool
		appSetNS    []string
		wantCode    int
		wantSets    []string
		wantMessage string
	}{
		{
			name: "github opened: the sets reading the repository, owner and repo case-insensitive", event: "github",
			body: github("opened", "Org", "Config", "https://api.github.com"), sign: true,
			wantCode: http.StatusOK, wantSets: []string{"argocd/github", "argocd/nested", "argocd/pending", "argocd/templated", "team/github-team"},
		},
		{
			name: "github enterprise host", event: "github",
			body: github("synchronize", "org", "config", "https://ghe.example.com/api/v3"), sign: true,
			wantCode: http.StatusOK, wantSets: []string{"argocd/enterprise"},
		},
		{
			name: "github: another owner's repository regenerates no templated generator of a written-out owner", event: "github",
			body: github("labeled", "attacker", "config", "https://api.github.com"), sign: true,
			wantCode: http.StatusOK,
		},
		{
			name: "github action that changes nothing", event: "github",
			body: github("assigned", "org", "config", "https://api.github.com"), sign: true,
			wantCode: http.StatusOK, wantMessage: `event ignored: pull request action "assigned" changes no generated Application`,
		},
		{
			name: "gitlab merge request by target project", event: "gitlab",
			body: gitlab("update", 42), sign: true,
			wantCode: http.StatusOK, wantSets: []string{"argocd/gitlab"},
		},
		{
			name: "gitlab merge request of another project", event: "gitlab",
			body: gitlab("merge", 43), sign: true,
			wantCode: http.StatusOK,
		},
		{
			name: "unsigned", event: "github",
			body:     github("opened", "org", "config", "https://api.github.com"),
			wantCode: http.StatusUnauthorized, wantMessage: "webhook secret does not match",
		},
		{
			name: "malformed", event: "github", body: `{"action":`, sign: true,
			wantCode: http.StatusBadRequest, wantMessage: "decode pull request payload: unexpected end of JSON input",
		},
		{
			name: "without the ApplicationSet controller", event: "github", appSetNS: []string{},
			body: github("opened", "org", "config", "https://api.github.com"), sign: true,
			wantCode: http.StatusOK, wantMessage: "event ignored: pull request events regenerate ApplicationSets, and the ApplicationSet controller is off",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pending := pullRequestSet(t, "argocd", "pending", `[{"pullRequest":{"github":{"owner":"org","repo":"config"}}}]`)
			pending.Annotations = map[string]string{v1alpha1.AnnotationApplicationSetRefresh: "true"}
			c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(pending,
				pullRequestSet(t, "argocd", "github", `[{"pullRequest":{"github":{"owner":"org","repo":"config"}}}]`),
				pullRequestSet(t, "team", "github-team", `[{"pullRequest":{"github":{"owner":"ORG","repo":"config","api":"https://api.github.com/"}}}]`),
				pullRequestSet(t, "elsewhere", "not-served", `[{"pullRequest":{"github":{"owner":"org","repo":"config"}}}]`),
				pullRequestSet(t, "argocd", "enterprise", `[{"pullRequest":{"github":{"owner":"org","repo":"config","api":"https://ghe.example.com/api/v3"}}}]`),
				pullRequestSet(t, "argocd", "nested", `[{"matrix":{"generators":[{"list":{"elements":[{"env":"dev"}]}},{"pullRequest":{"github":{"owner":"org","repo":"config"}}}]}}]`),
				pullRequestSet(t, "argocd", "templated", `[{"matrix":{"generators":[{"list":{"elements":[{"repo":"config"}]}},{"pullRequest":{"github":{"owner":"org","repo":"{{.repo}}"}}}]}}]`),
				pullRequestSet(t, "argocd", "other-repo", `[{"pullRequest":{"github":{"owner":"org","repo":"other"}}}]`),
				pullRequestSet(t, "argocd", "gitlab", `[{"pullRequest":{"gitlab":{"project":"42","api":"https://gitlab.example.com/"}}}]`),
				pullRequestSet(t, "argocd", "gitlab-com", `[{"pullRequest":{"gitlab":{"project":"42"}}}]`),
				pullRequestSet(t, "argocd", "git", `[{"git":{"repoURL":"https://github.com/org/config.git","revision":"main"}}]`),
			).Build()
			appSetNS := []string{"argocd", "team"}
			if tc.appSetNS != nil {
				appSetNS = tc.appSetNS
			}
			h, err := NewHandler(c, Options{Namespace: "argocd", ApplicationSetNamespaces: appSetNS, Secret: secret}, nil, logr.Discard())
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, Path, strings.NewReader(tc.body))
			switch {
			case tc.event == "github":
				req.Header.Set("X-GitHub-Event", "pull_request")
				if tc.sign {
					req.Header.Set("X-Hub-Signature-256", signature(secret, tc.body))
				}
			case tc.sign:
				req.Header.Set("X-Gitlab-Event", "Merge Request Hook")
				req.Header.Set("X-Gitlab-Token", secret)
			default:
				req.Header.Set("X-Gitlab-Event", "Merge Request Hook")
			}
			resp := serve(t, h, req, tc.wantCode, tc.wantMessage)
			if diff := cmp.Diff(tc.wantSets, resp.RefreshedApplicationSets); diff != "" {
				t.Errorf("regenerated (-want +got):\n%s", diff)
			}
			var sets v1alpha1.ApplicationSetList
			if err := c.List(t.Context(), &sets); err != nil {
				t.Fatal(err)
			}
			var annotated []string
			for _, s := range sets.Items {
				if s.Name == "pending" && s.ResourceVersion != "999" {
					t.Errorf("the ApplicationSet already waiting for its generation was written again (resourceVersion %s)", s.ResourceVersion)
				}
				if s.Annotations[v1alpha1.AnnotationApplicationSetRefresh] == "true" && (s.Name != "pending" || slices.Contains(tc.wantSets, "argocd/pending")) {
					annotated = append(annotated, s.Namespace+"/"+s.Name)
				}
			}
			if diff := cmp.Diff(tc.wantSets, annotated); diff != "" {
				t.Errorf("applicationsets with the refresh annotation (-want +got):\n%s", diff)
			}
			if len(resp.Refreshed) > 0 {
				t.Errorf("a pull request event refreshed Applications %v", resp.Refreshed)
			}
		})
	}
}

// signature is GitHub's X-Hub-Signature-256 of body with secret.
func signature(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// serve has h answer req and checks the answer's status and message.
func serve(t *testing.T, h *Handler, req *http.Request, wantCode int, wantMessage string) webhookResponse {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != wantCode {
		t.Errorf("status = %d, want %d (body %s)", rec.Code, wantCode, rec.Body)
	}
	var resp webhookResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatalf("decode response %q: %v", rec.Body, err)
	}
	if resp.Message != wantMessage {
		t.Errorf("message = %q, want %q", resp.Message, wantMessage)
	}
	return resp
}
