//go:build !linux

package server

import "runtime/debug"

// limitMemory asks the garbage collector to stay under n bytes; only Linux
// gets a hard address-space limit.
func limitMemory(n int64) error {
	if n > 0 {
		debug.SetMemoryLimit(n / 2)
	}
	return nil
}

// watchMemory does nothing: only Linux children are watched.
func watchMemory(int, int64, func(), <-chan struct{}) {}
