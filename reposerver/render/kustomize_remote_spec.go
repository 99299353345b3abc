package render

import (
	"errors"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// GitSpec is a remote Kustomize base, an entry of a kustomization's
// resources, bases or components that kustomize clones: the repository,
// the base's directory in it and the ref.
type GitSpec struct {
	// RepoURL is the repository as kustomize clones it: GitHub shorthand
	// becomes https://github.com/org/repo (git@github.com:org/repo with a
	// user or ssh://), a "git::" prefix is dropped, and the rest is kept
	// as written (https://host/org/repo.git, ssh://git@host/org/repo,
	// git@host:org/repo).
	RepoURL string
	// Path is the base's directory inside the repository, clean and
	// slash-separated; "" is the repository's root.
	Path string
	// Ref is the branch, tag or commit of ?ref= (else ?version=); "" is
	// the repository's default branch (HEAD).
	Ref string
}

// Schemes a Git spec may start with, as kustomize accepts them (in any
// case).
var gitSchemes = []string{"ssh://", "https://", "http://", "file://"}

// ParseGitSpec reads entry as kustomize's repospec reads a remote base,
// with the same results and the same refusals:
//
//   - the query is cut off first: ref=, else version=, names the ref
//     (timeout= and submodules= are ignored);
//   - a "git::" prefix is dropped; the scheme is ssh://, https://, http://
//     or file://, or none for GitHub shorthand (github.com/org/repo) and
//     scp-style addresses, which need a user (git@host:org/repo);
//   - the repository ends at "_git/<name>" (Azure DevOps), else at "//",
//     else after ".git", else after two path segments (org/repo; all of
//     them for file://), and the rest is the path inside it, which may
//     not climb out of it.
//
// An entry that is not a Git spec (a local path) is an error.
func ParseGitSpec(entry string) (GitSpec, error) {
	if filepath.IsAbs(entry) {
		return GitSpec{}, errors.New("an absolute path is not a Git repository")
	}
	rest, query, _ := strings.Cut(entry, "?")
	host, rest, err := gitHost(rest)
	if err != nil {
		return GitSpec{}, err
	}
	repoPath, dir, err := gitPathParts(rest, strings.HasPrefix(host, "file://"))
	if err != nil {
		return GitSpec{}, err
	}
	dir = path.Clean("/" + dir)[1:]
	return GitSpec{RepoURL: host + repoPath, Path: dir, Ref: gitRef(query)}, nil
}

// gitRef is the ref a spec's query names: ref=, else version=; "" when
// the query does not parse.
func gitRef(query string) string {
	v, err := url.ParseQuery(query)
	if err != nil {
		return ""
	}
	if r := v.Get("ref"); r != "" {
		return r
	}
	return v.Get("version")
}

// gitHost splits a spec without its query into its scheme, user and host
// (as the clone URL starts: "https://github.com/", "git@host:") and the
// rest.
func gitHost(n string) (host, rest string, err error) {
	n, _ = cutPrefixFold(n, "git::")
	scheme := ""
	for _, s := range gitSchemes {
		if r, ok := cutPrefixFold(n, s); ok {
			scheme, n = s, r
			break
		}
	}
	user := gitUser.FindString(n)
	n = n[len(user):]
	lower := strings.ToLower(n)
	github := strings.HasPrefix(lower, "github.com/") || strings.HasPrefix(lower, "github.com:")
	scp := scheme == "" && (user != "" || github)
	if scheme == "" && !scp {
		return "", "", errors.New("not a Git URL: no scheme")
	}
	if scheme == "file://" {
		return scheme, user + n, nil
	}
	host = n
	if sep := gitHostEnd(n, scp); sep >= 0 {
		host, rest = n[:sep+1], n[sep+1:]
	}
	if github {
		if scheme == "ssh://" || user != "" {
			scheme, host = "", "github.com:"
		} else {
			scheme, user, host = "https://", "", "github.com/"
		}
	}
	if host == "" {
		return "", "", errors.New("not a Git URL: no host")
	}
	return scheme + user + host, rest, nil
}

// gitHostEnd is the index of the separator after the host: the first "/",
// or for an scp-style address a ":" before it.
func gitHostEnd(n string, scp bool) int {
	sep := strings.Index(n, "/")
	if scp {
		if colon := strings.Index(n, ":"); sep < 0 || colon > 0 && colon < sep {
			sep = colon
		}
	}
	return sep
}

// gitPathParts splits what follows the host into the repository and the
// path inside it.
func gitPathParts(n string, fileScheme bool) (repoPath, dir string, err error) {
	switch {
	case strings.Contains(n, "_git/"):
		i := strings.Index(n, "_git/") + len("_git/")
		name, sub, _ := strings.Cut(n[i:], "/")
		repoPath, dir = n[:i]+name, sub
	case strings.Contains(n, "//"):
		repoPath, dir, _ = strings.Cut(n, "//")
	case strings.Contains(n, ".git"):
		i := strings.Index(n, ".git") + len(".git")
		repoPath, dir = n[:i], n[i:]
	case fileScheme:
		repoPath = n
	default:
		segs := strings.Split(n, "/")
		if len(segs) < 2 {
			return "", "", errors.New("not a Git URL: no org/repo path")
		}
		repoPath, dir = strings.Join(segs[:2], "/"), strings.Join(segs[2:], "/")
	}
	if repoPath == "" {
		return "", "", errors.New("not a Git URL: no repository path")
	}
	first, _, _ := strings.Cut(path.Clean(strings.TrimPrefix(dir, "/")), "/")
	if first == ".." {
		return "", "", errors.New("the path leaves the repository")
	}
	return repoPath, dir, nil
}

// cutPrefixFold is strings.CutPrefix ignoring the case of ASCII letters.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// manifestExt matches the file names a remote file entry usually has.
var manifestExt = regexp.MustCompile(`(?i)\.(ya?ml|json)$`)

// isRemoteFile reports whether the remote entry s names a file kustomize
// would download over HTTP rather than a Git repository it would clone:
// an http(s) URL without a Git marker (no "git::" prefix, no "//" or
// "_git/" in its path, no path segment ending in ".git", no ref= or
// version=) whose last segment is a .yaml, .yml or .json file.
// kustomize itself tries an HTTP download first and clones when that
// fails; the repo-server downloads nothing, so it tells them apart by
// their form.
func isRemoteFile(s string) bool {
	rest, query, _ := strings.Cut(s, "?")
	u, ok := cutPrefixFold(rest, "https://")
	if !ok {
		if u, ok = cutPrefixFold(rest, "http://"); !ok {
			return false
		}
	}
	if q, err := url.ParseQuery(query); err == nil && (q.Get("ref") != "" || q.Get("version") != "") {
		return false
	}
	_, p, _ := strings.Cut(u, "/")
	if strings.Contains(p, "//") || strings.Contains(p, "_git/") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if strings.HasSuffix(strings.ToLower(seg), ".git") {
			return false
		}
	}
	return manifestExt.MatchString(p)
}
