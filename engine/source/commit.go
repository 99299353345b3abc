package source

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Commit is who wrote a commit, when, and why: Argo CD's revision metadata,
// which its UI shows in an Application's history.
type Commit struct {
	// SHA is the commit's full hash.
	SHA string `json:"sha"`
	// Author is "Name <email>".
	Author string    `json:"author"`
	Date   time.Time `json:"date"`
	// Message is the commit message without trailing newlines.
	Message string `json:"message"`
}

// maxCommitMessage bounds the message kept, as a tenant writes it.
const maxCommitMessage = 4 << 10

// Commit returns the commit revision names in the repository at repoURL,
// fetching it first as Fetch does.
func (c *Cache) Commit(ctx context.Context, repoURL, revision string, creds Credentials) (Commit, error) {
	co, err := c.Fetch(ctx, repoURL, revision, creds)
	if err != nil {
		return Commit{}, err
	}
	e := c.entry(entryKey(NormalizeURL(repoURL), creds.Project))
	if err := e.lock(ctx); err != nil {
		return Commit{}, fmt.Errorf("read commit %s: wait for repository lock: %w", co.Revision, err)
	}
	defer e.unlock()
	defer e.release()
	repo, err := e.open()
	if err != nil {
		return Commit{}, fmt.Errorf("read commit %s: %w", co.Revision, err)
	}
	obj, err := repo.CommitObject(plumbing.NewHash(co.Revision))
	if err != nil {
		return Commit{}, fmt.Errorf("read commit %s of %s: %w", co.Revision, RedactURL(repoURL), err)
	}
	msg := strings.TrimRight(obj.Message, "\n")
	if len(msg) > maxCommitMessage {
		msg = msg[:maxCommitMessage] + "…"
	}
	return Commit{
		SHA: co.Revision, Author: fmt.Sprintf("%s <%s>", obj.Author.Name, obj.Author.Email),
		Date: obj.Author.When.UTC(), Message: msg,
	}, nil
}
