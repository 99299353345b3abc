package proc

import (
	"os"
	"testing"
	"time"
)

// TestReadStat reads this process: its parent, and a CPU time that grows
// while it computes (within 5 seconds of wall time).
func TestReadStat(t *testing.T) {
	before, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if before.PPID != os.Getppid() {
		t.Errorf("PPID = %d, want %d", before.PPID, os.Getppid())
	}
	x := 0
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		for i := range 1_000_000 {
			x += i
		}
		after, err := ReadStat(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if after.CPU > before.CPU {
			return
		}
	}
	t.Errorf("CPU time still %s after 5 s of computing (%d)", before.CPU, x)
}

func TestReadStatNoProcess(t *testing.T) {
	if _, err := ReadStat(-1); err == nil {
		t.Error("ReadStat(-1): no error")
	}
}
