// Package dev tests `tollgate dev` as a user runs it: the built binary, its
// own control plane, the tour, and Ctrl-C leaving nothing behind.
package dev

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/test/envtest"
)

// tollgate builds bin/tollgate into a temporary directory.
func tollgate(t *testing.T) string {
	t.Helper()
	bin, err := envtest.BuildTollgate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// devCmd runs tollgate dev on free ports with its data and kubeconfig in
// temporary directories.
func devCmd(t *testing.T, ctx context.Context, bin, data string, args ...string) *exec.Cmd {
	t.Helper()
	args = append([]string{"dev", "--data-dir", data, "--write-kubeconfig", filepath.Join(t.TempDir(), "kubeconfig"),
		"--tools-dir", envtest.BinaryDir(), "--api-port", "0", "--git-port", "0", "--webhook-port", "0", "--ui-port", "0"}, args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = envtest.RepoRoot()
	return cmd
}

// TestTour runs `tollgate dev --tour`, what `make demo` runs, and checks
// that every step met its expectation and nothing is left running or on
// disk.
func TestTour(t *testing.T) {
	bin := tollgate(t)
	data := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	out, err := devCmd(t, ctx, bin, data, "--tour").CombinedOutput()
	if err != nil {
		t.Fatalf("tollgate dev --tour: %v\n%s", err, out)
	}
	for _, want := range []string{
		"tollgate dev: web UI on http://127.0.0.1:",
		"== Step 1/6: the example Applications sync and become Healthy",
		"PreSync wave 0: Job/billing-db-migrate (PreSync hook, succeeded)",
		"Sync wave -1: ConfigMap/billing-config",
		"Sync wave 1: Service/billing-api, Deployment/billing-api",
		"ok: 4 Applications Synced and Healthy",
		"webhook         DENIED create Deployment default/tour-latest (tollgate-dev-admin):",
		`denied the request: [no-latest-tag] container "web" uses image "nginx:latest"`,
		"[no-argocd-destination]",
		"[project-source-denied]",
		"[reserved-annotation]",
		"ok: guestbook-dev refused commit",
		"   or in the web UI: http://127.0.0.1:",
		"with no-plaintext-secret; its 4 live objects are unchanged (same resourceVersions)",
		"with exemption-not-allowed, project-resource-denied; its 4 live objects are unchanged",
		"ok: 4 Applications Synced and Healthy at",
		"ok: self-heal put guestbook-ui-dev back to 1 replicas",
		"ok: PolicyReport default/tollgate-audit lists fail no-latest-tag Deployment/tour-before-the-webhook",
		"ok: the next audit removed the result",
		"== Tour passed: 6 of 6 steps met their expectations",
	} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
	assertNothingLeft(t, data)
}

// TestInterrupt starts `tollgate dev`, waits until it is ready, reads the
// API server through the written kubeconfig, and sends SIGINT (Ctrl-C):
// it must exit 0 leaving no process and no files.
func TestInterrupt(t *testing.T) {
	bin := tollgate(t)
	data := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := devCmd(t, ctx, bin, data)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if err := waitForLine(io.TeeReader(stdout, &log), "tollgate dev: ready."); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, log.String(), stderr.String())
	}
	if procs := processesUsing(data); !strings.Contains(strings.Join(procs, "\n"), "kube-controller-manager") {
		t.Errorf("kube-controller-manager does not name %s while tollgate dev runs, so the check below would prove nothing; processes: %q", data, procs)
	}
	assertRepoServerHasNoCredentials(t, data)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(&log, stdout) }()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tollgate dev after SIGINT: %v\nstdout:\n%s\nstderr:\n%s", err, log.String(), stderr.String())
	}
	assertNothingLeft(t, data)
}

// assertRepoServerHasNoCredentials finds the repo-server child of the stack
// with data directory data and checks that it could not reach the API
// server if it tried: its environment is empty (no KUBECONFIG, no HOME for
// ~/.kube/config, no KUBERNETES_SERVICE_HOST) and its command line names no
// kubeconfig or token. Only the controller, in the dev process, has
// credentials.
func assertRepoServerHasNoCredentials(t *testing.T, data string) {
	t.Helper()
	var pid string
	for _, p := range processesUsing(data) {
		if name, cmdline, _ := strings.Cut(p, ": "); strings.Contains(cmdline, " repo-server ") {
			pid = name
			if strings.Contains(cmdline, "kubeconfig") || strings.Contains(cmdline, "token") {
				t.Errorf("the repo-server's command line names credentials: %s", cmdline)
			}
		}
	}
	if pid == "" {
		t.Fatalf("no repo-server process names %s; processes: %q", data, processesUsing(data))
	}
	env, err := os.ReadFile(filepath.Join("/proc", pid, "environ"))
	if err != nil {
		t.Fatal(err)
	}
	if len(env) != 0 {
		t.Errorf("the repo-server's environment is not empty: %q", bytes.ReplaceAll(env, []byte{0}, []byte{' '}))
	}
}

func waitForLine(r io.Reader, prefix string) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			return nil
		}
	}
	return fmt.Errorf("tollgate dev exited or closed its output before %q (%v)", prefix, sc.Err())
}

// assertNothingLeft checks that the data directory is gone and that no
// process names it on its command line (etcd, kube-apiserver and
// kube-controller-manager all do).
func assertNothingLeft(t *testing.T, data string) {
	t.Helper()
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("data directory %s still exists (stat: %v)", data, err)
	}
	if procs := processesUsing(data); len(procs) > 0 {
		t.Errorf("processes left running: %s", strings.Join(procs, "; "))
	}
}

// processesUsing lists the command lines of processes that mention dir.
func processesUsing(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		out = append(out, e.Name()+": "+string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return out
}
