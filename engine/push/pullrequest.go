package push

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Pull request events regenerate the ApplicationSets whose pull request
// generator reads that repository, as Argo CD's ApplicationSet webhook
// does, so that a pull request opened, updated or closed shows at once
// rather than at the generator's next poll (requeueAfterSeconds). The
// event only asks for a generation: the generator reads the pull requests
// from the provider's API with its own token, as on a poll, and nothing of
// the payload reaches an Application.

// The actions that regenerate, as Argo CD's webhook lists them.
var (
	githubPullRequestActions  = []string{"opened", "closed", "synchronize", "labeled", "reopened", "unlabeled"}
	gitlabMergeRequestActions = []string{"open", "close", "reopen", "update", "merge"}
)

// Default API URLs of a pull request generator without api.
const (
	defaultGitHubAPI = "https://api.github.com/"
	defaultGitLabAPI = "https://gitlab.com/"
)

// githubPullRequest holds what a GitHub pull_request event says of its
// repository.
type githubPullRequest struct {
	Action     string `json:"action"`
	Repository struct {
		Name string `json:"name"`
		// URL is the repository's API URL
		// (https://api.github.com/repos/OWNER/NAME).
		URL   string `json:"url"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"repository"`
}

// gitlabMergeRequest holds what a GitLab Merge Request Hook says of its
// target project.
type gitlabMergeRequest struct {
	ObjectAttributes struct {
		Action          string `json:"action"`
		TargetProjectID int64  `json:"target_project_id"`
	} `json:"object_attributes"`
	Project struct {
		WebURL string `json:"web_url"`
	} `json:"project"`
}

// pullRequestEvent is the repository a pull request event is about.
type pullRequestEvent struct {
	github bool
	// host is the provider's host, from the event's URLs.
	host string
	// owner and repo name a GitHub repository; project a GitLab project,
	// by id.
	owner, repo, project string
}

// pullRequest regenerates the ApplicationSets whose pull request generator
// reads the repository of a GitHub pull_request or GitLab Merge Request
// Hook event.
func (h *Handler) pullRequest(w http.ResponseWriter, r *http.Request, body []byte, github bool) {
	if len(h.appSetNS) == 0 {
		h.answer(w, http.StatusOK, "ignored", webhookResponse{Message: "event ignored: pull request events regenerate ApplicationSets, and the ApplicationSet controller is off"})
		return
	}
	ev, action, err := decodePullRequest(body, github)
	if err != nil {
		h.answer(w, http.StatusBadRequest, "invalid", webhookResponse{Message: "decode pull request payload: " + err.Error()})
		return
	}
	if ev == nil {
		h.answer(w, http.StatusOK, "ignored", webhookResponse{Message: "event ignored: pull request action " + strconv.Quote(action) + " changes no generated Application"})
		return
	}
	sets, err := h.requestGeneration(r.Context(), func(kind string, g map[string]any) bool {
		return kind == "pullRequest" && ev.readBy(g)
	})
	if err != nil {
		h.log.Error(err, "regenerate applicationsets after a pull request event", "host", ev.host, "repository", ev.owner+"/"+ev.repo, "project", ev.project)
		h.answer(w, http.StatusInternalServerError, "error", webhookResponse{RefreshedApplicationSets: sets, Message: err.Error()})
		return
	}
	h.log.Info("pull request event received", "host", ev.host, "repository", ev.owner+"/"+ev.repo, "project", ev.project, "action", action, "applicationSets", sets)
	result := "refreshed"
	if len(sets) == 0 {
		result = "ignored"
	}
	h.answer(w, http.StatusOK, result, webhookResponse{RefreshedApplicationSets: sets})
}

// decodePullRequest reads the event's repository and action; a nil event
// for an action that regenerates nothing.
func decodePullRequest(body []byte, github bool) (*pullRequestEvent, string, error) {
	if github {
		var p githubPullRequest
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, "", err
		}
		if !slices.Contains(githubPullRequestActions, p.Action) {
			return nil, p.Action, nil
		}
		return &pullRequestEvent{github: true, host: hostname(p.Repository.URL), owner: p.Repository.Owner.Login, repo: p.Repository.Name}, p.Action, nil
	}
	var p gitlabMergeRequest
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, "", err
	}
	if !slices.Contains(gitlabMergeRequestActions, p.ObjectAttributes.Action) {
		return nil, p.ObjectAttributes.Action, nil
	}
	return &pullRequestEvent{host: hostname(p.Project.WebURL), project: strconv.FormatInt(p.ObjectAttributes.TargetProjectID, 10)}, p.ObjectAttributes.Action, nil
}

// readBy reports whether the pull request generator g (its decoded JSON)
// may read the event's repository: GitHub's owner and repo
// (case-insensitive, as GitHub takes them) or GitLab's project, at an api
// of the event's host. A field that is a template (a matrix child
// parameterised by its sibling) matches any value, since only the
// repo-server can interpolate it (Argo CD matches it after interpolating
// it): regenerating costs a poll, missing the event a whole
// requeueAfterSeconds. The fields written out must still match, so an
// event of one repository regenerates only the generators that may read
// it, not every templated one of every team.
func (e *pullRequestEvent) readBy(g map[string]any) bool {
	provider, api := "gitlab", defaultGitLabAPI
	if e.github {
		provider, api = "github", defaultGitHubAPI
	}
	p, _ := g[provider].(map[string]any)
	if p == nil {
		return false
	}
	str := func(k string) string { s, _ := p[k].(string); return s }
	matches := func(k, want string, same func(a, b string) bool) bool {
		v := str(k)
		return strings.Contains(v, "{{") || same(v, want)
	}
	equal := func(a, b string) bool { return a == b }
	if a := str("api"); a != "" {
		api = a
	}
	if !strings.Contains(api, "{{") && !strings.EqualFold(hostname(api), e.host) {
		return false
	}
	if e.github {
		return matches("owner", e.owner, strings.EqualFold) && matches("repo", e.repo, strings.EqualFold)
	}
	return matches("project", e.project, equal)
}

// hostname is the host of a URL without its port, "" when it has none.
func hostname(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
