//go:build !nodev

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/devstack"
	"github.com/tollgate-dev/tollgate/devstack/kubelet"
	"github.com/tollgate-dev/tollgate/internal/controlplane"
	"github.com/tollgate-dev/tollgate/ui"
	"github.com/tollgate-dev/tollgate/webhook"
	"github.com/tollgate-dev/tollgate/webhook/audit"
)

// devResync is how often the dev stack's controller compares: seconds, so
// the story moves while a newcomer watches (a real install: 3m, and Git
// push webhooks).
const devResync = 5 * time.Second

func init() { optionalCommands = append(optionalCommands, newDevCmd) }

// devOptions are the flags of `tollgate dev`.
type devOptions struct {
	stack devstack.Options
	tour  bool
}

func newDevCmd() *cobra.Command {
	o := devOptions{stack: devstack.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the whole product locally: control plane, webhook, sync engine and a Git server",
		Long: `Run tollgate on an embedded control plane, for trying it out and for demos.

It starts etcd, kube-apiserver and kube-controller-manager from the ` + "`make tools`" + `
cache (--tools-dir), installs the CRDs and the webhook configuration of config/,
runs the webhook and the sync engine in this process, runs a simulated kubelet
(Pods are marked Running and Ready, Job Pods Succeeded: nothing really runs),
serves a Git repository made from examples/config-repo over HTTP on loopback,
and applies its AppProject and Applications. .tollgate/kubeconfig reaches the
API server as an administrator the webhook judges like anyone:

  kubectl --kubeconfig .tollgate/kubeconfig get applications -A

It tells what happens (syncs per phase and wave, refusals with rule id) and
stays up until Ctrl-C, then stops everything it started and, without --keep,
removes its data. With --tour it runs the scripted tour instead and exits 0
when every step met its expectation, 1 naming the step otherwise.`,
		Example: `  make demo                      # builds what is missing, then: tollgate dev --tour
  tollgate dev                   # stay up; Ctrl-C stops everything
  tollgate dev --data-dir /tmp/tg --keep`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDev(cmd.Context(), cmd, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.tour, "tour", false, "run the scripted tour, then stop (exit 0 when every step met its expectation)")
	f.StringVar(&o.stack.DataDir, "data-dir", "", "`DIR` for etcd's data, certificates, logs and the Git repository (default: a new temporary directory)")
	f.BoolVar(&o.stack.Keep, "keep", false, "keep the data directory and .tollgate/kubeconfig on exit")
	f.StringVar(&o.stack.Examples, "examples", o.stack.Examples, "`DIR` holding config-repo/ (served over Git) and bad/ (the tour's bad changes)")
	f.StringVar(&o.stack.ToolsDir, "tools-dir", o.stack.ToolsDir, "`DIR` of etcd, kube-apiserver and kube-controller-manager (make tools)")
	f.StringVar(&o.stack.Kubeconfig, "write-kubeconfig", o.stack.Kubeconfig, "`FILE` to write the administrator's kubeconfig to")
	f.IntVar(&o.stack.APIPort, "api-port", o.stack.APIPort, "port of kube-apiserver on 127.0.0.1 (0: any free port)")
	f.IntVar(&o.stack.GitPort, "git-port", o.stack.GitPort, "port of the Git server on 127.0.0.1 (0: any free port)")
	f.IntVar(&o.stack.WebhookPort, "webhook-port", o.stack.WebhookPort, "port of the admission webhook (0: any free port)")
	f.IntVar(&o.stack.UIPort, "ui-port", o.stack.UIPort, "port of the web UI on 127.0.0.1, acting as the administrator (0: any free port)")
	return cmd
}

// runDev starts the stack, runs the webhook and the controller against it,
// installs the examples and tells the story until ctx ends or the tour is
// over; then it stops everything.
func runDev(ctx context.Context, cmd *cobra.Command, o devOptions) (err error) {
	for _, p := range []*int{&o.stack.APIPort, &o.stack.GitPort, &o.stack.WebhookPort, &o.stack.UIPort} {
		if *p < 0 || *p > 65535 {
			return usageError(fmt.Errorf("invalid port %d: want 0-65535", *p))
		}
	}
	con := devstack.NewConsole(cmd.OutOrStdout())
	start := time.Now()
	stack, err := devstack.Start(logr.NewContext(ctx, logr.Discard()), o.stack, func(format string, args ...any) { con.Printf("tollgate dev: "+format, args...) })
	if errors.Is(err, controlplane.ErrNoBinaries) {
		return usageError(err)
	}
	if err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, stopDev(stack, con, o.stack.Keep))
	}()
	logFile := filepath.Join(stack.DataDir(), "tollgate.log")
	log := newLoggerTo(0, logFile)
	ctrl.SetLogger(log) // once: the webhook and the controller share controller-runtime's logger
	runCtx, cancel := context.WithCancel(logr.NewContext(ctx, log))
	defer cancel()
	if err := stack.StartKubelet(runCtx); err != nil {
		return err
	}
	con.Printf("tollgate dev: simulated kubelet: node %s marks Pods Running and Ready, and SealedSecrets Synced (nothing really runs or is decrypted)", kubelet.DefaultOptions().NodeName)
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable for the repo-server: %w", err)
	}
	repoServer, pid, err := stack.StartRepoServer(runCtx, exe)
	if err != nil {
		return err
	}
	con.Printf("tollgate dev: repo-server on %s (pid %d): fetches and renders for the controller and the web UI, a separate process with an empty environment and no Kubernetes credentials", repoServer, pid)
	g, gctx := errgroup.WithContext(runCtx)
	wopts := devWebhookOptions(stack)
	wopts.wrap = func(d webhook.Decider) webhook.Decider { return devstack.TellDenials(d, con) }
	g.Go(func() error { return runWebhook(gctx, wopts) })
	g.Go(func() error { return runController(gctx, devControllerOptions(stack, repoServer)) })
	con.Printf("tollgate dev: webhook on :%d and sync engine running in this process (logs: %s)", stack.WebhookPort, logFile)
	uiLn, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", o.stack.UIPort))
	if err != nil {
		cancel()
		return errors.Join(fmt.Errorf("web ui: %w", err), g.Wait())
	}
	stack.UIURL = "http://" + uiLn.Addr().String()
	g.Go(func() error { return runDevUI(gctx, stack, repoServer, uiLn) })
	con.Printf("tollgate dev: web UI on %s, acting as %s (tollgate dev without --tour keeps it up)", stack.UIURL, devstack.AdminUser)
	apps, err := stack.Install(gctx)
	if err != nil {
		cancel()
		return errors.Join(err, g.Wait())
	}
	con.Printf("tollgate dev: applied the AppProject and %d Applications (%.0fs since start); the story follows", len(apps), time.Since(start).Seconds())
	stack.StartStory(gctx, con)
	if o.tour {
		err = stack.Tour(gctx, con, apps)
		cancel()
		if werr := g.Wait(); werr != nil && !errors.Is(werr, context.Canceled) {
			err = errors.Join(err, werr)
		}
		if err != nil {
			return &exitError{code: exitDenied, err: err}
		}
		return nil
	}
	printDevHelp(con, stack)
	<-gctx.Done()
	cancel()
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func printDevHelp(con *devstack.Console, s *devstack.Stack) {
	con.Printf(`tollgate dev: ready. Open %[3]s, or from another terminal:
  kubectl --kubeconfig %[1]s get applications -A
  bin/tollgate app get billing --kubeconfig %[1]s
  bin/tollgate app sync billing --kubeconfig %[1]s --wait
  git clone %[2]s    # change something, git push: the engine syncs it
Ctrl-C stops everything.`, s.Kubeconfig, s.Repo.URL(), s.UIURL)
}

func stopDev(s *devstack.Stack, con *devstack.Console, keep bool) error {
	con.Printf("tollgate dev: stopping the control plane, the simulated kubelet and the Git server")
	err := s.Stop()
	if keep {
		con.Printf("tollgate dev: kept %s and %s", s.DataDir(), s.Kubeconfig)
	} else {
		con.Printf("tollgate dev: removed %s and %s", s.DataDir(), s.Kubeconfig)
	}
	return err
}

// runDevUI serves the web UI on ln as the administrator (--insecure-local,
// loopback only), with diffs and commits from the stack's repo-server at
// repoServer, as the controller's.
func runDevUI(ctx context.Context, s *devstack.Stack, repoServer string, ln net.Listener) error {
	kc, err := loadKubeconfig(s.Kubeconfig)
	if err != nil {
		ln.Close()
		return err
	}
	o := uiOptions{namespace: devstack.ArgoCDNamespace, trackingMethod: string(v1alpha1.TrackingMethodAnnotation), repoClientOptions: defaultRepoClientOptions()}
	o.repoServers, o.repoServerService, o.repoServerNamespace = []string{repoServer}, devstack.RepoServerName, devstack.TollgateNamespace
	return runUIOn(ctx, ln, kc.rest, o, ui.Auth{InsecureLocal: true})
}

// devWebhookOptions serve the webhook where the API server calls it, with
// the certificate the stack made, metrics and probes off.
func devWebhookOptions(s *devstack.Stack) *webhookOptions {
	return &webhookOptions{
		kubeconfig:        s.WebhookKubeconfig,
		port:              s.WebhookPort,
		certDir:           s.WebhookCertDir,
		metricsAddr:       "0",
		healthAddr:        "0",
		namespace:         devstack.TollgateNamespace,
		serviceName:       "tollgate-webhook",
		webhookConfigName: "tollgate",
		auditInterval:     devstack.AuditInterval,
		auditChunkSize:    audit.DefaultChunkSize,
	}
}

// devControllerOptions run the engine for the argocd namespace, comparing
// every devResync, fetching and rendering through the stack's repo-server
// at repoServer.
func devControllerOptions(s *devstack.Stack, repoServer string) controllerOptions {
	o := defaultControllerOptions()
	o.kubeconfig, o.namespace, o.resync = s.ControllerKubeconfig, devstack.ArgoCDNamespace, devResync
	o.metricsAddr, o.healthAddr, o.webhookAddr = "0", "0", "0"
	o.sharding = shardingNone // one replica
	o.repoServers, o.repoServerService, o.repoServerNamespace = []string{repoServer}, devstack.RepoServerName, devstack.TollgateNamespace
	return o
}
