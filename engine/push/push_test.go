package push

import (
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/metrics"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

func webhookApp(name, ns string, repos ...string) *v1alpha1.Application {
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if len(repos) == 1 {
		app.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: repos[0]}
	} else {
		for _, r := range repos {
			app.Spec.Sources = append(app.Spec.Sources, v1alpha1.ApplicationSource{RepoURL: r})
		}
	}
	return app
}

func TestPushHandler(t *testing.T) {
	const secret = "s3cret"
	github := `{"ref":"refs/heads/main","repository":{"clone_url":"https://github.com/org/config.git","html_url":"https://github.com/org/config","ssh_url":"git@github.com:org/config.git"}}`
	gitlab := `{"object_kind":"push","project":{"git_http_url":"https://gitlab.example.com/team/config.git","git_ssh_url":"git@gitlab.example.com:team/config.git"}}`
	sign := func(body string) string { return signature(secret, body) }
	tests := []struct {
		name     string
		method   string
		headers  map[string]string
		body     string
		maxBytes int64
		// gitLabSecret is Options.GitLabSecret.
		gitLabSecret string
		wantCode     int
		// wantRefreshed are the Applications given the refresh annotation.
		wantRefreshed []string
		wantMessage   string
	}{
		{
			name:          "github push refreshes every application of the repository",
			headers:       map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(github)},
			body:          github,
			wantCode:      http.StatusOK,
			wantRefreshed: []string{"multi", "ssh-form", "web"},
		},
		{
			name:          "gitlab push hook",
			headers:       map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": secret},
			body:          gitlab,
			wantCode:      http.StatusOK,
			wantRefreshed: []string{"gl"},
		},
		{
			name:          "gitlab token of its own secret",
			headers:       map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "gl-t0ken"},
			body:          gitlab,
			gitLabSecret:  "gl-t0ken",
			wantCode:      http.StatusOK,
			wantRefreshed: []string{"gl"},
		},
		{
			name:          "with a gitlab secret, github events keep the shared secret",
			headers:       map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(github)},
			body:          github,
			gitLabSecret:  "gl-t0ken",
			wantCode:      http.StatusOK,
			wantRefreshed: []string{"multi", "ssh-form", "web"},
		},
		{
			name:         "with a gitlab secret, the shared secret is no gitlab token",
			headers:      map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": secret},
			body:         gitlab,
			gitLabSecret: "gl-t0ken",
			wantCode:     http.StatusUnauthorized,
			wantMessage:  "webhook secret does not match",
		},
		{
			name:         "a gitlab token never authorizes a github event",
			headers:      map[string]string{"X-GitHub-Event": "push", "X-Gitlab-Token": "gl-t0ken"},
			body:         github,
			gitLabSecret: "gl-t0ken",
			wantCode:     http.StatusUnauthorized,
			wantMessage:  "webhook secret does not match",
		},
		{
			name:        "not even the shared secret as a gitlab token on a github event",
			headers:     map[string]string{"X-GitHub-Event": "push", "X-Gitlab-Token": secret},
			body:        github,
			wantCode:    http.StatusUnauthorized,
			wantMessage: "webhook secret does not match",
		},
		{
			name:        "github signature of another body",
			headers:     map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(github + " ")},
			body:        github,
			wantCode:    http.StatusUnauthorized,
			wantMessage: "webhook secret does not match",
		},
		{
			name:        "no signature",
			headers:     map[string]string{"X-GitHub-Event": "push"},
			body:        github,
			wantCode:    http.StatusUnauthorized,
			wantMessage: "webhook secret does not match",
		},
		{
			name:        "no gitlab token",
			headers:     map[string]string{"X-Gitlab-Event": "Push Hook"},
			body:        gitlab,
			wantCode:    http.StatusUnauthorized,
			wantMessage: "webhook secret does not match",
		},
		{
			name:        "github signature without the sha256= prefix",
			headers:     map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": strings.TrimPrefix(sign(github), "sha256=")},
			body:        github,
			wantCode:    http.StatusUnauthorized,
			wantMessage: "webhook secret does not match",
		},
		{
			name:        "github sha1 signature only",
			headers:     map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature": "sha1=0123456789abcdef0123456789abcdef01234567"},
			body:        github,
			wantCode:    http.StatusUnauthorized,
			wantMessage: "webhook secret does not match",
		},
		{
			name:        "secret sent as a github signature",
			headers:     map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + hex.EncodeToString([]byte(secret))},
			body:        github,
			wantCode:    http.StatusUnauthorized,
			wantMessage: "webhook secret does not match",
		},
		{
			name:        "wrong gitlab token",
			headers:     map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "guess"},
			body:        gitlab,
			wantCode:    http.StatusUnauthorized,
			wantMessage: "webhook secret does not match",
		},
		{
			name:        "unsigned ping is refused",
			headers:     map[string]string{"X-GitHub-Event": "ping"},
			body:        `{"zen":"hi"}`,
			wantCode:    http.StatusUnauthorized,
			wantMessage: "webhook secret does not match",
		},
		{
			name:        "ping is ignored",
			headers:     map[string]string{"X-GitHub-Event": "ping", "X-Hub-Signature-256": sign(`{"zen":"hi"}`)},
			body:        `{"zen":"hi"}`,
			wantCode:    http.StatusOK,
			wantMessage: "event ignored: only push events refresh Applications, and pull request events ApplicationSets",
		},
		{
			name:        "not a git webhook",
			headers:     map[string]string{"X-Hub-Signature-256": sign(github)},
			body:        github,
			wantCode:    http.StatusBadRequest,
			wantMessage: "not a GitHub or GitLab webhook: no X-GitHub-Event or X-Gitlab-Event header",
		},
		{
			name:        "GET",
			method:      http.MethodGet,
			headers:     map[string]string{"X-GitHub-Event": "push"},
			wantCode:    http.StatusMethodNotAllowed,
			wantMessage: "method not allowed: use POST",
		},
		{
			name:        "body too large",
			headers:     map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(github)},
			body:        github,
			maxBytes:    16,
			wantCode:    http.StatusRequestEntityTooLarge,
			wantMessage: "request body larger than 16 bytes",
		},
		{
			name:        "malformed payload",
			headers:     map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(`{"repository":`)},
			body:        `{"repository":`,
			wantCode:    http.StatusBadRequest,
			wantMessage: "decode push payload: unexpected end of JSON input",
		},
		{
			name:        "payload without a repository",
			headers:     map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(`{"ref":"refs/heads/main"}`)},
			body:        `{"ref":"refs/heads/main"}`,
			wantCode:    http.StatusBadRequest,
			wantMessage: "push payload names no repository URL",
		},
		{
			name:     "unknown repository refreshes nothing",
			headers:  map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(`{"repository":{"clone_url":"https://github.com/org/other.git"}}`)},
			body:     `{"repository":{"clone_url":"https://github.com/org/other.git"}}`,
			wantCode: http.StatusOK,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(
				webhookApp("web", "argocd", "https://github.com/org/config"),
				webhookApp("ssh-form", "argocd", "git@github.com:org/config.git"),
				webhookApp("multi", "argocd", "https://example.com/charts.git", "https://GITHUB.com/org/config.git/"),
				webhookApp("gl", "argocd", "https://gitlab.example.com/team/config.git"),
				webhookApp("other-namespace", "elsewhere", "https://github.com/org/config.git"),
				webhookApp("unrelated", "argocd", "https://github.com/org/unrelated.git"),
			).Build()
			h, err := NewHandler(c, Options{Namespace: "argocd", Secret: secret, GitLabSecret: tc.gitLabSecret, MaxBytes: tc.maxBytes}, nil, logr.Discard())
			if err != nil {
				t.Fatal(err)
			}
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			req := httptest.NewRequestWithContext(t.Context(), method, Path, strings.NewReader(tc.body))
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp := serve(t, h, req, tc.wantCode, tc.wantMessage)
			if diff := cmp.Diff(tc.wantRefreshed, resp.Refreshed); diff != "" {
				t.Errorf("refreshed (-want +got):\n%s", diff)
			}
			var apps v1alpha1.ApplicationList
			if err := c.List(t.Context(), &apps); err != nil {
				t.Fatal(err)
			}
			var annotated []string
			for _, a := range apps.Items {
				if a.Annotations[v1alpha1.AnnotationKeyRefresh] == v1alpha1.RefreshTypeNormal {
					annotated = append(annotated, a.Name)
				}
			}
			if diff := cmp.Diff(tc.wantRefreshed, annotated); diff != "" {
				t.Errorf("applications with the refresh annotation (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHandlerNeedsSecret checks that there is no push endpoint without
// a secret: an unauthenticated one would let anyone who reaches it make the
// controller patch Applications and fetch their repositories.
func TestHandlerNeedsSecret(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).Build()
	h, err := NewHandler(c, Options{}, nil, logr.Discard())
	if !errors.Is(err, ErrNoSecret) || h != nil {
		t.Fatalf("NewHandler without a secret = %v, %v; want nil, ErrNoSecret", h, err)
	}
	// A handler that somehow has no secret authorizes nothing.
	zero := &Handler{client: c, namespace: "argocd", maxBytes: DefaultMaxBytes, metrics: metrics.NewMetrics(), log: logr.Discard()}
	body := `{"repository":{"clone_url":"https://github.com/org/config.git"}}`
	for _, headers := range []map[string]string{
		{"X-GitHub-Event": "push"},
		{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256="},
		{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": ""},
	} {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, Path, strings.NewReader(body))
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		zero.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("%v: status = %d, want %d (body %s)", headers, rec.Code, http.StatusUnauthorized, rec.Body)
		}
	}
}
