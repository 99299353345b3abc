package source

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// maxCommitMessage bounds the message kept, as a tenant writes it.
const maxCommitMessage = 4 << 10

// Commit returns the commit revision names in the repository at repoURL,
// fetching it first as Fetch does.
func (c *Cache) Commit(ctx context.Context, repoURL, revision string, creds reposerver.Credentials) (reposerver.Commit, error) {
	co, err := c.Fetch(ctx, repoURL, revision, creds)
	if err != nil {
		return reposerver.Commit{}, err
	}
	e := c.entry(entryKey(reposerver.NormalizeURL(repoURL), creds.Project))
	if err := e.lock(ctx); err != nil {
		return reposerver.Commit{}, fmt.Errorf("read commit %s: wait for repository lock: %w", co.Revision, err)
	}
	defer e.unlock()
	defer e.release()
	repo, err := e.open()
	if err != nil {
		return reposerver.Commit{}, fmt.Errorf("read commit %s: %w", co.Revision, err)
	}
	obj, err := repo.CommitObject(plumbing.NewHash(co.Revision))
	if err != nil {
		return reposerver.Commit{}, fmt.Errorf("read commit %s of %s: %w", co.Revision, reposerver.RedactURL(repoURL), err)
	}
	msg := strings.TrimRight(obj.Message, "\n")
	if len(msg) > maxCommitMessage {
		msg = msg[:maxCommitMessage] + "…"
	}
	return reposerver.Commit{
		SHA: co.Revision, Author: fmt.Sprintf("%s <%s>", obj.Author.Name, obj.Author.Email),
		Date: obj.Author.When.UTC(), Message: msg, Tags: tagsOf(e.listed, obj.Hash),
	}, nil
}

// tagsOf are the names of the tags of a listing (ls-remote) that point to
// commit h, directly or peeled, sorted.
func tagsOf(listed []*plumbing.Reference, h plumbing.Hash) []string {
	r := indexRefs(listed)
	var tags []string
	for name := range r.hashes {
		if c, ok := r.commit(name); ok && c == h && name.IsTag() {
			tags = append(tags, name.Short())
		}
	}
	sort.Strings(tags)
	return tags
}
