package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/api/wgpolicyk8s/v1alpha2"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/ui"
)

// uiServeOptions are the flags of the web UI that `tollgate ui` and
// `tollgate controller --ui-addr` share (how people sign in), and which
// further namespaces' Applications are shown (`tollgate ui` only: the
// controller serves its own namespace).
type uiServeOptions struct {
	applicationNamespaces []string
	proxyHeader           string
	proxyGroupsHeader     string
	proxyCIDRs            []string
	tlsCert, tlsKey       string
	insecureLocal         bool
	sessionTTL            time.Duration
}

func defaultUIServeOptions() uiServeOptions {
	return uiServeOptions{proxyCIDRs: []string{"127.0.0.0/8", "::1/128"}, sessionTTL: 8 * time.Hour}
}

// addAuthFlags registers how people sign in.
func (o *uiServeOptions) addAuthFlags(f *pflag.FlagSet) {
	f.StringVar(&o.proxyHeader, "auth-proxy-header", "", "header in which an authenticating proxy in front names the person (e.g. X-Forwarded-User); the UI impersonates them")
	f.StringVar(&o.proxyGroupsHeader, "auth-proxy-groups-header", "", "header in which the proxy lists the person's groups (comma-separated), with --auth-proxy-header")
	f.StringSliceVar(&o.proxyCIDRs, "auth-proxy-cidrs", o.proxyCIDRs, "`CIDRS` the authenticating proxy connects from; its headers are ignored from anywhere else")
	f.StringVar(&o.tlsCert, "tls-cert-file", "", "serve HTTPS with this certificate `FILE` (PEM); without --auth-proxy-header, people then sign in with a bearer token")
	f.StringVar(&o.tlsKey, "tls-key-file", "", "private key `FILE` of --tls-cert-file")
	f.BoolVar(&o.insecureLocal, "insecure-local", false, "no sign-in: every request acts as this process's kubeconfig (local development only; the address must be loopback)")
	f.DurationVar(&o.sessionTTL, "session-ttl", o.sessionTTL, "how long a token sign-in lasts")
}

// auth checks the flags for a UI listening on addr.
func (o uiServeOptions) auth(addr string) (ui.Auth, error) {
	a := ui.Auth{
		ProxyHeader: o.proxyHeader, ProxyGroupsHeader: o.proxyGroupsHeader, InsecureLocal: o.insecureLocal,
		TLS: o.tlsCert != "", SessionTTL: o.sessionTTL,
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return a, errors.New("--tls-cert-file and --tls-key-file go together")
	}
	a.TokenLogin = a.TLS && a.ProxyHeader == "" && !a.InsecureLocal
	for _, c := range o.proxyCIDRs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return a, fmt.Errorf("invalid --auth-proxy-cidrs %q: %w", c, err)
		}
		a.ProxyCIDRs = append(a.ProxyCIDRs, p)
	}
	if err := a.Check(); err != nil {
		return a, err
	}
	if a.InsecureLocal {
		if err := ui.CheckLocalAddr(addr); err != nil {
			return a, err
		}
	}
	return a, nil
}

// listenUI listens on addr, with TLS under --tls-cert-file, and tells out
// where and how people sign in.
func listenUI(addr string, o uiServeOptions, out io.Writer) (net.Listener, error) {
	var cert tls.Certificate
	if o.tlsCert != "" {
		var err error
		if cert, err = tls.LoadX509KeyPair(o.tlsCert, o.tlsKey); err != nil {
			return nil, usageError(fmt.Errorf("--tls-cert-file: %w", err))
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("ui: listen: %w", err)
	}
	scheme, mode := "http", "signed in through the proxy's "+o.proxyHeader+" header"
	if o.tlsCert != "" {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		scheme = "https"
		if o.proxyHeader == "" {
			mode = "people sign in with a bearer token"
		}
	}
	if o.insecureLocal {
		mode = "insecure-local: every request acts as this process's kubeconfig"
	}
	fmt.Fprintf(out, "tollgate ui: serving on %s://%s (%s)\n", scheme, ln.Addr(), mode)
	return ln, nil
}

// uiOptions are the flags of `tollgate ui`.
type uiOptions struct {
	uiServeOptions
	repoOptions
	repoClientOptions
	kubeconfig string
	addr       string
	namespace  string
	// configFile is the policy configuration (tollgate controller's
	// --config), which diffs are judged with.
	configFile string
	// trackingMethod overrides the trackingMethod of configFile.
	trackingMethod string
}

func newUICmd() *cobra.Command {
	o := uiOptions{uiServeOptions: defaultUIServeOptions(), repoOptions: defaultRepoOptions(), repoClientOptions: defaultRepoClientOptions(), addr: "127.0.0.1:8080", namespace: "argocd"}
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the web UI: Applications, their trees, diffs and the gate's verdicts, and the audit",
		Long: `Serve the web UI on --addr: the Applications (filter by project, sync,
health and namespace; search by name), each with its resource tree, sync
and health per object, last operation, history, diffs and the gate's
verdicts; the AppProjects' limits in words; the audit's PolicyReports.
Pages update live (server-sent events fed by one watch). The actions Sync,
Refresh and Rollback make the API calls tollgate app makes.

Every request acts as the signed-in person, so Kubernetes RBAC decides
what they see and do. Choose how they sign in:

  --auth-proxy-header NAME   an authenticating proxy in front names them;
                             the UI impersonates them (its own identity
                             needs the impersonate verb: config/ui)
  --tls-cert-file/--tls-key-file
                             HTTPS, and they paste a bearer token
  --insecure-local           no sign-in, acts as --kubeconfig; loopback only

Without one of them the UI refuses to start. Diffs and the history's
commits are fetched and rendered by the repo-servers of --repo-server (as
the controller's are), or without it in this process (each render in a
child process, under the render flags below), with the repository
credentials of --namespace. A diff reads live objects only when the
Application's AppProject permits every one of them, as a sync writes them
(judged with the policy configuration of --config, the controller's);
otherwise its page is 403 and names each object and rule.`,
		Example: `  tollgate ui --insecure-local --kubeconfig .tollgate/kubeconfig
  tollgate ui --addr :8080 --auth-proxy-header X-Forwarded-User --auth-proxy-groups-header X-Forwarded-Groups
  tollgate ui --addr :8443 --tls-cert-file tls.crt --tls-key-file tls.key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runUI(cmd.Context(), cmd.OutOrStdout(), o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file of the UI's own identity (default: $KUBECONFIG, ~/.kube/config, then in-cluster)")
	f.StringVar(&o.addr, "addr", o.addr, "`HOST:PORT` to serve on")
	f.StringVar(&o.namespace, "namespace", o.namespace, "the control-plane namespace: its Applications, AppProjects and repository credentials")
	f.StringVar(&o.configFile, "config", "", "the controller's policy configuration `FILE` (protected namespaces, exemptions, implicitDefaultProject, trackingMethod), which diffs are judged with")
	f.StringVar(&o.trackingMethod, "tracking-method", "", "the controller's tracking method, for diffs: annotation, label or annotation+label (default: trackingMethod of --config, else annotation)")
	f.StringSliceVar(&o.applicationNamespaces, "application-namespaces", nil, "further `NAMESPACES` whose Applications the UI shows (names, globs or /regular expressions/, as Argo CD's application.namespaces)")
	o.uiServeOptions.addAuthFlags(f)
	o.repoClientOptions.addFlags(f)
	addRepoFlags(f, &o.repoOptions)
	return cmd
}

func runUI(ctx context.Context, out io.Writer, o uiOptions) error {
	auth, err := o.auth(o.addr)
	if err != nil {
		return usageError(err)
	}
	pol, eval, err := loadEnginePolicies(ctx, o.configFile, o.namespace, o.trackingMethod)
	if err != nil {
		return err
	}
	kc, err := loadKubeconfig(o.kubeconfig)
	if err != nil {
		return usageError(err)
	}
	ln, err := listenUI(o.addr, o.uiServeOptions, out)
	if err != nil {
		return err
	}
	return serveUI(ctx, ln, kc.rest, o, auth, pol, eval)
}

// runUIOn is serveUI with the policies of o's --config and
// --tracking-method; it closes ln.
func runUIOn(ctx context.Context, ln net.Listener, restCfg *rest.Config, o uiOptions, auth ui.Auth) error {
	pol, eval, err := loadEnginePolicies(ctx, o.configFile, o.namespace, o.trackingMethod)
	if err != nil {
		ln.Close()
		return err
	}
	return serveUI(ctx, ln, restCfg, o, auth, pol, eval)
}

// serveUI serves the UI on ln with its own Application cache and, for
// diffs and commits, the repo-servers of --repo-server or a repository
// service of its own, judging diffs with eval under pol, until ctx ends;
// it closes ln.
func serveUI(ctx context.Context, ln net.Listener, restCfg *rest.Config, o uiOptions, auth ui.Auth, pol policies.Config, eval application.Evaluator) error {
	defer ln.Close()
	scheme, err := newUIScheme()
	if err != nil {
		return err
	}
	cfg := controllerRESTConfig(restCfg)
	// repos, and what keeps them (the repo-servers' certificate, or the
	// checkout sweeper), which runs once everything is built.
	var repos ui.Repos
	var keepRepos func(context.Context) error
	if len(o.repoServers) > 0 {
		rc, tlsCerts, err := o.repoClientOptions.client(cfg, scheme, o.namespace)
		if err != nil {
			return err
		}
		repos, keepRepos = rc, tlsCerts.Start
	} else {
		svc, err := newRepoService(o.repoOptions, nil)
		if err != nil {
			return err
		}
		repos, keepRepos = svc, svc.Run
	}
	copts := cache.Options{Scheme: scheme}
	if len(o.applicationNamespaces) == 0 {
		copts.DefaultNamespaces = map[string]cache.Config{o.namespace: {}}
	}
	c, err := cache.New(cfg, copts)
	if err != nil {
		return fmt.Errorf("ui: cache: %w", err)
	}
	srv, err := newUIServer(ctx, cfg, scheme, c, repos, o.namespace, pol, eval, o.uiServeOptions, auth, logr.FromContextOrDiscard(ctx))
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return keepRepos(gctx) })
	g.Go(func() error { return c.Start(gctx) })
	g.Go(func() error { return srv.Start(gctx) })
	g.Go(func() error { return ui.Serve(gctx, ln, srv) })
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// newUIServer builds the UI over the cache c (which the caller starts),
// rendering diffs and reading commits through repos, judging diffs with
// eval under pol (tracking method, implicit default project).
func newUIServer(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, c cache.Cache, repos ui.Repos, namespace string, pol policies.Config, eval application.Evaluator, o uiServeOptions, auth ui.Auth, log logr.Logger) (*ui.Server, error) {
	return ui.New(ctx, ui.Options{
		Config: cfg, Scheme: scheme, Cache: c, Namespace: namespace, ApplicationNamespaces: o.applicationNamespaces,
		Repos: repos, TrackingMethod: v1alpha1.TrackingMethod(pol.TrackingMethod), Evaluator: eval, ImplicitDefaultProject: pol.ImplicitDefaultProject,
		Auth: auth, Log: log.WithName("ui"),
	})
}

// newUIScheme is newScheme with the PolicyReport types.
func newUIScheme() (*runtime.Scheme, error) {
	s, err := newScheme()
	if err != nil {
		return nil, err
	}
	if err := v1alpha2.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	return s, nil
}

// uiRunnable serves the UI on every replica of a manager.
type uiRunnable func(context.Context) error

func (f uiRunnable) Start(ctx context.Context) error { return f(ctx) }
func (uiRunnable) NeedLeaderElection() bool          { return false }

// addUI serves the UI in the controller's manager on o.uiAddr, over the
// manager's cache, rendering diffs and reading commits through repos and
// judging diffs with the controller's evaluator eval under its policy
// configuration pol.
func addUI(ctx context.Context, mgr manager.Manager, repos ui.Repos, pol policies.Config, eval application.Evaluator, o controllerOptions, auth ui.Auth, out io.Writer) error {
	o.ui.applicationNamespaces = o.appNamespaces // the Applications the controller serves
	srv, err := newUIServer(ctx, mgr.GetConfig(), mgr.GetScheme(), mgr.GetCache(), repos, o.namespace, pol, eval, o.ui, auth, logr.FromContextOrDiscard(ctx))
	if err != nil {
		return err
	}
	if err := mgr.Add(srv); err != nil {
		return fmt.Errorf("add ui: %w", err)
	}
	serve := uiRunnable(func(ctx context.Context) error {
		ln, err := listenUI(o.uiAddr, o.ui, out)
		if err != nil {
			return err
		}
		return ui.Serve(ctx, ln, srv)
	})
	if err := mgr.Add(serve); err != nil {
		return fmt.Errorf("add ui: %w", err)
	}
	return nil
}
