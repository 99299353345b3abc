package webhook

import (
	"runtime"
	"sync"
	"testing"
)

// TestRunWarm: runWarm runs the function before it returns, raises its
// panic in the caller, and runs it on the caller's goroutine once every
// warm goroutine is busy, so that a slow review never makes another wait.
func TestRunWarm(t *testing.T) {
	ran := false
	runWarm(func() { ran = true })
	if !ran {
		t.Fatal("runWarm returned before the function ran")
	}

	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the function's panic", p)
			}
		}()
		runWarm(func() { panic("boom") })
	}()

	// A function that ends its goroutine still returns to its caller.
	runWarm(runtime.Goexit)

	// Hold every warm goroutine (and more callers than there are), then
	// check that one more call still runs at once.
	release := make(chan struct{})
	var held sync.WaitGroup
	for range maxWarm + 2 {
		started := make(chan struct{})
		held.Go(func() { runWarm(func() { close(started); <-release }) })
		<-started
	}
	done := make(chan struct{})
	go runWarm(func() { close(done) })
	<-done
	close(release)
	held.Wait()
}
