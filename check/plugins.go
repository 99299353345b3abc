package check

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
// `sh -c` in the source's directory as a plugin sidecar runs its commands
// (cmp.Run), with this process's environment and
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
	out, err := cmp.Run(ctx, []string{"sh", "-c", command}, filepath.Join(src.Root, src.Path), append(os.Environ(), src.Env...), pluginTimeout, maxPluginOutput)
	var ce *cmp.CmdError
	switch {
	case errors.Is(err, cmp.ErrOutputTooLarge):
		return nil, name, fmt.Errorf("plugin %s (--plugin): output passed %d MiB", name, maxPluginOutput>>20)
	case errors.Is(err, cmp.ErrCommandTimeout):
		return nil, name, fmt.Errorf("plugin %s (--plugin): %q did not finish within %s", name, command, pluginTimeout)
	case errors.As(err, &ce):
		return nil, name, fmt.Errorf("plugin %s (--plugin): %q: %w: %s", name, command, ce.Cause, ce.Stderr)
	case err != nil:
		return nil, name, fmt.Errorf("plugin %s (--plugin): %w", name, err)
	}
	return []string{out}, name, nil
}

// pluginNote is the note for a plugin source tollgate test does not run.
func pluginNote(e *server.UnservedPluginError) string {
	if e.Name == "" {
		return "discovers its config management plugin, which tollgate test does not run; name the plugin (spec.source.plugin.name) and pass --plugin NAME=COMMAND to run a local command in its place"
	}
	return fmt.Sprintf("config management plugin %q is not run by tollgate test; pass --plugin %s=COMMAND to run a local command in its place", e.Name, e.Name)
}
