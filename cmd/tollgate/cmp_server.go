package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	cmpserver "github.com/tollgate-dev/tollgate/reposerver/cmp"
)

// execTimeoutEnv is the variable argocd-cmp-server takes its command
// timeout from; it is --exec-timeout's default here, so a sidecar's
// environment keeps working.
const execTimeoutEnv = "ARGOCD_EXEC_TIMEOUT"

// cmpServerOptions are the flags of `tollgate cmp-server`.
type cmpServerOptions struct {
	config      string
	socketDir   string
	execTimeout time.Duration
}

func newCmpServerCmd() *cobra.Command {
	o := cmpServerOptions{
		config:      cmpserver.DefaultConfigPath,
		socketDir:   cmpserver.DefaultSocketDir,
		execTimeout: cmpserver.DefaultServerOptions().ExecTimeout,
	}
	if d, err := time.ParseDuration(os.Getenv(execTimeoutEnv)); err == nil && d > 0 {
		o.execTimeout = d
	}
	cmd := &cobra.Command{
		Use:   "cmp-server",
		Short: "Serve an Argo CD config management plugin (plugin.yaml) to the repo-server, as argocd-cmp-server does",
		Long: `Run a config management plugin sidecar: read the plugin.yaml at --config
(kind ConfigManagementPlugin) and serve Argo CD's plugin protocol on
<--socket-dir>/<metadata.name>[-<spec.version>].sock, where Argo CD's and
tollgate's repo-servers find it. It is a drop-in for argocd-cmp-server: for
each request it receives the repository, runs spec.init and spec.generate
in the source's directory with its own environment plus the request's
(ARGOCD_APP_*, ARGOCD_ENV_*, PARAM_*), and answers the manifests generate
printed; it also answers discovery (spec.discover) and the parameters the
plugin announces (spec.parameters).

Each command is killed, with its children, after --exec-timeout (default:
$ARGOCD_EXEC_TIMEOUT, else 90s). Archives with paths or symlinks that leave
the request's directory are refused. It runs until SIGTERM or SIGINT and
removes its socket.`,
		Example: `  tollgate cmp-server --config /home/argocd/cmp-server/config/plugin.yaml`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCmpServer(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", o.config, "plugin.yaml `FILE` to serve")
	f.StringVar(&o.socketDir, "socket-dir", o.socketDir, "`DIR` to create the plugin's socket in (shared with the repo-server)")
	f.DurationVar(&o.execTimeout, "exec-timeout", o.execTimeout, "time limit of each plugin command (init, generate, discovery, parameters)")
	return cmd
}

// runCmpServer serves the plugin of o until ctx ends.
func runCmpServer(ctx context.Context, o cmpServerOptions) error {
	log := logr.FromContextOrDiscard(ctx).WithName("cmp-server")
	if o.execTimeout <= 0 {
		return usageError(fmt.Errorf("invalid --exec-timeout %s: must be positive", o.execTimeout))
	}
	cfg, err := cmpserver.LoadConfig(o.config)
	if err != nil {
		return usageError(err)
	}
	if !cfg.Spec.Discover.IsDefined() {
		log.Info("no discovery configured: Applications use this plugin by naming it in spec.source.plugin.name", "plugin", cfg.Name())
	}
	opts := cmpserver.DefaultServerOptions()
	opts.ExecTimeout, opts.Log = o.execTimeout, log
	srv, err := cmpserver.NewServer(cfg, opts)
	if err != nil {
		return err
	}
	return cmpserver.Listen(logr.NewContext(ctx, log), srv, filepath.Join(o.socketDir, cfg.SocketName()))
}
