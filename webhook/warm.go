package webhook

import (
	"runtime"
	"sync"
)

// Reviews run on warm goroutines: long-lived ones that keep the stacks
// they have grown. The HTTP server starts a goroutine per request, with a
// small stack, and OPA's evaluator recurses deeply: a review on a fresh
// goroutine spends a quarter of its time growing and copying its stack
// (BenchmarkServeGoroutine: an Application's review on a fresh goroutine
// against a warm one). The warm goroutines are a cache, not a limit: when
// none is idle and the most are busy, the review runs on the request's own
// goroutine, so a slow review never makes another one wait. The one used
// last is used first, as its stack is the likeliest to be grown still (the
// garbage collector halves an idle goroutine's stack at each cycle).

// warm is the process's warm goroutines, started as reviews need them.
var warm struct {
	mu      sync.Mutex
	idle    []*warmGoroutine // the one idle last at the end
	started int
}

// maxWarm bounds the warm goroutines: two per core.
var maxWarm = 2 * runtime.GOMAXPROCS(0)

// warmGoroutine is one warm goroutine, waiting for its next job.
type warmGoroutine struct {
	jobs chan *warmJob
}

// warmJob is one function handed to a warm goroutine, and what it panicked
// with.
type warmJob struct {
	fn       func()
	done     chan struct{}
	panicked any
}

// runWarm runs fn on a warm goroutine, or on the caller's when none is
// idle and the most are busy, and returns when fn has; a panic in fn is
// raised again in the caller, where the HTTP server recovers it as it
// would have.
func runWarm(fn func()) {
	g := takeWarm()
	if g == nil {
		fn()
		return
	}
	job := &warmJob{fn: fn, done: make(chan struct{})}
	g.jobs <- job
	<-job.done
	if job.panicked != nil {
		panic(job.panicked)
	}
}

// takeWarm returns the warm goroutine idle last, a new one while fewer
// than maxWarm run, or nil.
func takeWarm() *warmGoroutine {
	warm.mu.Lock()
	defer warm.mu.Unlock()
	if n := len(warm.idle); n > 0 {
		g := warm.idle[n-1]
		warm.idle = warm.idle[:n-1]
		return g
	}
	if warm.started >= maxWarm {
		return nil
	}
	warm.started++
	g := &warmGoroutine{jobs: make(chan *warmJob, 1)}
	go g.loop()
	return g
}

// loop runs the goroutine's jobs, one at a time. A goroutine a job ended
// makes room for a new one.
func (g *warmGoroutine) loop() {
	defer func() {
		warm.mu.Lock()
		warm.started--
		warm.mu.Unlock()
	}()
	for job := range g.jobs {
		g.run(job)
	}
}

// run runs one job. The goroutine is back among the idle before the
// job's caller returns, so that the caller's next review finds it. The
// caller returns even if fn ends the goroutine (runtime.Goexit), which
// then is not put back.
func (g *warmGoroutine) run(job *warmJob) {
	defer close(job.done)
	job.panicked = call(job.fn)
	warm.mu.Lock()
	warm.idle = append(warm.idle, g)
	warm.mu.Unlock()
}

// call calls fn and returns what it panicked with.
func call(fn func()) (panicked any) {
	defer func() { panicked = recover() }()
	fn()
	return nil
}
