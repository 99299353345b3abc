package server

import (
	"fmt"
	"runtime/debug"

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
