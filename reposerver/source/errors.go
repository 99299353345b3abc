package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// maxServerText bounds the text of an error from talking to a Git server,
// which may carry what the server sent.
const maxServerText = 200

// classify wraps a go-git error from talking to the remote in the typed
// error callers branch on: auth, not found, empty, or unreachable. The
// error's text is cut by serverText.
func classify(ctx context.Context, verb string, err error) error {
	err = &serverError{text: serverText(err), err: err}
	switch {
	case causeIs(err, ErrAuthFailed):
		return fmt.Errorf("%s: %w", verb, err)
	case isAuthError(err):
		return fmt.Errorf("%s: %w: %w", verb, ErrAuthFailed, err)
	case causeIs(err, transport.ErrRepositoryNotFound):
		return fmt.Errorf("%s: %w: %w", verb, ErrRepoNotFound, err)
	case causeIs(err, transport.ErrEmptyRemoteRepository):
		return fmt.Errorf("%s: %w: the repository has no commits", verb, ErrRevisionNotFound)
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w: %w", verb, ErrRepoUnreachable, ctx.Err())
	}
	return fmt.Errorf("%s: %w: %w", verb, ErrRepoUnreachable, err)
}

// serverText returns the text of err cut to its first non-blank line, with
// other control characters replaced by spaces, and to at most 200
// characters (the cut marked with "..."). Errors from talking to a Git
// server carry what the server sent (an HTTP error body, an ERR line): a
// page of HTML or a server's terminal escapes must not reach an
// Application's conditions, an Event or a log line whole.
func serverText(err error) string {
	if err == nil {
		return ""
	}
	text := strings.ToValidUTF8(err.Error(), "\uFFFD")
	line := ""
	for l := range strings.FieldsFuncSeq(text, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if strings.TrimSpace(l) != "" {
			line = l
			break
		}
	}
	line = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, line))
	if utf8.RuneCountInString(line) <= maxServerText {
		return line
	}
	const cut = "..."
	runes := []rune(line)
	return strings.TrimRightFunc(string(runes[:maxServerText-len(cut)]), unicode.IsSpace) + cut
}

// serverError is an error from a Git server with its text cut by
// serverText; errors.Is and errors.As still reach the original.
type serverError struct {
	text string
	err  error
}

func (e *serverError) Error() string { return e.text }
func (e *serverError) Unwrap() error { return e.err }

// causeIs is errors.Is that also looks inside go-git's wrappers.
func causeIs(err, target error) bool {
	return anyCause(err, func(e error) bool { return errors.Is(e, target) })
}

func isAuthError(err error) bool {
	return anyCause(err, func(e error) bool {
		return errors.Is(e, transport.ErrAuthenticationRequired) ||
			errors.Is(e, transport.ErrAuthorizationFailed) ||
			errors.Is(e, transport.ErrInvalidAuthMethod) ||
			errors.Is(e, ErrAuthFailed) ||
			// golang.org/x/crypto/ssh reports refused keys only as text.
			strings.Contains(e.Error(), "ssh: unable to authenticate")
	})
}

// isTerminal reports whether a fetch error should be returned rather than
// retried another way: the context is done, the credentials are refused,
// the repository is gone, or the network failed.
func isTerminal(ctx context.Context, err error) bool {
	return ctx.Err() != nil || isAuthError(err) ||
		causeIs(err, transport.ErrRepositoryNotFound) ||
		causeIs(err, transport.ErrEmptyRemoteRepository) ||
		anyCause(err, isNetworkError)
}

func isNetworkError(err error) bool {
	var ne net.Error
	var herr *githttp.Err
	switch {
	case errors.As(err, &ne):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	case errors.As(err, &herr):
		return herr.StatusCode() >= 500
	}
	return false
}

// anyCause applies pred to err and to every error it wraps, including the
// errors inside go-git's UnexpectedError and PermanentError, which do not
// implement Unwrap.
func anyCause(err error, pred func(error) bool) bool {
	for depth := 0; err != nil && depth < 32; depth++ {
		if pred(err) {
			return true
		}
		var ue *plumbing.UnexpectedError
		var pe *plumbing.PermanentError
		switch {
		case errors.As(err, &ue) && ue.Err != nil && ue.Err != err:
			if anyCause(ue.Err, pred) {
				return true
			}
		case errors.As(err, &pe) && pe.Err != nil && pe.Err != err:
			if anyCause(pe.Err, pred) {
				return true
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if anyCause(e, pred) {
					return true
				}
			}
			return false
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return false
		}
	}
	return false
}

// LimitError is a fetch stopped by one of the Cache's limits
// (Options.FetchTimeout, Options.MaxFetchBytes).
type LimitError struct {
	// Limit is "time" or "size".
	Limit string
	// Value is the limit as configured ("5m0s", "1024 MiB").
	Value string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("fetch stopped: it passed its %s limit (%s)", e.Limit, e.Value)
}
