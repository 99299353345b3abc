package scmapi

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Repo is one repository the fake serves to SCM provider listings.
type Repo struct {
	Name          string
	DefaultBranch string
	// Branches are the branches' head SHAs by name; the default branch
	// must be one of them (or the repository is empty).
	Branches map[string]string
	// Topics are GitHub's and GitLab's topics, and Gitea's labels.
	Topics   []string
	Archived bool
	// Files are the paths every branch holds; their parent directories
	// exist too.
	Files []string
	// ID is the repository's (GitLab's project) ID; set by SetRepos.
	ID int
}

// SetRepos sets the repositories of org (a GitHub organization, GitLab
// group path or Gitea owner).
func (s *Server) SetRepos(org string, repos ...Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.orgs == nil {
		s.orgs = map[string][]Repo{}
	}
	for i := range repos {
		s.nextID++
		repos[i].ID = 100 + s.nextID
	}
	s.orgs[org] = repos
}

// repo finds a repository by org and name, or by GitLab project ID.
func (s *Server) repo(org, name string, id int) (string, Repo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for o, repos := range s.orgs {
		for _, r := range repos {
			if (id != 0 && r.ID == id) || (id == 0 && o == org && r.Name == name) {
				return o, r, true
			}
		}
	}
	return "", Repo{}, false
}

func (r Repo) hasPath(p string) bool {
	p = strings.Trim(p, "/")
	for _, f := range r.Files {
		if f == p || strings.HasPrefix(f, p+"/") {
			return true
		}
	}
	return false
}

func (r Repo) branchNames() []string {
	var names []string
	for n := range r.Branches {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (s *Server) cloneURLs(org, name string) (ssh, https string) {
	u, _ := url.Parse(s.URL)
	return "git@" + u.Hostname() + ":" + org + "/" + name + ".git", s.URL + "/" + org + "/" + name + ".git"
}

// serveRepos answers the repository listings; false when parts is none.
func (s *Server) serveRepos(w http.ResponseWriter, r *http.Request, parts []string) bool {
	seg := func(i int) string { v, _ := url.PathUnescape(parts[i]); return v }
	rest := func(i int) string { v, _ := url.PathUnescape(strings.Join(parts[i:], "/")); return v }
	n := len(parts)
	switch {
	case n < 3:
		return false
	case parts[1] == "v3" && n == 5 && parts[2] == "orgs" && parts[4] == "repos":
		if s.authorized(w, r.Header.Get("Authorization"), "Bearer "+s.Token) {
			s.githubRepos(w, r, seg(3))
		}
	case parts[1] == "v1" && n == 5 && parts[2] == "orgs" && parts[4] == "repos":
		if s.authorized(w, r.Header.Get("Authorization"), "token "+s.Token) {
			s.giteaRepos(w, r, seg(3))
		}
	case parts[1] == "v4" && n == 5 && parts[2] == "groups" && parts[4] == "projects":
		if s.authorized(w, r.Header.Get("PRIVATE-TOKEN"), s.Token) {
			s.gitlabProjects(w, r, seg(3))
		}
	case (parts[1] == "v3" || parts[1] == "v1") && n >= 6 && parts[2] == "repos" && parts[5] != "pulls":
		want := "Bearer " + s.Token
		if parts[1] == "v1" {
			want = "token " + s.Token
		}
		if !s.authorized(w, r.Header.Get("Authorization"), want) {
			return true
		}
		_, repo, ok := s.repo(seg(3), seg(4), 0)
		if !ok {
			notFound(w)
			return true
		}
		s.repoPart(w, r, repo, parts[5], rest(6), parts[1] == "v1")
	case parts[1] == "v4" && n >= 6 && parts[2] == "projects" && parts[4] == "repository":
		if !s.authorized(w, r.Header.Get("PRIVATE-TOKEN"), s.Token) {
			return true
		}
		id, _ := strconv.Atoi(seg(3))
		_, repo, ok := s.repo("", "", id)
		if !ok {
			notFound(w)
			return true
		}
		s.gitlabRepoPart(w, r, repo, parts[5], rest(6))
	default:
		return false
	}
	return true
}

func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"message":"Not Found"}`))
}

func (s *Server) orgRepos(w http.ResponseWriter, org string) ([]Repo, bool) {
	s.mu.Lock()
	repos, ok := s.orgs[org]
	s.mu.Unlock()
	if !ok {
		notFound(w)
	}
	return repos, ok
}

func (s *Server) githubRepos(w http.ResponseWriter, r *http.Request, org string) {
	repos, ok := s.orgRepos(w, org)
	if !ok {
		return
	}
	var items []any
	for _, rp := range repos {
		ssh, https := s.cloneURLs(org, rp.Name)
		items = append(items, map[string]any{"id": rp.ID, "name": rp.Name, "full_name": org + "/" + rp.Name,
			"owner": map[string]any{"login": org}, "default_branch": rp.DefaultBranch, "ssh_url": ssh, "clone_url": https,
			"topics": nonNil(rp.Topics), "archived": rp.Archived})
	}
	s.page(w, r, items)
}

func (s *Server) giteaRepos(w http.ResponseWriter, r *http.Request, org string) {
	repos, ok := s.orgRepos(w, org)
	if !ok {
		return
	}
	var items []any
	for _, rp := range repos {
		ssh, https := s.cloneURLs(org, rp.Name)
		items = append(items, map[string]any{"id": rp.ID, "name": rp.Name, "full_name": org + "/" + rp.Name,
			"owner": map[string]any{"login": org}, "default_branch": rp.DefaultBranch, "ssh_url": ssh,
			"html_url": strings.TrimSuffix(https, ".git"), "clone_url": https, "archived": rp.Archived})
	}
	s.page(w, r, items)
}

// gitlabProjects answers GET /groups/{id}/projects: the group's, and its
// subgroups' with include_subgroups=true; topic filters.
func (s *Server) gitlabProjects(w http.ResponseWriter, r *http.Request, group string) {
	q := r.URL.Query()
	s.mu.Lock()
	var names []string
	for o := range s.orgs {
		if o == group || (q.Get("include_subgroups") == "true" && strings.HasPrefix(o, group+"/")) {
			names = append(names, o)
		}
	}
	s.mu.Unlock()
	if len(names) == 0 {
		notFound(w)
		return
	}
	slices.Sort(names)
	var items []any
	for _, o := range names {
		repos, _ := s.orgRepos(w, o)
		for _, rp := range repos {
			if t := q.Get("topic"); t != "" && !slices.Contains(rp.Topics, t) {
				continue
			}
			ssh, https := s.cloneURLs(o, rp.Name)
			items = append(items, map[string]any{"id": rp.ID, "path": rp.Name, "path_with_namespace": o + "/" + rp.Name,
				"namespace": map[string]any{"full_path": o}, "default_branch": rp.DefaultBranch,
				"ssh_url_to_repo": ssh, "http_url_to_repo": https, "topics": nonNil(rp.Topics), "archived": rp.Archived})
		}
	}
	s.page(w, r, items)
}

// repoPart answers GitHub's and Gitea's branches, contents and (Gitea)
// labels of a repository.
func (s *Server) repoPart(w http.ResponseWriter, r *http.Request, repo Repo, what, rest string, gitea bool) {
	branch := func(name string) map[string]any {
		if gitea {
			return map[string]any{"name": name, "commit": map[string]any{"id": repo.Branches[name]}}
		}
		return map[string]any{"name": name, "commit": map[string]any{"sha": repo.Branches[name]}, "protected": false}
	}
	switch {
	case what == "branches" && rest == "":
		var items []any
		for _, name := range repo.branchNames() {
			items = append(items, branch(name))
		}
		s.page(w, r, items)
	case what == "branches":
		if _, ok := repo.Branches[rest]; !ok {
			notFound(w)
			return
		}
		writeJSON(w, branch(rest))
	case what == "contents":
		if _, ok := repo.Branches[r.URL.Query().Get("ref")]; !ok || !repo.hasPath(rest) {
			notFound(w)
			return
		}
		writeJSON(w, map[string]any{"type": "file", "path": rest})
	case what == "labels" && gitea:
		var items []any
		for i, t := range repo.Topics {
			items = append(items, map[string]any{"id": i + 1, "name": t, "color": "ededed"})
		}
		s.page(w, r, items)
	default:
		notFound(w)
	}
}

// gitlabRepoPart answers GitLab's branches, files and tree of a project.
func (s *Server) gitlabRepoPart(w http.ResponseWriter, r *http.Request, repo Repo, what, rest string) {
	branch := func(name string) map[string]any {
		return map[string]any{"name": name, "commit": map[string]any{"id": repo.Branches[name]}, "default": name == repo.DefaultBranch}
	}
	ref := r.URL.Query().Get("ref")
	_, refOK := repo.Branches[ref]
	switch {
	case what == "branches" && rest == "":
		var items []any
		for _, name := range repo.branchNames() {
			items = append(items, branch(name))
		}
		s.page(w, r, items)
	case what == "branches":
		if _, ok := repo.Branches[rest]; !ok {
			notFound(w)
			return
		}
		writeJSON(w, branch(rest))
	case what == "files":
		if !refOK || !slices.Contains(repo.Files, rest) {
			notFound(w)
			return
		}
		writeJSON(w, map[string]any{"file_path": rest, "ref": ref})
	case what == "tree":
		p := r.URL.Query().Get("path")
		if !refOK || !repo.hasPath(p) || slices.Contains(repo.Files, p) {
			notFound(w)
			return
		}
		writeJSON(w, []any{})
	default:
		notFound(w)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = jsonEncode(w, v)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
