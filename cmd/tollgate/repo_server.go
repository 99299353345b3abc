package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/certs"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/chart"
	plugins "github.com/tollgate-dev/tollgate/reposerver/cmp"
	"github.com/tollgate-dev/tollgate/reposerver/server"
	"github.com/tollgate-dev/tollgate/reposerver/source"
)

// repoOptions are the flags of the repository service, the same in
// `tollgate repo-server` and in the controller that runs it in-process.
type repoOptions struct {
	repoCache string
	// allowInsecureRepos allows http:// and git:// repositories without
	// insecure: "true" in their repository Secret.
	allowInsecureRepos bool
	// allowFileRepos allows file:// repositories (local development).
	allowFileRepos bool
	// renderTimeout and renderMemory bound each render, which runs in a
	// child process.
	renderTimeout time.Duration
	renderMemory  string
	// fetchTimeout and maxFetchBytes bound each Git fetch.
	fetchTimeout  time.Duration
	maxFetchBytes string
	// parallelism is how many renders run at once.
	parallelism int
	// renderCacheSize bounds the rendered sources kept in memory.
	renderCacheSize string
	// pluginSocketDir holds the sockets of the config management plugin
	// sidecars.
	pluginSocketDir string
}

// defaultRepoOptions are the defaults of the repository service's flags.
func defaultRepoOptions() repoOptions {
	return repoOptions{
		renderTimeout: server.DefaultLimits().Timeout, renderMemory: defaultRenderMemory,
		fetchTimeout: source.DefaultFetchTimeout, maxFetchBytes: defaultMaxFetchBytes,
		renderCacheSize: resource.NewQuantity(server.DefaultRenderCacheSize, resource.BinarySI).String(),
		pluginSocketDir: plugins.DefaultSocketDir,
	}
}

// addRepoFlags registers the repository service's flags on f.
func addRepoFlags(f *pflag.FlagSet, o *repoOptions) {
	f.StringVar(&o.repoCache, "repo-cache", "", "`DIR` for Git clones and checkouts and Helm charts (default: tollgate-repo-cache in the temporary directory)")
	f.BoolVar(&o.allowInsecureRepos, "allow-insecure-repos", false, "fetch http:// and git:// repositories even without insecure: \"true\" in their repository Secret")
	f.BoolVar(&o.allowFileRepos, "allow-file-repos", false, "fetch file:// repositories from this process's disk (local development only)")
	f.DurationVar(&o.renderTimeout, "render-timeout", o.renderTimeout, "wall-clock limit of one render, or ApplicationSet generation (each runs in a child process, killed at the limit)")
	f.StringVar(&o.renderMemory, "render-memory", o.renderMemory, "memory limit of one render's, or generation's, child process (a Kubernetes quantity)")
	f.DurationVar(&o.fetchTimeout, "fetch-timeout", o.fetchTimeout, "time limit of one Git fetch (listing, download and checkout)")
	f.StringVar(&o.maxFetchBytes, "max-fetch-bytes", o.maxFetchBytes, "size limit of what one Git fetch downloads into a repository's cache (a Kubernetes quantity)")
	f.IntVar(&o.parallelism, "parallelism", o.parallelism, "renders run at once; more wait (0: no limit)")
	f.StringVar(&o.pluginSocketDir, "plugin-socket-dir", o.pluginSocketDir, "`DIR` of the sockets of config management plugin sidecars (Argo CD's cmp-server protocol), as Argo CD's repo-server finds them")
	f.StringVar(&o.renderCacheSize, "render-cache-size", o.renderCacheSize, "bytes of rendered manifests kept in memory, least recently used first out (a Kubernetes quantity); keep it above the renders of every Application, or each comparison renders again")
}

// repoSettings are the repository service's flags, checked.
type repoSettings struct {
	sources     source.Options
	limits      server.Limits
	renderCache int64
}

// check validates the flags that need no I/O, so a bad value is a usage
// error before anything starts.
func (o repoOptions) check() (repoSettings, error) {
	var rs repoSettings
	rs.sources = source.DefaultOptions()
	rs.sources.AllowInsecure, rs.sources.AllowFile = o.allowInsecureRepos, o.allowFileRepos
	if o.fetchTimeout <= 0 {
		return rs, usageError(fmt.Errorf("invalid --fetch-timeout %s: must be positive", o.fetchTimeout))
	}
	size, err := positiveQuantity("--max-fetch-bytes", o.maxFetchBytes)
	if err != nil {
		return rs, err
	}
	rs.sources.FetchTimeout, rs.sources.MaxFetchBytes = o.fetchTimeout, size
	if o.parallelism < 0 {
		return rs, usageError(fmt.Errorf("invalid --parallelism %d: must not be negative", o.parallelism))
	}
	if rs.renderCache, err = positiveQuantity("--render-cache-size", o.renderCacheSize); err != nil {
		return rs, err
	}
	rs.limits, err = sandboxLimits(o.renderTimeout, o.renderMemory)
	return rs, err
}

// newRepoService builds the repository service of o: a Git cache and a
// Helm chart cache in --repo-cache and a render sandbox, a child process per render under the
// render limits, so tenant charts and overlays are never parsed in the
// calling process. requests, when not nil, is told of every Git request.
func newRepoService(o repoOptions, requests source.RequestObserver) (*server.Service, error) {
	rs, err := o.check()
	if err != nil {
		return nil, err
	}
	rs.sources.Requests = requests
	runner, err := newSandbox(rs.limits)
	if err != nil {
		return nil, err
	}
	dir := o.repoCache
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "tollgate-repo-cache")
	}
	cache, err := source.NewCache(dir, rs.sources)
	if err != nil {
		return nil, err
	}
	charts, err := chart.New(chart.Options{Dir: filepath.Join(dir, "charts"), AllowInsecure: rs.sources.AllowInsecure, Timeout: o.fetchTimeout})
	if err != nil {
		return nil, err
	}
	ropts := server.DefaultOptions()
	ropts.Renderer, ropts.Parallelism, ropts.Charts, ropts.RenderCacheSize = runner, o.parallelism, charts, rs.renderCache
	ropts.Plugins = server.PluginSockets(o.pluginSocketDir)
	return server.New(cache, ropts)
}

// repoServerOptions are the flags of `tollgate repo-server`.
type repoServerOptions struct {
	repoOptions
	addr     string
	certDir  string
	clientCA string
	// metricsAddr serves Prometheus metrics over HTTP ("0": none).
	metricsAddr string
}

func newRepoServerCmd() *cobra.Command {
	o := repoServerOptions{repoOptions: defaultRepoOptions(), addr: ":8443", metricsAddr: ":8084"}
	cmd := &cobra.Command{
		Use:   "repo-server",
		Short: "Fetch and render Applications' sources for the controller, with no Kubernetes credentials",
		Long: `Serve the controller's requests for rendered manifests over HTTPS: fetch an
Application's sources from Git (with the credentials the controller sends
for that request) and render them, each render in a child process under
--render-timeout and --render-memory. It is where tenant repositories, charts
and overlays are parsed, so it runs without any Kubernetes credentials; the
controller (` + "`tollgate controller --repo-server ADDR`" + `) holds those and parses
no tenant input.

It serves tls.crt and tls.key from --cert-dir, reloaded when they change, and
answers only callers that present a client certificate signed by a CA of
--client-ca (default: ca.crt in --cert-dir). In the install in config/, all
three come from the Secret tollgate-repo-server-tls, which the controller
keeps (CA and serving certificate, rotated); the controller trusts that CA
and issues itself a client certificate with its key. GET /healthz answers on
the same port. Prometheus metrics (Argo CD's argocd_git_request_total and
argocd_git_request_duration_seconds among them) are served over HTTP at
/metrics on --metrics-addr.`,
		Example: `  tollgate repo-server --cert-dir /etc/tollgate/tls --repo-cache /tmp/repo-cache`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRepoServer(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", o.addr, "address to serve HTTPS on")
	f.StringVar(&o.certDir, "cert-dir", "", "`DIR` with tls.crt and tls.key to serve (required)")
	f.StringVar(&o.clientCA, "client-ca", "", "CA bundle `FILE` a caller's client certificate must chain to (default: ca.crt in --cert-dir)")
	f.StringVar(&o.metricsAddr, "metrics-addr", o.metricsAddr, "address of the Prometheus metrics endpoint, plain HTTP (0 disables it; Argo CD's repo-server uses port 8084)")
	addRepoFlags(f, &o.repoOptions)
	return cmd
}

// runRepoServer serves the repository service until ctx ends.
func runRepoServer(ctx context.Context, o repoServerOptions) error {
	log := logr.FromContextOrDiscard(ctx).WithName("repo-server")
	if o.certDir == "" {
		return usageError(errors.New("--cert-dir is required: the repo-server serves only HTTPS"))
	}
	reg, git := prometheus.NewRegistry(), server.NewGitMetrics()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if err := git.Register(reg); err != nil {
		return err
	}
	svc, err := newRepoService(o.repoOptions, git)
	if err != nil {
		return err
	}
	watcher, err := certs.NewFileWatcher(filepath.Join(o.certDir, "tls.crt"), filepath.Join(o.certDir, "tls.key"))
	if err != nil {
		return usageError(fmt.Errorf("--cert-dir %s: %w", o.certDir, err))
	}
	if o.clientCA == "" {
		o.clientCA = filepath.Join(o.certDir, certs.SecretKeyCACert)
	}
	clientCAs, err := certs.NewCAFile(o.clientCA)
	if err != nil {
		return usageError(fmt.Errorf("--client-ca: %w", err))
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return usageError(fmt.Errorf("--addr %s: %w", o.addr, err))
	}
	srv := &http.Server{
		Handler:           server.NewHandler(svc, log),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		// No write timeout: a render takes as long as its own limit allows.
		TLSConfig: server.ServerTLSConfig(watcher.GetCertificate, clientCAs.Pool),
	}
	metricsSrv, err := serveMetrics(o.metricsAddr, reg, log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 3)
	background := func(run func(context.Context) error) {
		if err := run(ctx); err != nil {
			errs <- err
		}
	}
	go background(watcher.Start)
	go background(func(ctx context.Context) error { return svc.Run(logr.NewContext(ctx, log)) })
	go func() {
		log.Info("Serving", "addr", ln.Addr().String(), "parallelism", o.parallelism, "renderTimeout", o.renderTimeout.String(), "renderMemory", o.renderMemory)
		errs <- srv.ServeTLS(ln, "", "")
	}()
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	shutdown, stop := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer stop()
	if serr := srv.Shutdown(shutdown); err == nil && !errors.Is(serr, http.ErrServerClosed) {
		err = serr
	}
	if metricsSrv != nil {
		_ = metricsSrv.Shutdown(shutdown)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// serveMetrics serves reg's metrics at /metrics on addr, over HTTP, until
// the returned server is shut down; nil when addr is "" or "0".
func serveMetrics(addr string, reg *prometheus.Registry, log logr.Logger) (*http.Server, error) {
	if addr == "" || addr == "0" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageError(fmt.Errorf("--metrics-addr %s: %w", addr, err))
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(err, "Serve metrics", "addr", addr)
		}
	}()
	return srv, nil
}

// repoClientOptions are the flags of a client of the repo-servers: the
// controller's and the web UI's.
type repoClientOptions struct {
	// repoServers are the addresses of `tollgate repo-server`s.
	repoServers []string
	// repoServerSecret and repoServerService name the Secret of the
	// repo-servers' TLS certificate, which the client keeps, and the
	// Service it is issued for.
	repoServerSecret  string
	repoServerService string
	// repoServerNamespace is the namespace of repoServerSecret: default
	// $POD_NAMESPACE, else the control-plane namespace.
	repoServerNamespace string
	// repoServerTimeout is the deadline of one request, in seconds.
	repoServerTimeout int
}

func defaultRepoClientOptions() repoClientOptions {
	return repoClientOptions{repoServerSecret: defaultRepoServerSecret, repoServerService: defaultRepoServerService,
		repoServerTimeout: int(reposerver.DefaultTimeout / time.Second)}
}

func (o *repoClientOptions) addFlags(f *pflag.FlagSet) {
	f.StringSliceVar(&o.repoServers, "repo-server", nil, "`ADDR` (host:port) of a tollgate repo-server to fetch and render through (repeatable or comma-separated; a name resolving to several addresses counts as several); without it, this process fetches and renders, under the flags below")
	f.StringVar(&o.repoServerSecret, "repo-server-tls-secret", o.repoServerSecret, "Secret in $POD_NAMESPACE (else --namespace) holding the repo-servers' CA and serving certificate, which this process keeps and trusts (with --repo-server)")
	f.StringVar(&o.repoServerService, "repo-server-service", o.repoServerService, "Service the repo-servers' certificate is issued for (with --repo-server)")
	f.IntVar(&o.repoServerTimeout, "repo-server-timeout-seconds", o.repoServerTimeout, "deadline of one request to the repo-servers, in seconds (with --repo-server); past it the request counts as unanswered and is retried later. Argo CD's default is 60; ours is above a fetch's and a render's own limits, so that those name themselves first")
}

// client is a client of the repo-servers, which it trusts by the CA kept
// in the Secret repoServerSecret (of repoServerNamespace, else
// $POD_NAMESPACE, else namespace) and presents them a client certificate
// of that CA. The returned certificate manager keeps the Secret; the
// caller runs it.
func (o repoClientOptions) client(cfg *rest.Config, scheme *runtime.Scheme, namespace string) (*reposerver.Client, *certs.Manager, error) {
	if o.repoServerTimeout <= 0 {
		return nil, nil, usageError(fmt.Errorf("invalid --repo-server-timeout-seconds %d: must be positive", o.repoServerTimeout))
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("create client: %w", err)
	}
	ns := cmp.Or(o.repoServerNamespace, os.Getenv("POD_NAMESPACE"), namespace)
	tlsCerts := certs.NewManager(c, certs.Options{Namespace: ns, SecretName: o.repoServerSecret, ServiceName: o.repoServerService})
	rc, err := reposerver.NewClient(reposerver.ClientOptions{Addresses: o.repoServers, RootCAs: tlsCerts.RootCAs, Certificate: tlsCerts.GetClientCertificate,
		Timeout: time.Duration(o.repoServerTimeout) * time.Second})
	if err != nil {
		return nil, nil, usageError(fmt.Errorf("--repo-server: %w", err))
	}
	return rc, tlsCerts, nil
}
