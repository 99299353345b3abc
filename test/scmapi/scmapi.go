// Package scmapi is an in-process SCM provider API for tests: it answers
// the pull request and repository listings (with branches and file
// lookups) of GitHub's, GitLab's and Gitea's REST APIs with the JSON their
// documentation shows, a page at a time with a Link
// header, from the pull requests a test gives it. It checks each
// provider's token header and records the requests it was sent.
package scmapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// PullRequest is one pull request the fake serves.
type PullRequest struct {
	Number            int
	Title, Branch     string
	TargetBranch, SHA string
	Author            string
	Labels            []string
	State             string // GitLab's state; "" is opened
	Closed            bool   // GitHub and Gitea list only open ones
}

// Server serves GitHub (under /api/v3, as GitHub Enterprise), GitLab
// (/api/v4) and Gitea (/api/v1).
type Server struct {
	*httptest.Server
	// Token, when set, is required: GitHub's "Authorization: Bearer",
	// GitLab's PRIVATE-TOKEN, Gitea's "Authorization: token".
	Token string
	// PerPage is the page size (2, so that listings page).
	PerPage int

	mu       sync.Mutex
	repos    map[string][]PullRequest
	orgs     map[string][]Repo
	nextID   int
	requests []string
}

// New starts a plain HTTP fake (TLS with NewTLS), closed when t ends.
func New(t testing.TB, token string) *Server {
	s := &Server{Token: token, PerPage: 2, repos: map[string][]PullRequest{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// NewTLS is New over TLS with httptest's certificate.
func NewTLS(t testing.TB, token string) *Server {
	s := &Server{Token: token, PerPage: 2, repos: map[string][]PullRequest{}}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// SetPulls sets the pull requests of repo ("owner/repo", or GitLab's
// project path "group/name").
func (s *Server) SetPulls(repo string, pulls ...PullRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[repo] = pulls
}

// Requests are the requests served so far, as "METHOD PATH?QUERY".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
	s.mu.Unlock()
	parts := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	if len(parts) > 1 && parts[0] == "api" && s.serveRepos(w, r, parts) {
		return
	}
	switch {
	case len(parts) == 6 && parts[0] == "api" && parts[1] == "v3" && parts[2] == "repos" && parts[5] == "pulls":
		s.github(w, r, parts[3]+"/"+parts[4])
	case len(parts) == 5 && parts[0] == "api" && parts[1] == "v4" && parts[2] == "projects" && parts[4] == "merge_requests":
		project, _ := url.PathUnescape(parts[3])
		s.gitlab(w, r, project)
	case len(parts) == 6 && parts[0] == "api" && parts[1] == "v1" && parts[2] == "repos" && parts[5] == "pulls":
		s.gitea(w, r, parts[3]+"/"+parts[4])
	default:
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	}
}

// authorized checks the token header, answering 401 as the providers do.
func (s *Server) authorized(w http.ResponseWriter, got, want string) bool {
	if s.Token == "" || got == want {
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte(`{"message":"Bad credentials"}`))
	return false
}

// pulls returns repo's pull requests that keep, or false after a 404.
func (s *Server) pulls(w http.ResponseWriter, repo string, keep func(PullRequest) bool) ([]PullRequest, bool) {
	s.mu.Lock()
	all, ok := s.repos[repo]
	s.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"Not Found"}`))
		return nil, false
	}
	var out []PullRequest
	for _, p := range all {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out, true
}

// page writes the page the request asks for (page, 1-based) of items,
// with a Link header to the next one.
func (s *Server) page(w http.ResponseWriter, r *http.Request, items []any) {
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	start := min((page-1)*s.PerPage, len(items))
	end := min(start+s.PerPage, len(items))
	if end < len(items) {
		next := *r.URL
		q := next.Query()
		q.Set("page", strconv.Itoa(page+1))
		next.RawQuery = q.Encode()
		next.Scheme, next.Host = "http", r.Host
		if r.TLS != nil {
			next.Scheme = "https"
		}
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, next.String()))
	}
	w.Header().Set("Content-Type", "application/json")
	page0 := items[start:end]
	if page0 == nil {
		page0 = []any{}
	}
	_ = jsonEncode(w, page0)
}

func jsonEncode(w http.ResponseWriter, v any) error { return json.NewEncoder(w).Encode(v) }

func labelObjects(labels []string) []map[string]any {
	out := make([]map[string]any, len(labels))
	for i, l := range labels {
		out[i] = map[string]any{"id": i + 1, "name": l, "color": "ededed"}
	}
	return out
}

// github answers GET /repos/{owner}/{repo}/pulls (open ones).
func (s *Server) github(w http.ResponseWriter, r *http.Request, repo string) {
	if !s.authorized(w, r.Header.Get("Authorization"), "Bearer "+s.Token) {
		return
	}
	pulls, ok := s.pulls(w, repo, func(p PullRequest) bool { return !p.Closed })
	if !ok {
		return
	}
	items := make([]any, len(pulls))
	for i, p := range pulls {
		items[i] = map[string]any{
			"number": p.Number, "state": "open", "title": p.Title,
			"user":   map[string]any{"login": p.Author, "type": "User"},
			"labels": labelObjects(p.Labels),
			"head":   map[string]any{"label": p.Author + ":" + p.Branch, "ref": p.Branch, "sha": p.SHA},
			"base":   map[string]any{"label": "org:" + p.TargetBranch, "ref": p.TargetBranch, "sha": "0000000000000000000000000000000000000000"},
		}
	}
	s.page(w, r, items)
}

// gitlab answers GET /projects/{id}/merge_requests, filtered by state
// and labels (every one).
func (s *Server) gitlab(w http.ResponseWriter, r *http.Request, project string) {
	if !s.authorized(w, r.Header.Get("PRIVATE-TOKEN"), s.Token) {
		return
	}
	state := r.URL.Query().Get("state")
	var want []string
	if l := r.URL.Query().Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	pulls, ok := s.pulls(w, project, func(p PullRequest) bool {
		st := p.State
		if st == "" {
			st = "opened"
		}
		if state != "" && state != "all" && state != st {
			return false
		}
		for _, l := range want {
			if !slices.Contains(p.Labels, l) {
				return false
			}
		}
		return true
	})
	if !ok {
		return
	}
	items := make([]any, len(pulls))
	for i, p := range pulls {
		labels := p.Labels
		if labels == nil {
			labels = []string{}
		}
		items[i] = map[string]any{
			"id": 1000 + p.Number, "iid": p.Number, "project_id": 1, "title": p.Title, "state": "opened",
			"source_branch": p.Branch, "target_branch": p.TargetBranch, "sha": p.SHA, "labels": labels,
			"author": map[string]any{"id": 1, "username": p.Author, "name": p.Author},
		}
	}
	s.page(w, r, items)
}

// gitea answers GET /repos/{owner}/{repo}/pulls?state=open.
func (s *Server) gitea(w http.ResponseWriter, r *http.Request, repo string) {
	if !s.authorized(w, r.Header.Get("Authorization"), "token "+s.Token) {
		return
	}
	pulls, ok := s.pulls(w, repo, func(p PullRequest) bool { return !p.Closed })
	if !ok {
		return
	}
	items := make([]any, len(pulls))
	for i, p := range pulls {
		items[i] = map[string]any{
			"id": 1000 + p.Number, "number": p.Number, "title": p.Title, "state": "open",
			"user":   map[string]any{"id": 1, "login": p.Author, "username": p.Author},
			"labels": labelObjects(p.Labels),
			"head":   map[string]any{"label": p.Branch, "ref": p.Branch, "sha": p.SHA},
			"base":   map[string]any{"label": p.TargetBranch, "ref": p.TargetBranch},
		}
	}
	s.page(w, r, items)
}
