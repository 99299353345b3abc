package source

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/reposerver"
)

// requestLog records the Git requests a Cache reports.
type requestLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) ObserveGitRequest(repo, requestType string, _ time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, requestType+" "+repo)
}

func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.seen
	l.seen = nil
	return out
}

// TestFetchReportsRequests reports each ls-remote and fetch a Fetch makes,
// by the repository's normalized URL, which holds no credentials; what the
// cache answers is no request.
func TestFetchReportsRequests(t *testing.T) {
	f := newFixture(t)
	var log requestLog
	c := newCache(t, Options{Requests: &log})
	// Fetched with credentials in the URL, reported without them.
	withPassword := strings.Replace(f.url, "://", "://alice:s3cret@", 1)
	repo := reposerver.NormalizeURL(f.url)
	steps := []struct {
		name string
		rev  string
		opts []FetchOption
		want []string
	}{
		{"a branch, first time", "main", nil, []string{"ls-remote " + repo, "fetch " + repo}},
		{"the branch again: listed, already fetched", "main", nil, []string{"ls-remote " + repo}},
		{"a young listing answers", "main", []FetchOption{ListingMaxAge(time.Hour)}, nil},
		{"a commit already checked out", f.second, nil, nil},
	}
	for _, s := range steps {
		if _, err := c.Fetch(t.Context(), withPassword, s.rev, reposerver.Credentials{}, s.opts...); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if diff := cmp.Diff(s.want, log.take()); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", s.name, diff)
		}
	}
}
