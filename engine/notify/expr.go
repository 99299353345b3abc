package notify

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/argoproj/notifications-engine/pkg/util/text"
	giturls "github.com/chainguard-dev/git-urls"
)

// CommitMetadata is what repo.GetCommitMetadata returns, with Argo CD's
// field names.
type CommitMetadata struct {
	// Message is the commit message.
	Message string
	// Author is "Name <email>".
	Author string
	// Date is when the commit was authored.
	Date time.Time
	// Tags are the tags of the commit.
	Tags []string
}

// Repo reads what the repo functions of one Application's templates and
// conditions need; the controller implements it through the repo-server.
type Repo interface {
	// CommitMetadata is the commit sha of the Application's source
	// repository (spec.source.repoURL).
	CommitMetadata(sha string) (CommitMetadata, error)
	// AppDetails tells what the Application's first source is.
	AppDetails() (AppDetail, error)
}

// ErrNoRepo is the error of repo.GetCommitMetadata and repo.GetAppDetails
// when the caller gave no Repo.
var ErrNoRepo = errors.New("no repository reader")

// helpers are Argo CD's expression namespaces that depend on nothing: time
// (util/notification/expression/time), strings and sync.
var helpers = map[string]any{
	"time": map[string]any{
		"Parse": parseTime, "Now": time.Now,
		"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond, "Millisecond": time.Millisecond,
		"Second": time.Second, "Minute": time.Minute, "Hour": time.Hour,
		"Layout": time.Layout, "ANSIC": time.ANSIC, "UnixDate": time.UnixDate, "RubyDate": time.RubyDate,
		"RFC822": time.RFC822, "RFC822Z": time.RFC822Z, "RFC850": time.RFC850, "RFC1123": time.RFC1123,
		"RFC1123Z": time.RFC1123Z, "RFC3339": time.RFC3339, "RFC3339Nano": time.RFC3339Nano, "Kitchen": time.Kitchen,
		"Stamp": time.Stamp, "StampMilli": time.StampMilli, "StampMicro": time.StampMicro, "StampNano": time.StampNano,
	},
	"strings": map[string]any{"ReplaceAll": strings.ReplaceAll, "ToUpper": strings.ToUpper, "ToLower": strings.ToLower},
	"sync":    map[string]any{"GetInfoItem": GetInfoItem},
}

// parseTime is time.Parse: RFC 3339, as Argo CD's.
func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }

// vars are what conditions and templates of app see, as Argo CD's
// notifications controller builds them (util/notification/settings):
// app, appProject (an empty map when there is none), context, secrets and
// the time, strings, sync and repo functions.
func (c *Config) vars(app, project map[string]any, repo Repo, service string) map[string]any {
	if project == nil {
		project = map[string]any{}
	}
	v := map[string]any{
		"app": app, "appProject": project, "context": c.contextFor(service), "secrets": c.secrets,
		"repo": repoFuncs(repo),
	}
	for k, e := range helpers {
		v[k] = e
	}
	return v
}

// repoFuncs are Argo CD's repo namespace for one Application.
func repoFuncs(repo Repo) map[string]any {
	return map[string]any{
		"RepoURLToHTTPS":    RepoURLToHTTPS,
		"FullNameByRepoURL": FullNameByRepoURL,
		"QueryEscape":       url.QueryEscape,
		"GetCommitMetadata": func(sha string) (CommitMetadata, error) {
			if repo == nil {
				return CommitMetadata{}, fmt.Errorf("repo.GetCommitMetadata: %w", ErrNoRepo)
			}
			return repo.CommitMetadata(sha)
		},
		"GetAppDetails": func() (AppDetail, error) {
			if repo == nil {
				return AppDetail{}, fmt.Errorf("repo.GetAppDetails: %w", ErrNoRepo)
			}
			return repo.AppDetails()
		},
	}
}

var gitSuffix = regexp.MustCompile(`\.git$`)

// RepoURLToHTTPS is Argo CD's repo.RepoURLToHTTPS: the https:// form of a
// Git URL (git@github.com:org/repo.git is https://github.com/org/repo.git),
// without user information.
func RepoURLToHTTPS(rawURL string) (string, error) {
	u, err := giturls.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("repo.RepoURLToHTTPS: %w", err)
	}
	u.Scheme, u.User = "https", nil
	return u.String(), nil
}

// FullNameByRepoURL is Argo CD's repo.FullNameByRepoURL: owner/name of a
// repository URL (the first two elements of its path, without .git).
func FullNameByRepoURL(rawURL string) (string, error) {
	u, err := giturls.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("repo.FullNameByRepoURL: %w", err)
	}
	path := gitSuffix.ReplaceAllString(u.Path, "")
	if parts := text.SplitRemoveEmpty(path, "/"); len(parts) >= 2 {
		return strings.Join(parts[:2], "/"), nil
	}
	return path, nil
}

// GetInfoItem is sync.GetInfoItem of Argo CD's documentation: the value of
// the info item name of the Application's sync operation
// (status.operationState.operation.info, else operation.info).
func GetInfoItem(app map[string]any, name string) (string, error) {
	for _, path := range [][]string{{"status", "operationState", "operation"}, {"operation"}} {
		op, ok := nested(app, path...)
		if !ok {
			continue
		}
		items, _ := op["info"].([]any)
		for _, it := range items {
			item, _ := it.(map[string]any)
			if item["name"] == name {
				if v, ok := item["value"].(string); ok {
					return v, nil
				}
			}
		}
	}
	md, _ := app["metadata"].(map[string]any)
	return "", fmt.Errorf("sync.GetInfoItem: application %v has no info item %q", md["name"], name)
}

// nested is the map at path of m.
func nested(m map[string]any, path ...string) (map[string]any, bool) {
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			return nil, false
		}
		m = next
	}
	return m, true
}
