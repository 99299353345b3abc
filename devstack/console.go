package devstack

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// Console is the story's output: whole lines, one writer at a time, so the
// story of the engine and the tour's narration interleave line by line.
type Console struct {
	mu sync.Mutex
	w  io.Writer
}

// NewConsole writes to w.
func NewConsole(w io.Writer) *Console { return &Console{w: w} }

// Printf writes one line (a trailing newline is added when missing).
func (c *Console) Printf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if !strings.HasSuffix(line, "\n") {
		line += "\n"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = io.WriteString(c.w, line)
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}
