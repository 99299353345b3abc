package push

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// Path is where the Git push webhook is served.
const Path = "/api/webhook"

// DefaultMaxBytes bounds a webhook body. GitHub caps payloads at 25 MiB;
// pushes of ordinary size are far below 1 MiB.
const DefaultMaxBytes int64 = 4 << 20

// Metrics count the requests by result (refreshed, ignored,
// unauthorized, invalid, error); *metrics.Metrics implements it.
type Metrics interface {
	Webhook(result string)
}

// Options configure a Handler.
type Options struct {
	// Namespace is the control-plane namespace, whose Applications a push
	// refreshes.
	Namespace string
	// ApplicationNamespaces are the other namespaces whose Applications
	// the controller reconciles (--application-namespaces patterns).
	ApplicationNamespaces []string
	// ApplicationSetNamespaces, when not nil, are the namespaces whose
	// ApplicationSets a push refreshes as well (those with a git generator
	// of the pushed repository): the control namespace and those of
	// --applicationset-namespaces, with the ApplicationSet controller on.
	ApplicationSetNamespaces []string
	// Secret is the shared secret a request must prove: GitHub's
	// X-Hub-Signature-256 HMAC, and GitLab's X-Gitlab-Token unless
	// GitLabSecret is set. Without either there is no push endpoint
	// (NewHandler refuses).
	Secret string
	// GitLabSecret, when set, is the token GitLab's X-Gitlab-Token must
	// be, and Secret authenticates GitHub's signatures only: GitLab shows
	// its token to whoever configures a project's webhook, and with one
	// secret for both that person could sign GitHub events (Argo CD's
	// webhook.github.secret and webhook.gitlab.secret). A push names its
	// repository in its body either way: whoever holds either secret can
	// ask for any repository's Applications to be compared, as in Argo
	// CD, and nothing more.
	GitLabSecret string
	// MaxBytes bounds a request body; zero means DefaultMaxBytes.
	MaxBytes int64
}

// Git hosting webhook headers.
const (
	headerGitHubEvent     = "X-GitHub-Event"
	headerGitHubSignature = "X-Hub-Signature-256"
	headerGitLabEvent     = "X-Gitlab-Event"
	headerGitLabToken     = "X-Gitlab-Token"
)

// pushPayload holds the repository URLs of a GitHub push or GitLab Push Hook
// payload; the other fields are not decoded.
type pushPayload struct {
	Repository struct {
		// GitHub.
		CloneURL string `json:"clone_url"`
		HTMLURL  string `json:"html_url"`
		SSHURL   string `json:"ssh_url"`
		GitURL   string `json:"git_url"`
		// GitLab (repository is deprecated there in favour of project).
		URL        string `json:"url"`
		GitHTTPURL string `json:"git_http_url"`
		GitSSHURL  string `json:"git_ssh_url"`
	} `json:"repository"`
	Project struct {
		GitHTTPURL string `json:"git_http_url"`
		GitSSHURL  string `json:"git_ssh_url"`
		WebURL     string `json:"web_url"`
	} `json:"project"`
}

// urls returns the normalized repository URLs of the payload.
func (p pushPayload) urls() []string {
	var out []string
	for _, u := range []string{
		p.Repository.CloneURL, p.Repository.HTMLURL, p.Repository.SSHURL, p.Repository.GitURL,
		p.Repository.URL, p.Repository.GitHTTPURL, p.Repository.GitSSHURL,
		p.Project.GitHTTPURL, p.Project.GitSSHURL, p.Project.WebURL,
	} {
		if n := reposerver.NormalizeURL(u); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// ErrNoSecret is returned by NewHandler without Options.Secret or
// Options.GitLabSecret: the push endpoint needs one, or anyone who can
// reach it could make the controller list and patch Applications and
// fetch their repositories at will.
var ErrNoSecret = errors.New("the git push webhook needs a secret")

// Handler serves the Git push webhook: a GitHub `push` or GitLab `Push
// Hook` for a repository sets the refresh annotation on every Application
// of the control-plane namespace with a source in that repository, so the
// controller compares (and, when automated, syncs) them at once instead of
// at the next resync. Repository URLs are compared with reposerver.NormalizeURL
// (https, ssh and scp-style forms of one repository match). Every request
// must prove the shared secret (GitHub's X-Hub-Signature-256 or GitLab's
// X-Gitlab-Token). The same endpoint takes pull request events for the
// ApplicationSets' pull request generators (pullrequest.go).
type Handler struct {
	client    client.Client
	namespace string
	appNS     []string
	appSetNS  []string
	secret    []byte
	gitlab    []byte
	maxBytes  int64
	metrics   Metrics
	log       logr.Logger
}

// NewHandler returns the webhook handler. c lists and patches
// Applications in opts.Namespace and opts.ApplicationNamespaces (and ApplicationSets in
// opts.ApplicationSetNamespaces). Without opts.Secret it returns
// ErrNoSecret: serve no push endpoint then. m may be nil.
func NewHandler(c client.Client, opts Options, m Metrics, log logr.Logger) (*Handler, error) {
	if opts.Secret == "" && opts.GitLabSecret == "" {
		return nil, ErrNoSecret
	}
	gitlab := opts.GitLabSecret
	if gitlab == "" {
		gitlab = opts.Secret
	}
	if opts.Namespace == "" {
		opts.Namespace = policies.DefaultArgoCDNamespace
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	return &Handler{
		client: c, namespace: opts.Namespace, appNS: opts.ApplicationNamespaces, appSetNS: opts.ApplicationSetNamespaces, secret: []byte(opts.Secret), gitlab: []byte(gitlab),
		maxBytes: opts.MaxBytes, metrics: m, log: log,
	}, nil
}

// webhookResponse is the JSON body of every answer.
type webhookResponse struct {
	// Refreshed are the Applications marked for refresh.
	Refreshed []string `json:"refreshed,omitempty"`
	// RefreshedApplicationSets are the ApplicationSets (namespace/name)
	// marked for generation.
	RefreshedApplicationSets []string `json:"refreshedApplicationSets,omitempty"`
	// Message says why nothing was done, or what failed.
	Message string `json:"message,omitempty"`
}

// ServeHTTP handles one webhook request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.answer(w, http.StatusMethodNotAllowed, "invalid", webhookResponse{Message: "method not allowed: use POST"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.answer(w, http.StatusRequestEntityTooLarge, "invalid", webhookResponse{Message: fmt.Sprintf("request body larger than %d bytes", h.maxBytes)})
			return
		}
		h.answer(w, http.StatusBadRequest, "invalid", webhookResponse{Message: "read request body: " + err.Error()})
		return
	}
	ghEvent, glEvent := r.Header.Get(headerGitHubEvent), r.Header.Get(headerGitLabEvent)
	if ghEvent == "" && glEvent == "" {
		h.answer(w, http.StatusBadRequest, "invalid", webhookResponse{Message: "not a GitHub or GitLab webhook: no " + headerGitHubEvent + " or " + headerGitLabEvent + " header"})
		return
	}
	if !h.authorized(r, body, ghEvent != "") {
		h.answer(w, http.StatusUnauthorized, "unauthorized", webhookResponse{Message: "webhook secret does not match"})
		return
	}
	switch {
	case ghEvent == "push" || glEvent == "Push Hook" || glEvent == "Tag Push Hook":
		h.push(w, r, body)
	case ghEvent == "pull_request" || glEvent == "Merge Request Hook":
		h.pullRequest(w, r, body, ghEvent != "")
	default:
		h.answer(w, http.StatusOK, "ignored", webhookResponse{Message: "event ignored: only push events refresh Applications, and pull request events ApplicationSets"})
	}
}

// push refreshes the Applications and ApplicationSets (git generators) of
// the pushed repository.
func (h *Handler) push(w http.ResponseWriter, r *http.Request, body []byte) {
	var p pushPayload
	if err := json.Unmarshal(body, &p); err != nil {
		h.answer(w, http.StatusBadRequest, "invalid", webhookResponse{Message: "decode push payload: " + err.Error()})
		return
	}
	urls := p.urls()
	if len(urls) == 0 {
		h.answer(w, http.StatusBadRequest, "invalid", webhookResponse{Message: "push payload names no repository URL"})
		return
	}
	refreshed, err := h.refresh(r, urls)
	sets, setErr := h.refreshApplicationSets(r.Context(), urls)
	if err = errors.Join(err, setErr); err != nil {
		h.log.Error(err, "refresh applications after push", "repositories", urls)
		h.answer(w, http.StatusInternalServerError, "error", webhookResponse{Refreshed: refreshed, RefreshedApplicationSets: sets, Message: err.Error()})
		return
	}
	h.log.Info("git push received", "repositories", urls, "refreshed", refreshed, "applicationSets", sets)
	result := "refreshed"
	if len(refreshed)+len(sets) == 0 {
		result = "ignored"
	}
	h.answer(w, http.StatusOK, result, webhookResponse{Refreshed: refreshed, RefreshedApplicationSets: sets})
}

// authorized checks the shared secret of the request's kind: a GitHub
// event's HMAC-SHA256 signature of the body with Secret, a GitLab event's
// token header against GitLabSecret (Secret without one). Without a
// configured secret no request of that kind is authorized, and a GitLab
// token never authorizes a GitHub event.
func (h *Handler) authorized(r *http.Request, body []byte, github bool) bool {
	if github {
		sig := r.Header.Get(headerGitHubSignature)
		hexSum, ok := strings.CutPrefix(sig, "sha256=")
		if !ok || len(h.secret) == 0 {
			return false
		}
		if !ok {
			return false
		}
		got, err := hex.DecodeString(hexSum)
		if err != nil {
			return false
		}
		mac := hmac.New(sha256.New, h.secret)
		mac.Write(body)
		return hmac.Equal(got, mac.Sum(nil))
	}
	tok := r.Header.Get(headerGitLabToken)
	return tok != "" && len(h.gitlab) > 0 && subtle.ConstantTimeCompare([]byte(tok), h.gitlab) == 1
}

// refresh sets the refresh annotation on every Application with a source in
// one of urls and returns their names.
func (h *Handler) refresh(r *http.Request, urls []string) ([]string, error) {
	ctx := r.Context()
	var apps v1alpha1.ApplicationList
	if err := h.client.List(ctx, &apps); err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	var out []string
	var errs []error
	for i := range apps.Items {
		app := &apps.Items[i]
		if !v1alpha1.NamespaceEnabled(app.Namespace, h.namespace, h.appNS) || !usesRepository(app, urls) {
			continue
		}
		if err := appops.RequestRefresh(ctx, h.client, client.ObjectKeyFromObject(app), v1alpha1.RefreshTypeNormal); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, app.QualifiedName(h.namespace))
	}
	return out, errors.Join(errs...)
}

// refreshApplicationSets sets the refresh annotation on every
// ApplicationSet served with a git generator of one of urls and returns
// their keys.
func (h *Handler) refreshApplicationSets(ctx context.Context, urls []string) ([]string, error) {
	return h.requestGeneration(ctx, func(kind string, g map[string]any) bool {
		u, _ := g["repoURL"].(string)
		return kind == "git" && slices.Contains(urls, reposerver.NormalizeURL(u))
	})
}

// requestGeneration sets the refresh annotation on every ApplicationSet
// served with a generator (nested ones included) for which reads holds,
// as Argo CD's webhook does, and returns their keys (namespace/name).
func (h *Handler) requestGeneration(ctx context.Context, reads func(kind string, g map[string]any) bool) ([]string, error) {
	var out []string
	var errs []error
	for _, ns := range h.appSetNS {
		var sets v1alpha1.ApplicationSetList
		if err := h.client.List(ctx, &sets, client.InNamespace(ns)); err != nil {
			errs = append(errs, fmt.Errorf("list applicationsets: %w", err))
			continue
		}
		for i := range sets.Items {
			set := &sets.Items[i]
			uses := false
			set.WalkGenerators(func(_, kind string, g map[string]any) { uses = uses || reads(kind, g) })
			if !uses {
				continue
			}
			out = append(out, set.Namespace+"/"+set.Name)
			if set.Annotations[v1alpha1.AnnotationApplicationSetRefresh] == "true" {
				// Already asked for and not yet generated: a burst of
				// events costs one generation, and no write each.
				continue
			}
			base := set.DeepCopy()
			metav1.SetMetaDataAnnotation(&set.ObjectMeta, v1alpha1.AnnotationApplicationSetRefresh, "true")
			if err := h.client.Patch(ctx, set, client.MergeFrom(base)); err != nil {
				errs = append(errs, fmt.Errorf("request generation of applicationset %s: %w", set.Name, err))
				out = out[:len(out)-1]
			}
		}
	}
	return out, errors.Join(errs...)
}

// usesRepository reports whether a source of app is in one of the
// normalized urls.
func usesRepository(app *v1alpha1.Application, urls []string) bool {
	for _, s := range app.Sources() {
		if slices.Contains(urls, reposerver.NormalizeURL(s.RepoURL)) {
			return true
		}
	}
	return false
}

func (h *Handler) answer(w http.ResponseWriter, code int, result string, resp webhookResponse) {
	if h.metrics != nil {
		h.metrics.Webhook(result)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(resp)
}
