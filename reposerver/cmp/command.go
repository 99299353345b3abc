package cmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/go-logr/logr"
)

// killGrace is how long a command's process group has between SIGTERM and
// SIGKILL once its time is up, as in argocd-cmp-server.
const killGrace = 5 * time.Second

// maxStderrBytes bounds the stderr a failed command's error carries: its
// last bytes, where the reason usually is.
const maxStderrBytes = 16 << 10

// ErrCommandTimeout is what a CmdError's Cause wraps when the command ran
// out of time.
var ErrCommandTimeout = errors.New("command timeout")

// CmdError is a plugin command that failed, as argocd-cmp-server reports
// it: "`<args>` failed <cause>: <stderr>".
type CmdError struct {
	// Args is the command line, arguments with spaces quoted.
	Args string
	// Stderr is the end of the command's stderr, trimmed.
	Stderr string
	// Cause is the exit status, the timeout or the output limit.
	Cause error
}

func (e *CmdError) Error() string {
	msg := fmt.Sprintf("`%s` failed %v", e.Args, e.Cause)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *CmdError) Unwrap() error { return e.Cause }

// runner runs plugin commands.
type runner struct {
	timeout   time.Duration // per command; 0: only ctx
	maxOutput int64         // stdout bytes
}

// run runs c in dir with env and returns its stdout without one trailing
// newline. The command runs in its own process group; at the timeout or
// when ctx ends the group gets SIGTERM, then SIGKILL after killGrace, and
// whatever of the group outlives the command is killed when it exits.
func (r runner) run(ctx context.Context, c Command, dir string, env []string) (string, error) {
	argv := c.argv()
	if len(argv) == 0 {
		return "", errors.New("command is empty")
	}
	args := argsToLog(argv)
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.timeout, ErrCommandTimeout)
		defer cancel()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	logr.FromContextOrDiscard(ctx).V(1).Info("running plugin command", "dir", dir, "command", args)

	stdout := &limitedBuffer{max: r.maxOutput, full: func() { cancel(ErrOutputTooLarge) }}
	stderr := &tailBuffer{max: maxStderrBytes}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	done := make(chan struct{})
	cmd.Cancel = func() error {
		pid := cmd.Process.Pid
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		go func() {
			t := time.NewTimer(killGrace)
			defer t.Stop()
			select {
			case <-t.C:
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			case <-done:
			}
		}()
		return nil
	}
	cmd.WaitDelay = killGrace + time.Second
	if err := cmd.Start(); err != nil {
		return "", &CmdError{Args: args, Cause: err}
	}
	err := cmd.Wait()
	close(done)
	// The leader is gone; its group lives on while a member does, so its
	// id cannot have been reused.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err != nil || ctx.Err() != nil {
		cause := err
		switch c := context.Cause(ctx); {
		case errors.Is(c, ErrCommandTimeout):
			cause = limitError{fmt.Sprintf("timeout after %s", r.timeout), ErrCommandTimeout}
		case errors.Is(c, ErrOutputTooLarge):
			cause = limitError{fmt.Sprintf("output over the limit of %d bytes", r.maxOutput), ErrOutputTooLarge}
		case c != nil:
			cause = c
		}
		return "", &CmdError{Args: args, Stderr: strings.TrimSpace(stderr.String()), Cause: cause}
	}
	return strings.TrimSuffix(stdout.String(), "\n"), nil
}

// Run runs argv in dir with env as a plugin's commands run: in its own
// process group, ended at timeout (0: only ctx) or when ctx ends, stdout
// capped at maxOutput bytes (0: no cap); it returns stdout without one
// trailing newline. A command that fails is a *CmdError whose Cause wraps
// ErrCommandTimeout or ErrOutputTooLarge when a limit stopped it. For
// tollgate test's local plugin commands.
func Run(ctx context.Context, argv []string, dir string, env []string, timeout time.Duration, maxOutput int64) (string, error) {
	return runner{timeout: timeout, maxOutput: maxOutput}.run(ctx, Command{Command: argv}, dir, env)
}

// limitError is a limit that stopped a command: its message, and the
// sentinel it wraps.
type limitError struct {
	msg string
	err error
}

func (e limitError) Error() string { return e.msg }
func (e limitError) Unwrap() error { return e.err }

// argsToLog is the command line as Argo CD logs it: arguments with white
// space quoted, empty ones as "".
func argsToLog(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		switch {
		case a == "":
			out[i] = `""`
		case strings.IndexFunc(a, unicode.IsSpace) >= 0:
			out[i] = strconv.Quote(a)
		default:
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

// ErrOutputTooLarge is what a CmdError's Cause wraps when the command's
// stdout passed its limit.
var ErrOutputTooLarge = errors.New("output too large")

// limitedBuffer keeps at most max bytes (0: no limit) and calls full, then
// fails, when more come. (It has no ReadFrom, which io.Copy would use
// instead of Write.)
type limitedBuffer struct {
	buf  bytes.Buffer
	max  int64
	full func()
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.max > 0 && int64(b.buf.Len()+len(p)) > b.max {
		b.full()
		return 0, ErrOutputTooLarge
	}
	return b.buf.Write(p)
}

func (b *limitedBuffer) String() string { return b.buf.String() }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	buf       []byte
	max       int
	truncated bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		// Trim at twice the size, so trimming costs O(1) per byte.
		if len(b.buf) >= 2*b.max {
			b.buf = append(b.buf[:0], b.buf[over:]...)
			b.truncated = true
		}
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	s := b.buf
	if len(s) > b.max {
		s, b.truncated = s[len(s)-b.max:], true
	}
	if b.truncated {
		return "..." + string(s)
	}
	return string(s)
}
