// Package sandbox renders an application source in a child process under
// hard limits, so that a hostile chart or overlay costs one render, never
// the process that asked for it: a wall-clock timeout (the child is
// killed), a memory limit (the child's heap), and caps on the
// bytes and objects it may return. The child is the same binary re-run with
// a hidden subcommand that calls Serve; it gets an empty environment, so it
// sees none of the parent's secrets.
//
// Runner.Build has the signature of render.Build; a render that passes a
// limit returns a *LimitError naming it.
package sandbox

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/engine/render"
)

// Limits bound one render in its child process.
type Limits struct {
	// Timeout is the wall-clock time a render may take (Argo CD's repo
	// server uses 90 s for its tools).
	Timeout time.Duration
	// MemoryBytes caps the child's heap where the platform allows it
	// (Linux: RLIMIT_DATA, which counts the memory the Go runtime maps for
	// its heap but not the address space it only reserves; RLIMIT_AS would
	// stop the runtime itself). The garbage collector aims at half of it.
	MemoryBytes int64
	// OutputBytes caps the encoded result the child returns.
	OutputBytes int64
	// Objects caps the documents one render may return.
	Objects int
}

// DefaultLimits are the limits of a render unless configured otherwise.
func DefaultLimits() Limits {
	return Limits{Timeout: 90 * time.Second, MemoryBytes: 1 << 30, OutputBytes: 256 << 20, Objects: 100_000}
}

// LimitError is a render stopped by one of its limits.
type LimitError struct {
	// Limit is "time", "memory", "output" or "objects".
	Limit string
	// Value is the limit, as configured ("90s", "1024 MiB").
	Value string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("render stopped: it passed its %s limit (%s)", e.Limit, e.Value)
}

// Runner renders in child processes: Path run with Args, which must call
// Serve on its standard input and output.
type Runner struct {
	Path string
	Args []string
	// Env is the child's whole environment; empty by default.
	Env    []string
	Limits Limits
}

// request is what the parent sends the child.
type request struct {
	Root, Dir   string
	Options     render.Options
	Limits      render.Limits
	MemoryBytes int64
}

// response is what the child sends back.
type response struct {
	Result render.Result
	Err    string
}

// maxStderr is how much of the child's standard error is kept to explain a
// failure.
const maxStderr = 8 << 10

// Build renders like render.Build, in a child process under r.Limits.
func (r *Runner) Build(ctx context.Context, root, dir string, opts render.Options, lim render.Limits) (render.Result, error) {
	l := r.Limits
	var in bytes.Buffer
	if err := gob.NewEncoder(&in).Encode(request{Root: root, Dir: dir, Options: opts, Limits: lim, MemoryBytes: l.MemoryBytes}); err != nil {
		return render.Result{}, fmt.Errorf("render %s: encode request: %w", dir, err)
	}
	cctx, cancel := context.WithTimeout(ctx, l.Timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, r.Path, r.Args...)
	// Never nil: a nil Env would hand the child the parent's environment.
	cmd.Env = append([]string{}, r.Env...)
	cmd.Stdin = &in
	stderr := &headBuffer{max: maxStderr}
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return render.Result{}, fmt.Errorf("render %s: %w", dir, err)
	}
	if err := cmd.Start(); err != nil {
		return render.Result{}, fmt.Errorf("render %s: start renderer: %w", dir, err)
	}
	out, readErr := io.ReadAll(io.LimitReader(stdout, l.OutputBytes+1))
	tooBig := int64(len(out)) > l.OutputBytes
	if tooBig {
		_ = cmd.Process.Kill()
	}
	waitErr := cmd.Wait()
	switch {
	case tooBig:
		return render.Result{}, fmt.Errorf("render %s: %w", dir, &LimitError{Limit: "output", Value: mib(l.OutputBytes)})
	case cctx.Err() != nil && ctx.Err() == nil:
		return render.Result{}, fmt.Errorf("render %s: %w", dir, &LimitError{Limit: "time", Value: l.Timeout.String()})
	case ctx.Err() != nil:
		return render.Result{}, fmt.Errorf("render %s: %w", dir, ctx.Err())
	case waitErr != nil && outOfMemory(stderr.String()):
		return render.Result{}, fmt.Errorf("render %s: %w", dir, &LimitError{Limit: "memory", Value: mib(l.MemoryBytes)})
	case waitErr != nil:
		return render.Result{}, fmt.Errorf("render %s: renderer failed: %v: %s", dir, waitErr, firstLine(stderr.String()))
	case readErr != nil:
		return render.Result{}, fmt.Errorf("render %s: read result: %w", dir, readErr)
	}
	var resp response
	if err := gob.NewDecoder(bytes.NewReader(out)).Decode(&resp); err != nil {
		return render.Result{}, fmt.Errorf("render %s: decode result: %w", dir, err)
	}
	if resp.Err != "" {
		return render.Result{}, errors.New(resp.Err)
	}
	if len(resp.Result.Documents) > l.Objects {
		return render.Result{}, fmt.Errorf("render %s: %w", dir, &LimitError{Limit: "objects", Value: fmt.Sprint(l.Objects)})
	}
	return resp.Result, nil
}

// Serve is the child's side: it reads one request from in, limits its own
// memory, renders and writes the response to out. A render error is part of
// the response; Serve's error means the exchange itself failed.
func Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	var req request
	if err := gob.NewDecoder(in).Decode(&req); err != nil {
		return fmt.Errorf("read render request: %w", err)
	}
	if err := limitMemory(req.MemoryBytes); err != nil {
		return err
	}
	var resp response
	res, err := render.Build(ctx, req.Root, req.Dir, req.Options, req.Limits)
	if err != nil {
		resp.Err = err.Error()
	} else {
		resp.Result = res
	}
	if err := gob.NewEncoder(out).Encode(resp); err != nil {
		return fmt.Errorf("write render result: %w", err)
	}
	return nil
}

// outOfMemory recognises the Go runtime's death by a refused allocation.
// A thread's stack counts against RLIMIT_DATA too, so a child at its limit
// may die creating a thread instead (pthread_create: EAGAIN).
func outOfMemory(stderr string) bool {
	return strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory") ||
		strings.Contains(stderr, "pthread_create failed: Resource temporarily unavailable")
}

func mib(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// headBuffer keeps the first max bytes written to it: where a Go program's
// fatal error says what happened, before the goroutine dump.
type headBuffer struct {
	max int
	buf []byte
}

func (t *headBuffer) Write(p []byte) (int, error) {
	if room := t.max - len(t.buf); room > 0 {
		t.buf = append(t.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (t *headBuffer) String() string { return string(t.buf) }

func init() {
	// The value types of decoded objects travel inside interfaces.
	gob.Register(map[string]any{})
	gob.Register([]any{})
}
