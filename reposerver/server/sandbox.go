// Package sandbox evaluates tenant input in a child process under hard
// limits, so that a hostile chart, overlay or ApplicationSet template costs
// one evaluation, never the process that asked for it: a wall-clock limit
// (the child is killed), a memory limit (the child's heap), and caps on the
// bytes and objects it may return. The child is the same binary re-run with
// a hidden subcommand that calls Serve; it gets an empty environment, so it
// sees none of the parent's secrets.
//
// Runner.Build has the signature of render.Build and Runner.Generate that
// of appset.Generate; an evaluation that passes a limit returns a
// *LimitError naming it.
package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tollgate-dev/tollgate/reposerver/render"
)

// Limits bound one evaluation in its child process.
type Limits struct {
	// Timeout is the wall-clock time an evaluation may take (Argo CD's
	// repo server uses 90 s for its tools). The time the parent spends
	// serving the child (a Git checkout a generator asks for) does not
	// count.
	Timeout time.Duration
	// MemoryBytes caps the child's memory where the platform allows it
	// (Linux: RLIMIT_DATA, which counts the memory the Go runtime maps for
	// its heap but not the address space it only reserves; RLIMIT_AS would
	// stop the runtime itself; and the parent kills a child whose resident
	// memory passes it, which catches what RLIMIT_DATA lets through). The
	// garbage collector aims at half of it.
	MemoryBytes int64
	// OutputBytes caps what the child sends back.
	OutputBytes int64
	// Objects caps the documents one render, or the Applications one
	// generation, may return.
	Objects int
}

// DefaultLimits are the limits of an evaluation unless configured
// otherwise.
func DefaultLimits() Limits {
	return Limits{Timeout: 90 * time.Second, MemoryBytes: 1 << 30, OutputBytes: 256 << 20, Objects: 100_000}
}

// LimitError is an evaluation stopped by one of its limits.
type LimitError struct {
	// Limit is "time", "memory", "output" or "objects".
	Limit string
	// Value is the limit, as configured ("90s", "1024 MiB").
	Value string
	// Work is what was stopped: "render" (the default) or
	// "ApplicationSet generation".
	Work string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s stopped: it passed its %s limit (%s)", cmp.Or(e.Work, workRender), e.Limit, e.Value)
}

// What a LimitError stopped.
const (
	workRender     = "render"
	workGeneration = "ApplicationSet generation"
)

// Runner evaluates in child processes: Path run with Args, which must call
// Serve on its standard input and output.
type Runner struct {
	Path string
	Args []string
	// Env is the child's whole environment; empty by default.
	Env    []string
	Limits Limits
}

// request is what the parent sends the child first: a render, or a
// generation (then Generation is set).
type request struct {
	Root, Dir   string
	Options     render.Options
	Limits      render.Limits
	MemoryBytes int64
	Generation  *generation
}

// response is what a render child sends back.
type response struct {
	Result render.Result
	Err    string
}

// maxStderr is how much of the child's standard error is kept to explain a
// failure.
const maxStderr = 8 << 10

// Build renders like render.Build, in a child process under r.Limits.
func (r *Runner) Build(ctx context.Context, root, dir string, opts render.Options, lim render.Limits) (render.Result, error) {
	c, err := r.start(ctx, request{Root: root, Dir: dir, Options: opts, Limits: lim}, workRender)
	if err != nil {
		return render.Result{}, fmt.Errorf("render %s: %w", dir, err)
	}
	// The child reads one request: nothing more is sent.
	_ = c.stdin.Close()
	out, readErr := io.ReadAll(c.stdout)
	if err := c.wait(ctx, readErr); err != nil {
		return render.Result{}, fmt.Errorf("render %s: %w", dir, err)
	}
	var resp response
	if err := gob.NewDecoder(bytes.NewReader(out)).Decode(&resp); err != nil {
		return render.Result{}, fmt.Errorf("render %s: decode result: %w", dir, err)
	}
	if resp.Err != "" {
		return render.Result{}, errors.New(resp.Err)
	}
	if len(resp.Result.Documents) > r.Limits.Objects {
		return render.Result{}, fmt.Errorf("render %s: %w", dir, &LimitError{Limit: "objects", Value: fmt.Sprint(r.Limits.Objects), Work: workRender})
	}
	return resp.Result, nil
}

// child is one running child process. Its clock (the time limit) runs
// except while the parent serves one of its calls.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	enc    *gob.Encoder
	stdout *capped
	stderr *headBuffer
	limits Limits
	work   string
	// timer kills the child when the time left has passed.
	timer    *time.Timer
	timedOut atomic.Bool
	left     time.Duration
	since    time.Time
	// overMemory is set when the parent killed the child for its
	// resident memory; exited stops that watch.
	overMemory atomic.Bool
	exited     chan struct{}
}

// start starts a child and sends it req.
func (r *Runner) start(ctx context.Context, req request, work string) (*child, error) {
	req.MemoryBytes = r.Limits.MemoryBytes
	cmd := exec.CommandContext(ctx, r.Path, r.Args...)
	// Never nil: a nil Env would hand the child the parent's environment.
	cmd.Env = append([]string{}, r.Env...)
	c := &child{cmd: cmd, stderr: &headBuffer{max: maxStderr}, limits: r.Limits, work: work, left: r.Limits.Timeout, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start child process: %w", err)
	}
	c.stdin, c.enc = stdin, gob.NewEncoder(stdin)
	c.stdout = &capped{r: stdout, left: r.Limits.OutputBytes, over: c.kill}
	c.since = time.Now()
	c.timer = time.AfterFunc(c.left, func() {
		c.timedOut.Store(true)
		c.kill()
	})
	go watchMemory(cmd.Process.Pid, r.Limits.MemoryBytes, func() {
		c.overMemory.Store(true)
		c.kill()
	}, c.exited)
	if err := c.enc.Encode(req); err != nil {
		return nil, c.wait(ctx, fmt.Errorf("send request: %w", err))
	}
	return c, nil
}

func (c *child) kill() { _ = c.cmd.Process.Kill() }

// pause stops the child's clock while the parent serves it; false when
// its time has already passed.
func (c *child) pause() bool {
	if !c.timer.Stop() {
		return false
	}
	c.left -= time.Since(c.since)
	return true
}

// resume starts the child's clock again.
func (c *child) resume() {
	c.since = time.Now()
	c.timer.Reset(c.left)
}

// wait ends the child and returns why it failed, if it did: a limit it
// passed (which explains any error reading it), the parent's context, the
// child's own death, else ioErr, the parent's error exchanging with it.
func (c *child) wait(ctx context.Context, ioErr error) error {
	if ioErr != nil {
		c.kill()
	}
	_ = c.stdin.Close()
	waitErr := c.cmd.Wait()
	close(c.exited)
	c.timer.Stop()
	l := c.limits
	switch {
	case c.stdout.left < 0:
		return &LimitError{Limit: "output", Value: mib(l.OutputBytes), Work: c.work}
	case c.timedOut.Load():
		return &LimitError{Limit: "time", Value: l.Timeout.String(), Work: c.work}
	case ctx.Err() != nil:
		return ctx.Err()
	case c.overMemory.Load(), waitErr != nil && outOfMemory(c.stderr.String()):
		return &LimitError{Limit: "memory", Value: mib(l.MemoryBytes), Work: c.work}
	case waitErr != nil:
		return fmt.Errorf("child process failed: %v: %s", waitErr, firstLine(c.stderr.String()))
	}
	return ioErr
}

// capped reads at most left bytes; past them it calls over (which kills
// the child) and fails.
type capped struct {
	r    io.Reader
	left int64
	over func()
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, errors.New("output limit passed")
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		c.over()
		return n, errors.New("output limit passed")
	}
	return n, err
}

// Serve is the child's side: it reads one request from in, limits its own
// memory, renders (or generates, calling the parent back for what it
// reads) and writes the response to out. An error of the evaluation is
// part of the response; Serve's error means the exchange itself failed.
func Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	dec := gob.NewDecoder(in)
	var req request
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("read request: %w", err)
	}
	if err := limitMemory(req.MemoryBytes); err != nil {
		return err
	}
	if req.Generation != nil {
		return serveGeneration(ctx, req.Generation, dec, gob.NewEncoder(out))
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
