package cmp

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/test/testutil"
)

func TestRunCommand(t *testing.T) {
	dir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "V=sidecar", "V=request"}
	r := runner{timeout: time.Minute, maxOutput: 64}
	tests := []struct {
		name    string
		cmd     Command
		want    string
		wantErr string
	}{
		{"output without the last newline", Command{Command: []string{"sh", "-c"}, Args: []string{`printf 'a\n\n'`}}, "a\n", ""},
		{"dir and env, the last value wins", Command{Command: []string{"sh", "-c", `echo "$(basename "$PWD") $V"`}}, filepath.Base(dir) + " request", ""},
		{"exit status and stderr", Command{Command: []string{"sh", "-c", "echo out; echo err >&2; exit 2"}}, "",
			"`sh -c \"echo out; echo err >&2; exit 2\"` failed exit status 2: err"},
		{"empty argument", Command{Command: []string{"sh", "-c", "exit 1", ""}}, "", "`sh -c \"exit 1\" \"\"` failed exit status 1"},
		{"output over the limit", Command{Command: []string{"sh", "-c", "while :; do echo 0123456789; done"}}, "",
			"`sh -c \"while :; do echo 0123456789; done\"` failed output over the limit of 64 bytes"},
		{"not found", Command{Command: []string{"/nonexistent/plugin"}}, "",
			"`/nonexistent/plugin` failed fork/exec /nonexistent/plugin: no such file or directory"},
		{"empty", Command{}, "", "command is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.run(t.Context(), tc.cmd, dir, env)
			if errString(err) != tc.wantErr {
				t.Errorf("error = %q, want %q", errString(err), tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("output = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRunCommandKillsGroup checks that a timeout kills the command's
// children too: the background sleep's pid is gone afterwards.
func TestRunCommandKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	r := runner{timeout: 300 * time.Millisecond}
	cmd := Command{Command: []string{"sh", "-c", `sleep 60 >/dev/null 2>&1 & echo $! > pid; wait`}}
	_, err := r.run(t.Context(), cmd, dir, []string{"PATH=" + os.Getenv("PATH")})
	var ce *CmdError
	if !errors.As(err, &ce) || ce.Cause.Error() != "timeout after 300ms" {
		t.Fatalf("error = %v, want a timeout", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// Gone, or a zombie nobody reaps (in a container, pid 1 may not).
	poll := testutil.Poll{Timeout: 10 * time.Second, Interval: 20 * time.Millisecond}
	poll.Eventually(t, "the background sleep to die", func() (bool, string) {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return true, ""
		}
		fields := strings.Fields(string(stat))
		if len(fields) < 3 {
			return false, "unreadable stat"
		}
		return fields[2] == "Z", "state " + fields[2]
	})
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 4}
	for _, s := range []string{"ab", "cdefg", "hij"} {
		b.Write([]byte(s))
	}
	if got := b.String(); got != "...ghij" {
		t.Errorf("String = %q, want ...ghij", got)
	}
	short := &tailBuffer{max: 4}
	short.Write([]byte("abc"))
	if got := short.String(); got != "abc" {
		t.Errorf("String = %q, want abc", got)
	}
}
