package source

import (
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/reposerver"
)

// TestCommit reads who wrote a commit, by branch and by SHA, including an
// older commit a shallow fetch of the branch did not bring, with the tags
// that point to each (lightweight or annotated).
func TestCommit(t *testing.T) {
	f := newFixture(t)
	c := newCache(t, Options{})
	third := f.srv.Delete(t, "app", []string{"README.md"}, "drop readme")
	got, err := c.Commit(t.Context(), f.url, "main", reposerver.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	if got.SHA != third || got.Message != "drop readme" || got.Author != "Test Bot <bot@example.com>" || got.Date.IsZero() {
		t.Errorf("reposerver.Commit(main) = %+v, want %s by someone, dated, with its message", got, third)
	}
	old, err := c.Commit(t.Context(), f.url, f.first, reposerver.Credentials{})
	if err != nil {
		t.Fatalf("reposerver.Commit(%s), an older commit: %v", f.first, err)
	}
	if old.SHA != f.first || old.Message == "" || !slices.Equal(old.Tags, []string{f.firstTag}) {
		t.Errorf("reposerver.Commit(first) = %+v, want tags [%s]", old, f.firstTag)
	}
	ann, err := c.Commit(t.Context(), f.url, f.second, reposerver.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ann.Tags, []string{f.annTag}) {
		t.Errorf("reposerver.Commit(second).Tags = %v, want the annotated tag [%s]", ann.Tags, f.annTag)
	}
	if _, err := c.Commit(t.Context(), f.url, strings.Repeat("0", 40), reposerver.Credentials{}); err == nil {
		t.Error("reposerver.Commit of a SHA the repository lacks succeeded")
	}
}
