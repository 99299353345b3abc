package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/tollgate-dev/tollgate/test/bench/proc"
)

// stopGrace is how long the controller has to exit after SIGTERM before it
// is killed.
const stopGrace = 15 * time.Second

// controller is `tollgate controller` running in a child process.
type controller struct {
	cmd        *exec.Cmd
	logPath    string
	metricsURL string
	// pprofURL is the pprof endpoint's base URL; empty without -memprofile.
	pprofURL string
	http     *http.Client
	// stopProcess ends cmd's context: os/exec then sends SIGTERM and, after
	// stopGrace, SIGKILL.
	stopProcess context.CancelFunc
	// exited is closed once the process has exited and waitErr and
	// unasked are set.
	exited  chan struct{}
	waitErr error
	// unasked is whether the process exited before it was told to stop.
	unasked bool
}

// startController starts bin/tollgate controller (o.tollgate) named name
// against the API server behind the counting proxy of kubeconfig, with its
// output in tmp/<name>.log, and waits until it serves metrics. The name is
// its $POD_NAME, which names its shard Lease. The process gets SIGTERM
// when ctx ends, when stop is called, and (Pdeathsig) when this process
// dies first.
func startController(ctx context.Context, o options, tmp, kubeconfig, name string) (*controller, error) {
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"controller",
		"--kubeconfig", kubeconfig, "--namespace", argoNS, "--repo-cache", filepath.Join(tmp, "cache-"+name),
		"--resync", o.resync.String(), "--status-processors", "8",
		"--metrics-addr", metricsAddr, "--health-addr", "0", "--webhook-addr", "0",
		// The benchmark's repository is a file:// one.
		"--allow-file-repos",
	}
	c := &controller{
		logPath:    filepath.Join(tmp, name+".log"),
		metricsURL: "http://" + metricsAddr + "/metrics",
		http:       &http.Client{Timeout: 30 * time.Second},
		exited:     make(chan struct{}),
	}
	if o.memProfile != "" || o.cpuProfile != "" {
		pprofAddr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		args = append(args, "--pprof-addr", pprofAddr)
		c.pprofURL = "http://" + pprofAddr + "/debug/pprof"
	}
	if os.Getenv("BENCH_LOG") != "" {
		args = append(args, "-v", "1")
	}
	logFile, err := os.Create(c.logPath)
	if err != nil {
		return nil, err
	}
	var output io.Writer = logFile
	if os.Getenv("BENCH_LOG") != "" {
		output = io.MultiWriter(logFile, os.Stderr)
	}
	procCtx, stopProcess := context.WithCancel(ctx)
	c.stopProcess = stopProcess
	c.cmd = exec.CommandContext(procCtx, o.tollgate, args...)
	c.cmd.Stdout, c.cmd.Stderr = output, output
	// The runtime's GC trace (on stderr, into the log) gives the heap at
	// every collection without a scrape (see peakHeapSince).
	c.cmd.Env = append(os.Environ(), "POD_NAME="+name, "GODEBUG="+withGCTrace(os.Getenv("GODEBUG")))
	c.cmd.Cancel = func() error { return c.cmd.Process.Signal(syscall.SIGTERM) }
	c.cmd.WaitDelay = stopGrace
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := c.cmd.Start(); err != nil {
		stopProcess()
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", o.tollgate, err)
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		c.unasked = procCtx.Err() == nil
		// Open until now: with BENCH_LOG, this process copies the output.
		_ = logFile.Close()
		close(c.exited)
	}()
	if err := c.waitReady(ctx); err != nil {
		c.stop()
		return nil, c.explain(err)
	}
	return c, nil
}

// waitReady polls the metrics endpoint until it answers: the policies are
// compiled and the manager has started; its caches may still be syncing.
// Part 1's clock starts after this, as it did when the manager ran in this
// process.
func (c *controller) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := c.scrape(ctx); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("controller metrics at %s not answering after 2m: %w", c.metricsURL, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.exited:
			if c.unasked {
				return c.exitErr()
			}
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// exitErr describes an exit of the controller that nobody asked for.
func (c *controller) exitErr() error {
	if c.waitErr != nil {
		return fmt.Errorf("controller exited early: %w", c.waitErr)
	}
	return errors.New("controller exited early with status 0")
}

// running returns a context that ends with ctx or, with cause exitErr, when
// the controller exits; cancel releases it.
func (c *controller) running(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-ctx.Done():
		case <-c.exited:
			if c.unasked {
				cancel(c.exitErr())
			}
		}
	}()
	return ctx, func() { cancel(nil) }
}

// explain adds to err the last lines of the controller's log, and why the
// controller exited if it did.
func (c *controller) explain(err error) error {
	select {
	case <-c.exited:
		if exit := c.exitErr(); c.unasked && !strings.Contains(err.Error(), exit.Error()) {
			err = fmt.Errorf("%w (%w)", err, exit)
		}
	default:
	}
	return fmt.Errorf("%w\nlast lines of %s:\n%s", err, filepath.Base(c.logPath), c.logTail(25))
}

// logTail returns the last n lines of the controller's log.
func (c *controller) logTail(n int) string {
	data, err := os.ReadFile(c.logPath)
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if len(l) > 1000 {
			l = l[:1000] + "..."
		}
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n")
}

// stop sends SIGTERM, waits for the controller to exit (SIGKILL after
// stopGrace) and warns when it had to be killed. It is safe to call twice.
func (c *controller) stop() {
	c.stopProcess()
	<-c.exited
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		fmt.Fprintf(os.Stderr, "bench-engine: warning: the controller did not stop within %s of SIGTERM and was killed\n", stopGrace)
	}
}

// scrape reads the controller's metrics in the text format, uncompressed.
func (c *controller) scrape(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.metricsURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", c.metricsURL, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", c.metricsURL, err)
	}
	return families, nil
}

// compares returns the engine's reused and full comparisons so far
// (tollgate_engine_compares_total{mode}).
func (c *controller) compares(ctx context.Context) (reused, full float64, err error) {
	families, err := c.scrape(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, m := range families["tollgate_engine_compares_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() != "mode" {
				continue
			}
			switch l.GetValue() {
			case "reused":
				reused = m.GetCounter().GetValue()
			case "full":
				full = m.GetCounter().GetValue()
			}
		}
	}
	return reused, full, nil
}

// gauge returns the value of the controller's unlabelled gauge name.
func (c *controller) gauge(ctx context.Context, name string) (float64, error) {
	families, err := c.scrape(ctx)
	if err != nil {
		return 0, err
	}
	ms := families[name].GetMetric()
	if len(ms) != 1 {
		return 0, fmt.Errorf("%s: %d series at %s", name, len(ms), c.metricsURL)
	}
	return ms[0].GetGauge().GetValue(), nil
}

// passes returns how many reconciles the controller ran and their total
// seconds (tollgate_engine_reconcile_duration_seconds).
func (c *controller) passes(ctx context.Context) (count uint64, seconds float64, err error) {
	families, err := c.scrape(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, m := range families["tollgate_engine_reconcile_duration_seconds"].GetMetric() {
		count += m.GetHistogram().GetSampleCount()
		seconds += m.GetHistogram().GetSampleSum()
	}
	return count, seconds, nil
}

// withGCTrace returns the GODEBUG settings godebug with gctrace=1.
func withGCTrace(godebug string) string {
	if godebug == "" {
		return "gctrace=1"
	}
	return godebug + ",gctrace=1"
}

// gcTraceLine matches a line of the runtime's GC trace; its first group
// is the heap at the start of that collection, in MiB ("gc 7 @2.1s 1%:
// ..., 45->46->20 MB, 47 MB goal, ...").
var gcTraceLine = regexp.MustCompile(`^gc \d+ @\S+ \d+%: .*?, (\d+)->\d+->\d+ MB,`)

// logSize is the length of the controller's log so far.
func (c *controller) logSize() (int64, error) {
	fi, err := os.Stat(c.logPath)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// peakHeapSince returns the largest Go heap at the start of a garbage
// collection that the controller's GC trace reports after log offset
// off: the heap's peaks, each just before a collection frees it, read
// without costing the controller anything (a /metrics scrape of 200
// Applications' series costs it more than their idle resync). It fails
// when no collection was traced.
func (c *controller) peakHeapSince(off int64) (uint64, error) {
	f, err := os.Open(c.logPath)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	var peak uint64
	found := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		m := gcTraceLine.FindSubmatch(sc.Bytes())
		if m == nil {
			continue
		}
		n, err := strconv.ParseUint(string(m[1]), 10, 64)
		if err != nil {
			continue
		}
		peak, found = max(peak, n<<20), true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("no garbage collection traced in %s after offset %d", c.logPath, off)
	}
	return peak, nil
}

// heapProfile writes the controller's heap profile, taken after a garbage
// collection, to path.
func (c *controller) heapProfile(ctx context.Context, path string) error {
	return c.profile(ctx, "/heap?gc=1", path, c.http)
}

// cpuProfile writes the controller's CPU profile of the next d to path.
func (c *controller) cpuProfile(ctx context.Context, d time.Duration, path string) error {
	return c.profile(ctx, fmt.Sprintf("/profile?seconds=%d", int(d.Seconds())), path, &http.Client{Timeout: d + c.http.Timeout})
}

// profile writes the controller's profile at pprof path query, fetched
// with hc, to path.
func (c *controller) profile(ctx context.Context, query, path string, hc *http.Client) error {
	url := c.pprofURL + query
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile: GET %s: %s", url, resp.Status)
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(resp.Body, 256<<20)); err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// procFile is /proc/<pid>/name of the controller.
func (c *controller) procFile(name string) string {
	return filepath.Join("/proc", strconv.Itoa(c.cmd.Process.Pid), name)
}

// cpuTime is the controller's user plus system CPU time.
func (c *controller) cpuTime() (time.Duration, error) {
	st, err := proc.ReadStat(c.cmd.Process.Pid)
	return st.CPU, err
}

// resetPeakRSS resets the controller's VmHWM to its current RSS.
func (c *controller) resetPeakRSS() error {
	if err := os.WriteFile(c.procFile("clear_refs"), []byte("5"), 0); err != nil {
		return fmt.Errorf("reset peak RSS: %w", err)
	}
	return nil
}

// memory is the controller's memory as /proc/<pid>/status shows it, in
// bytes: the peak RSS since the last reset (VmHWM), and the current RSS
// split into anonymous memory (heap, stacks) and file-backed pages (the
// executable's code and data, shared and reclaimable).
type memory struct {
	peak, anon, file uint64
}

// memory reads the controller's memory from /proc/<pid>/status.
func (c *controller) memory() (memory, error) {
	data, err := os.ReadFile(c.procFile("status"))
	if err != nil {
		return memory{}, err
	}
	var m memory
	fields := map[string]*uint64{"VmHWM:": &m.peak, "RssAnon:": &m.anon, "RssFile:": &m.file}
	found := 0
	for line := range strings.SplitSeq(string(data), "\n") {
		for prefix, dst := range fields {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				var kb uint64
				if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
					return memory{}, fmt.Errorf("parse %s %q: %w", prefix, rest, err)
				}
				*dst = kb << 10
				found++
			}
		}
	}
	if found != len(fields) {
		return memory{}, fmt.Errorf("no VmHWM, RssAnon and RssFile in %s", c.procFile("status"))
	}
	return m, nil
}

// freeAddr returns a loopback address with a port that was free a moment
// ago, for a server of the child process to bind.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}
