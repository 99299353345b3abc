package source

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tollgate-dev/tollgate/reposerver"
)

func TestServerText(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"short line kept", errors.New("authentication required: bad token"), "authentication required: bad token"},
		{"first line only", errors.New("remote error: access denied\n<html>\n<body>secret page</body>"), "remote error: access denied"},
		{"carriage return ends the line", errors.New("denied\r\nmore"), "denied"},
		{"first non-blank line", errors.New("\n  \r\nrepository moved\nsee elsewhere"), "repository moved"},
		{"control characters become spaces", errors.New("\x1b[31mred\x1b[0m\tdone\x00"), "[31mred [0m done"},
		{"cut at 200 characters", errors.New(long), strings.Repeat("x", 197) + "..."},
		{"exactly 200 kept", errors.New(long[:200]), long[:200]},
		{"cut counts characters, not bytes", errors.New(strings.Repeat("é", 250)), strings.Repeat("é", 197) + "..."},
		{"no space before the cut mark", errors.New(strings.Repeat("x", 196) + " " + long), strings.Repeat("x", 196) + "..."},
		{"invalid UTF-8 replaced", errors.New("bad \xff byte"), "bad \uFFFD byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := serverText(tt.err)
			if got != tt.want {
				t.Errorf("serverText\n got: %q\nwant: %q", got, tt.want)
			}
			if n := utf8.RuneCountInString(got); n > maxServerText {
				t.Errorf("%d characters, want at most %d", n, maxServerText)
			}
		})
	}
}

// TestFetchCutsServerErrorBody checks that what a Git server answers with an
// error reaches the caller as one short line, still classified.
func TestFetchCutsServerErrorBody(t *testing.T) {
	body := strings.Repeat("<p>internal detail</p>", 40) + "\n<html>\n" + strings.Repeat("more\n", 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	c := newCache(t, Options{})
	url := srv.URL + "/repo.git"
	_, err := c.Fetch(t.Context(), url, "main", reposerver.Credentials{})
	if !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("error = %v, want ErrAuthFailed", err)
	}
	server := ("authentication required: " + strings.Repeat("<p>internal detail</p>", 40))[:197] + "..."
	want := `fetch ` + url + ` at "main": list references: authentication failed: ` + server
	if got := err.Error(); got != want {
		t.Errorf("error\n got: %q\nwant: %q", got, want)
	}
}
