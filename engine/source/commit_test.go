package source

import (
	"strings"
	"testing"
)

// TestCommit reads who wrote a commit, by branch and by SHA, including an
// older commit a shallow fetch of the branch did not bring.
func TestCommit(t *testing.T) {
	f := newFixture(t)
	c := newCache(t, Options{})
	third := f.srv.Delete(t, "app", []string{"README.md"}, "drop readme")
	got, err := c.Commit(t.Context(), f.url, "main", Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	if got.SHA != third || got.Message != "drop readme" || got.Author != "Test Bot <bot@example.com>" || got.Date.IsZero() {
		t.Errorf("Commit(main) = %+v, want %s by someone, dated, with its message", got, third)
	}
	old, err := c.Commit(t.Context(), f.url, f.first, Credentials{})
	if err != nil {
		t.Fatalf("Commit(%s), an older commit: %v", f.first, err)
	}
	if old.SHA != f.first || old.Message == "" {
		t.Errorf("Commit(first) = %+v", old)
	}
	if _, err := c.Commit(t.Context(), f.url, strings.Repeat("0", 40), Credentials{}); err == nil {
		t.Error("Commit of a SHA the repository lacks succeeded")
	}
}
