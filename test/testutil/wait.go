// Package testutil holds what tollgate's tests share: the one way to wait
// on a condition (Eventually, Consistently) and builders of the objects
// that several test packages create. Only test code imports it.
package testutil

import (
	"testing"
	"time"
)

// Poll is how a wait checks its condition: how often, and for how long at
// most. Each test package keeps its own (a control plane under load wants
// longer than a unit test with a fake client).
type Poll struct {
	// Timeout bounds Eventually.
	Timeout time.Duration
	// Interval is the pause between two checks.
	Interval time.Duration
}

// DefaultPoll returns the Poll of Eventually and Consistently: a minute,
// checking every 200ms.
func DefaultPoll() Poll {
	return Poll{Timeout: time.Minute, Interval: 200 * time.Millisecond}
}

// Eventually checks cond until it holds, then returns. It fails the test
// with desc and cond's last explanation once p.Timeout has passed, or when
// the test's context ends first. Call it from the test's goroutine.
func (p Poll) Eventually(t testing.TB, desc string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(p.Timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if !time.Now().Before(deadline) {
			t.Fatalf("timed out after %s waiting for %s%s", p.Timeout, desc, lastState(why))
		}
		p.pause(t, "waiting for "+desc)
	}
}

// Consistently checks cond every p.Interval for d and fails the test the
// first time it does not hold: a window in which something must not
// happen. Call it from the test's goroutine.
func (p Poll) Consistently(t testing.TB, desc string, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	end := time.Now().Add(d)
	for {
		if ok, why := cond(); !ok {
			t.Fatalf("%s no longer holds%s", desc, lastState(why))
		}
		if !time.Now().Before(end) {
			return
		}
		p.pause(t, "checking that "+desc+" holds")
	}
}

// Eventually is DefaultPoll().Eventually.
func Eventually(t testing.TB, desc string, cond func() (bool, string)) {
	t.Helper()
	DefaultPoll().Eventually(t, desc, cond)
}

// Consistently is DefaultPoll().Consistently.
func Consistently(t testing.TB, desc string, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	DefaultPoll().Consistently(t, desc, d, cond)
}

// pause waits one interval, failing the test if it ends meanwhile.
func (p Poll) pause(t testing.TB, doing string) {
	t.Helper()
	select {
	case <-t.Context().Done():
		t.Fatalf("test ended while %s", doing)
	case <-time.After(p.Interval):
	}
}

func lastState(why string) string {
	if why == "" {
		return ""
	}
	return "; last state: " + why
}
