package server

import (
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// limitMemory caps the memory this process maps for data (RLIMIT_DATA) at
// n bytes and has the garbage collector work to stay well under it.
func limitMemory(n int64) error {
	if n <= 0 {
		return nil
	}
	debug.SetMemoryLimit(n / 2)
	lim := unix.Rlimit{Cur: uint64(n), Max: uint64(n)}
	if err := unix.Setrlimit(unix.RLIMIT_DATA, &lim); err != nil {
		return fmt.Errorf("limit memory to %d bytes: %w", n, err)
	}
	return nil
}

// memoryPoll is how often the parent reads a child's resident memory.
const memoryPoll = 10 * time.Millisecond

// watchMemory calls over once when the resident memory of process pid
// passes n bytes, reading /proc/pid/statm every memoryPoll, until stop is
// closed or the process is gone. RLIMIT_DATA does not stop every large
// allocation of the Go runtime (a single string of 1 GB passed a 512 MiB
// limit), so the parent watches what the child really holds.
func watchMemory(pid int, n int64, over func(), stop <-chan struct{}) {
	if n <= 0 {
		return
	}
	path := "/proc/" + strconv.Itoa(pid) + "/statm"
	page := int64(os.Getpagesize())
	t := time.NewTicker(memoryPoll)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return
		}
		// size resident shared text lib data dt, in pages.
		fields := bytes.Fields(data)
		if len(fields) < 2 {
			return
		}
		resident, err := strconv.ParseInt(string(fields[1]), 10, 64)
		if err == nil && resident*page > n {
			over()
			return
		}
	}
}
