// Package proc reads what the benchmarks measure of a process from
// /proc/<pid>/stat (Linux).
package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of utime and stime in /proc/<pid>/stat:
// sysconf(_SC_CLK_TCK), USER_HZ, which is 100 on Linux on every
// architecture Go supports. CPU times are thus precise to 10 ms.
const clockTicks = 100

// Stat is what /proc/<pid>/stat says of a process.
type Stat struct {
	// PPID is its parent's pid.
	PPID int
	// CPU is its user plus system CPU time (utime and stime).
	CPU time.Duration
}

// ReadStat reads the Stat of process pid.
func ReadStat(pid int) (Stat, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	data, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	// Field 2, the command name in parentheses, may contain spaces: count
	// from the last ')'. What follows starts with field 3.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("parse %s: no ')'", path)
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 13 {
		return Stat{}, fmt.Errorf("parse %s: %d fields after the command name", path, len(fields))
	}
	field := func(n int) (uint64, error) { // n counts from 1, as proc(5) does
		v, err := strconv.ParseUint(fields[n-3], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse %s: %w", path, err)
		}
		return v, nil
	}
	ppid, err := field(4)
	if err != nil {
		return Stat{}, err
	}
	utime, err := field(14)
	if err != nil {
		return Stat{}, err
	}
	stime, err := field(15)
	if err != nil {
		return Stat{}, err
	}
	return Stat{PPID: int(ppid), CPU: time.Duration(utime+stime) * time.Second / clockTicks}, nil
}
