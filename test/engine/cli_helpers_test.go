package engine_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tollgate-dev/tollgate/test/envtest"
)

// The CLI tests run bin/tollgate as a user does: built once for the
// package, the first time a test asks, with a kubeconfig of an
// administrator of the test control plane in $KUBECONFIG.
var (
	cliOnce sync.Once
	// cliDir holds the binary and the kubeconfig; run removes it.
	cliDir, cliBin, cliKubeconfig string
	cliErr                        error
)

// tollgateCLI builds bin/tollgate and writes the administrator's
// kubeconfig, once; a failure fails every test that asks.
func tollgateCLI(t *testing.T) {
	t.Helper()
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tollgate-engine-cli-")
		if err != nil {
			cliErr = err
			return
		}
		cliDir = dir
		bin, err := envtest.BuildTollgate(dir)
		if err != nil {
			cliErr = err
			return
		}
		kc, err := env.KubeConfig("tollgate-cli-admin")
		if err != nil {
			cliErr = err
			return
		}
		path := filepath.Join(dir, "kubeconfig")
		if err := os.WriteFile(path, kc, 0o600); err != nil {
			cliErr = err
			return
		}
		cliBin, cliKubeconfig = bin, path
	})
	if cliErr != nil {
		t.Fatalf("tollgate CLI: %v", cliErr)
	}
}

// removeCLI removes what tollgateCLI made.
func removeCLI() {
	if cliDir != "" {
		_ = os.RemoveAll(cliDir)
	}
}

// cliRun is one run of the CLI.
type cliRun struct {
	stdout, stderr string
	code           int
}

func (r cliRun) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// tollgate runs `tollgate args...` with stdin, $KUBECONFIG the
// administrator's unless kubeconfig is given in args, and its own
// temporary directory (the repository cache of app manifests).
func tollgate(t *testing.T, stdin string, args ...string) cliRun {
	t.Helper()
	tollgateCLI(t)
	cmd := exec.CommandContext(t.Context(), cliBin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cliKubeconfig, "TMPDIR="+t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := cliRun{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run tollgate %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// tollgateOK runs the CLI as tollgate does and fails the test unless it
// exits 0; it returns the standard output.
func tollgateOK(t *testing.T, args ...string) string {
	t.Helper()
	r := tollgate(t, "", args...)
	if r.code != 0 {
		t.Fatalf("tollgate %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// tollgateFails runs the CLI and fails the test unless it exits with code
// and says want on stderr.
func tollgateFails(t *testing.T, code int, want string, args ...string) cliRun {
	t.Helper()
	r := tollgate(t, "", args...)
	if r.code != code || !strings.Contains(r.stderr, want) {
		t.Fatalf("tollgate %s: %s\nwant exit %d and %q on stderr", strings.Join(args, " "), r, code, want)
	}
	return r
}

// wantLines fails the test unless out holds each of lines, as whole lines
// once spaces are collapsed (tables align their columns).
func wantLines(t *testing.T, what, out string, lines ...string) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		have[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, l := range lines {
		if !have[strings.Join(strings.Fields(l), " ")] {
			t.Errorf("%s: no line %q in:\n%s", what, l, out)
		}
	}
}
