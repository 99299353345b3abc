package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tollgate-dev/tollgate/reposerver/cmp"
	"github.com/tollgate-dev/tollgate/reposerver/server"
)

// pluginTimeout bounds one local plugin command, as Argo CD's cmp-server
// bounds its commands (ARGOCD_EXEC_TIMEOUT, 90 s).
const pluginTimeout = 90 * time.Second

// maxPluginOutput bounds what a local plugin command may print.
const maxPluginOutput = 64 << 20

// localPlugins are the config management plugins tollgate test runs:
// local commands by plugin name (--plugin NAME=COMMAND), each run with
// `sh -c` in the source's directory, with this process's environment and
// the variables Argo CD gives the plugin (cmp.Source.Env), its standard
// output read as the plugin's manifests. Any other plugin, and a source
// that discovers its plugin, is not run (*server.UnservedPluginError).
type localPlugins map[string]string

// Generate implements server.Plugins.
func (p localPlugins) Generate(ctx context.Context, name string, src cmp.Source) ([]string, string, error) {
	command, ok := p[name]
	if !ok || name == "" {
		return nil, name, &server.UnservedPluginError{Name: name}
	}
	ctx, cancel := context.WithTimeout(ctx, pluginTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = filepath.Join(src.Root, src.Path)
	cmd.Env = append(os.Environ(), src.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stdout := &capped{max: maxPluginOutput}
	var stderr capped
	stderr.max = 4 << 10
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	err := cmd.Run()
	switch {
	case stdout.over:
		return nil, name, fmt.Errorf("plugin %s (--plugin): output passed %d MiB", name, maxPluginOutput>>20)
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, name, fmt.Errorf("plugin %s (--plugin): %q did not finish within %s", name, command, pluginTimeout)
	case err != nil:
		return nil, name, fmt.Errorf("plugin %s (--plugin): %q: %w: %s", name, command, err, strings.TrimSpace(stderr.String()))
	}
	return []string{stdout.String()}, name, nil
}

// capped is a buffer that keeps the first max bytes written to it and
// notes that more came.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.over = true
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// pluginNote is the note for a plugin source tollgate test does not run.
func pluginNote(e *server.UnservedPluginError) string {
	if e.Name == "" {
		return "discovers its config management plugin, which tollgate test does not run; name the plugin (spec.source.plugin.name) and pass --plugin NAME=COMMAND to run a local command in its place"
	}
	return fmt.Sprintf("config management plugin %q is not run by tollgate test; pass --plugin %s=COMMAND to run a local command in its place", e.Name, e.Name)
}
