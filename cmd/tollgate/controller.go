package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
	"github.com/tollgate-dev/tollgate/engine/controller/applicationset"
	"github.com/tollgate-dev/tollgate/engine/controller/notification"
	"github.com/tollgate-dev/tollgate/engine/health"
	"github.com/tollgate-dev/tollgate/engine/metrics"
	"github.com/tollgate-dev/tollgate/engine/notify"
	"github.com/tollgate-dev/tollgate/engine/shard"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/server"
	"github.com/tollgate-dev/tollgate/reposerver/source"
	"github.com/tollgate-dev/tollgate/ui"
)

// controllerGCPercent is the controller's GOGC unless the GOGC environment
// variable sets one. The controller holds its caches for hours and spends
// most of them idle: its heap is live state plus the garbage of resync
// cycles, and Go's default lets that garbage grow as large as the live
// state before collecting. Collecting at half of it keeps peak RSS about
// 15% lower for a few percent more CPU (docs/benchmarks.md, make bench-engine); the
// cost scales with the live heap, so unlike a fixed soft limit it cannot
// make a large installation collect without pause.
const controllerGCPercent = 50

// controllerOptions are the flags of `tollgate controller`.
type controllerOptions struct {
	kubeconfig string
	namespace  string
	repoCache  string
	resync     time.Duration
	// statusProcessors and operationProcessors are the Applications
	// compared, and the operations run, at once.
	statusProcessors    int
	operationProcessors int
	// sharding is none or dynamic; empty means dynamic, or none with
	// --leader-elect.
	sharding           string
	shardLeaseDuration time.Duration
	// reconcileTimeout bounds one reconcile of one Application.
	reconcileTimeout time.Duration
	syncTimeout      time.Duration
	metricsAddr      string
	healthAddr       string
	pprofAddr        string
	webhookAddr      string
	webhookSecret    string
	webhookGitLab    string
	leaderElect      bool
	configFile       string
	// trackingMethod overrides the trackingMethod of configFile.
	trackingMethod string
	// customizations are directories of Lua health checks in Argo CD's
	// resource_customizations layout.
	customizations []string
	// repoOptions configure the in-process repository service, used
	// without repoServers.
	repoOptions
	// repoClientOptions: with repo-servers, no tenant input is parsed in
	// the controller.
	repoClientOptions
	// applicationSets runs the ApplicationSet controller, for the
	// ApplicationSets of namespace and of appSetNamespaces.
	applicationSets  bool
	appSetNamespaces []string
	// appNamespaces are the other namespaces whose Applications are
	// reconciled (names, globs, /regular expressions/).
	appNamespaces []string
	// appSetConcurrency is how many ApplicationSets are generated at once.
	appSetConcurrency int
	// scmProviders enables pull request and SCM provider generators, whose API URLs
	// allowedSCMProviders limits (Argo CD's flags).
	scmProviders        bool
	allowedSCMProviders []string
	// progressiveSyncs runs ApplicationSets' RollingSync strategy (Argo
	// CD's --enable-progressive-syncs).
	progressiveSyncs bool
	// notifications sends Argo CD's notifications of argocd-notifications-cm.
	notifications bool
	// uiAddr serves the web UI there too ("" or 0: no UI), under ui.
	uiAddr string
	ui     uiServeOptions
}

// appSetNamespaces are the namespaces whose ApplicationSets are served,
// none with the ApplicationSet controller off.
func (o controllerOptions) servedAppSetNamespaces() []string {
	if !o.applicationSets {
		return nil
	}
	return append([]string{o.namespace}, o.appSetNamespaces...)
}

// serveUI reports whether --ui-addr asks for the web UI.
// listingMaxAge is how old a repository's reference listing may be for
// every controller of the process (Applications, ApplicationSets,
// notifications): a tenth of the resync period.
func (o controllerOptions) listingMaxAge() time.Duration { return o.resync / 10 }

func (o controllerOptions) serveUI() bool { return o.uiAddr != "" && o.uiAddr != "0" }

// defaultControllerOptions are the defaults of the controller's flags,
// which tollgate dev starts from too.
func defaultControllerOptions() controllerOptions {
	return controllerOptions{
		namespace: application.DefaultNamespace, resync: application.DefaultResync,
		statusProcessors: application.DefaultStatusProcessors, operationProcessors: application.DefaultOperationProcessors,
		shardLeaseDuration: shard.DefaultLeaseDuration,
		reconcileTimeout:   application.DefaultReconcileTimeout,
		metricsAddr:        ":8080", healthAddr: ":8081", pprofAddr: "0", webhookAddr: ":8082",
		repoOptions: defaultRepoOptions(), repoClientOptions: defaultRepoClientOptions(),
		applicationSets: true, appSetConcurrency: applicationset.DefaultConcurrency, scmProviders: true, notifications: true, ui: defaultUIServeOptions(),
	}
}

// defaultMaxFetchBytes is the default of --max-fetch-bytes.
var defaultMaxFetchBytes = resource.NewQuantity(source.DefaultMaxFetchBytes, resource.BinarySI).String()

// Defaults of --repo-server-tls-secret and --repo-server-service, the
// names in config/.
const (
	defaultRepoServerSecret  = "tollgate-repo-server-tls"
	defaultRepoServerService = "tollgate-repo-server"
)

func newControllerCmd() *cobra.Command {
	o := defaultControllerOptions()
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the sync engine: reconcile Argo CD Applications, gated by the policies",
		Long: `Run the sync engine. It reconciles the Argo CD Applications of --namespace
(and of --application-namespaces, each permitted by its project's
sourceNamespaces, as Argo CD's applications in any namespace):
renders their sources from Git exactly as ` + "`tollgate test`" + ` does, judges the
Application and every rendered object with the policies, and applies nothing
when a rule denies (condition PolicyViolation); otherwise it compares with the
cluster by server-side dry run and syncs with server-side apply, wave by wave,
when a sync is requested (` + "`tollgate app sync`" + `) or automated.

Repositories are fetched over https, ssh or git@host:path. http:// and git://
need insecure: "true" in the repository's Secret or --allow-insecure-repos;
file:// needs --allow-file-repos (local development only).

The Git push webhook (GitHub push, GitLab Push Hook) is served at
/api/webhook on --webhook-addr only with --webhook-secret (or
$` + webhookSecretEnv + `): every request must carry GitHub's signature or
GitLab's token. With --webhook-gitlab-secret (or
$` + webhookGitLabSecretEnv + `), GitLab's token is that secret and
--webhook-secret signs GitHub's events only.

Replicas share the Applications (--sharding dynamic, the default): each
holds a Lease of its own in $POD_NAMESPACE (else in --namespace), named after
$POD_NAME (else the host name and process id), and owns the Applications
that rendezvous hashing gives it among the live replicas; when one stops,
the others take its Applications within --shard-lease-duration. An
operation is fenced on its Application, so no two replicas run it. With
--leader-elect (and --sharding none), one replica reconciles everything
at a time instead.

It also runs Argo CD's ApplicationSets of --namespace and of
--applicationset-namespaces (--applicationsets=false turns that off): every
Application they generate is judged by the same policies before it is
written (enforcement point applicationset); a denied one is not written and
the ApplicationSet's conditions name the rule and the parameters. Their
generators and templates run where the sources render (the repo-server).

And it sends Argo CD's notifications (--notifications=false turns that off):
the triggers, templates, services (webhook, slack, email) and subscriptions
of argocd-notifications-cm, with argocd-notifications-secret, plus the
trigger on-policy-violation (config/notifications has the catalog).`,
		Example: `  tollgate controller --namespace argocd --leader-elect
  tollgate controller --kubeconfig ~/.kube/config --resync 1m --status-processors 8 --operation-processors 4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.webhookSecret == "" {
				o.webhookSecret = os.Getenv(webhookSecretEnv)
			}
			if o.webhookGitLab == "" {
				o.webhookGitLab = os.Getenv(webhookGitLabSecretEnv)
			}
			ctrl.SetLogger(logr.FromContextOrDiscard(cmd.Context()))
			return runController(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account)")
	f.StringVar(&o.namespace, "namespace", o.namespace, "namespace of the Applications, AppProjects and Argo CD Secrets")
	f.DurationVar(&o.resync, "resync", o.resync, "how often every Application is compared again (±10% jitter)")
	f.IntVar(&o.statusProcessors, "status-processors", o.statusProcessors, "Applications compared in parallel")
	f.IntVar(&o.statusProcessors, "concurrency", o.statusProcessors, "the former name of --status-processors")
	_ = f.MarkDeprecated("concurrency", "use --status-processors")
	f.IntVar(&o.operationProcessors, "operation-processors", o.operationProcessors, "operations (syncs, with their waves, hooks and waits for health) run in parallel; they never hold up comparisons")
	f.StringVar(&o.sharding, "sharding", "", "how replicas share the Applications: dynamic (each owns a share, by Leases; the default) or none (each reconciles all: one replica, or --leader-elect, which defaults to none)")
	f.DurationVar(&o.shardLeaseDuration, "shard-lease-duration", o.shardLeaseDuration, "with --sharding dynamic: how long a replica counts as live after its last Lease renewal; replicas renew every third of it")
	f.DurationVar(&o.reconcileTimeout, "reconcile-timeout", o.reconcileTimeout, "deadline of one reconcile of one Application (fetch, render, comparison and sync); passed, it is retried with backoff")
	f.DurationVar(&o.syncTimeout, "sync-timeout", 0, "terminate an operation that has run this long since it started, retries included, as Argo CD's --sync-timeout (0: never)")
	f.StringVar(&o.metricsAddr, "metrics-addr", o.metricsAddr, "address of the Prometheus metrics endpoint (0 disables it)")
	f.StringVar(&o.healthAddr, "health-addr", o.healthAddr, "address of /healthz and /readyz (0 disables them)")
	f.StringVar(&o.pprofAddr, "pprof-addr", o.pprofAddr, "address of the Go profiling endpoints /debug/pprof/ (0 disables them)")
	f.StringVar(&o.webhookAddr, "webhook-addr", o.webhookAddr, "address of the Git push webhook /api/webhook, served only with a secret (0 disables it)")
	f.StringVar(&o.webhookSecret, "webhook-secret", "", "shared secret of the Git push webhook (default $"+webhookSecretEnv+"): GitHub's signatures, and GitLab's token without --webhook-gitlab-secret; without either there is no webhook")
	f.StringVar(&o.webhookGitLab, "webhook-gitlab-secret", "", "GitLab's token for the Git push webhook (default $"+webhookGitLabSecretEnv+"), kept apart from --webhook-secret as Argo CD's webhook.gitlab.secret: GitLab shows it to whoever configures a webhook")
	f.BoolVar(&o.leaderElect, "leader-elect", false, "run only while holding the leader Lease")
	o.repoClientOptions.addFlags(f)
	addRepoFlags(f, &o.repoOptions)
	f.StringVar(&o.configFile, "config", "", "policy configuration `FILE` (severities, exemptions, protected namespaces, implicitDefaultProject, trackingMethod)")
	f.StringArrayVar(&o.customizations, "customizations", nil, "`DIR` of Lua health checks in Argo CD's resource_customizations layout (<group>/<kind>/health.lua), searched after argocd-cm's and before the built-in ones (repeatable)")
	f.BoolVar(&o.applicationSets, "applicationsets", o.applicationSets, "run the ApplicationSets of --namespace and --applicationset-namespaces (needs the ApplicationSet CRD of config/crd)")
	f.StringSliceVar(&o.appNamespaces, "application-namespaces", nil, "other `NAMESPACES` whose Applications are reconciled (comma-separated names, globs or /regular expressions/, as Argo CD's application.namespaces); an Application there may use only a project whose spec.sourceNamespaces lists its namespace")
	f.StringSliceVar(&o.appSetNamespaces, "applicationset-namespaces", nil, "other `NAMESPACES` whose ApplicationSets are run (comma-separated); their Applications must be permitted there by their project's sourceNamespaces")
	f.IntVar(&o.appSetConcurrency, "applicationset-concurrent-reconciliations", o.appSetConcurrency, "ApplicationSets generated at once (Argo CD's applicationset-controller --concurrent-reconciliations): one whose generation is slow, or stopped by its limits, holds up no other")
	f.BoolVar(&o.scmProviders, "enable-scm-providers", o.scmProviders, "run ApplicationSets' pull request and SCM provider generators (Argo CD's applicationset-controller flag); false refuses them")
	f.StringSliceVar(&o.allowedSCMProviders, "allowed-scm-providers", nil, "the `URLS` a pull request or SCM provider generator's api may name (comma-separated, Argo CD's applicationset-controller flag); empty allows any, and the providers' public APIs are always allowed")
	f.BoolVar(&o.progressiveSyncs, "enable-progressive-syncs", false, "run ApplicationSets' RollingSync strategy (Argo CD's applicationset-controller flag): their Applications synced step by step, automated sync turned off; without it a strategy is ignored")
	f.BoolVar(&o.notifications, "notifications", o.notifications, "send Argo CD's notifications configured in argocd-notifications-cm and argocd-notifications-secret of --namespace (nothing without them)")
	f.StringVar(&o.uiAddr, "ui-addr", "", "also serve the web UI (tollgate ui) on this `HOST:PORT`, acting as the signed-in person chosen by the flags below")
	o.ui.addAuthFlags(f)
	f.StringVar(&o.trackingMethod, "tracking-method", "", "how applied objects are marked and recognised as an Application's: annotation, label or annotation+label (default: trackingMethod of --config, else annotation)")
	return cmd
}

// runController builds the manager and runs it until the context ends.
func runController(ctx context.Context, o controllerOptions) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(controllerGCPercent)
	}
	log := logr.FromContextOrDiscard(ctx)
	if o.resync <= 0 {
		return usageError(fmt.Errorf("invalid --resync %s: must be positive", o.resync))
	}
	if o.statusProcessors <= 0 {
		return usageError(fmt.Errorf("invalid --status-processors %d: must be positive", o.statusProcessors))
	}
	if o.operationProcessors <= 0 {
		return usageError(fmt.Errorf("invalid --operation-processors %d: must be positive", o.operationProcessors))
	}
	if err := o.checkSharding(); err != nil {
		return usageError(err)
	}
	if o.reconcileTimeout <= 0 {
		return usageError(fmt.Errorf("invalid --reconcile-timeout %s: must be positive", o.reconcileTimeout))
	}
	if o.appSetConcurrency <= 0 {
		return usageError(fmt.Errorf("invalid --applicationset-concurrent-reconciliations %d: must be positive", o.appSetConcurrency))
	}
	if o.syncTimeout < 0 {
		return usageError(fmt.Errorf("invalid --sync-timeout %s: must not be negative", o.syncTimeout))
	}
	if _, err := o.repoOptions.check(); err != nil {
		return err
	}
	var uiAuth ui.Auth
	if o.serveUI() {
		var err error
		if uiAuth, err = o.ui.auth(o.uiAddr); err != nil {
			return usageError(fmt.Errorf("--ui-addr: %w", err))
		}
	}
	kc, err := loadKubeconfig(o.kubeconfig)
	if err != nil {
		return usageError(err)
	}
	cfg, evaluator, err := loadEnginePolicies(ctx, o.configFile, o.namespace, o.trackingMethod)
	if err != nil {
		return err
	}
	mgr, err := newControllerManager(kc, o)
	if err != nil {
		return err
	}
	manifests, err := controllerManifests(kc.rest, mgr, o)
	if err != nil {
		return err
	}
	m := metrics.NewMetrics()
	if err := m.Register(crmetrics.Registry); err != nil {
		return err
	}
	eopts := application.DefaultOptions()
	eopts.Namespace, eopts.Resync, eopts.ApplicationNamespaces = o.namespace, o.resync, o.appNamespaces
	eopts.ListingMaxAge = o.listingMaxAge()
	eopts.StatusProcessors, eopts.OperationProcessors = o.statusProcessors, o.operationProcessors
	eopts.ReconcileTimeout, eopts.SyncTimeout = o.reconcileTimeout, o.syncTimeout
	eopts.ImplicitDefaultProject = cfg.ImplicitDefaultProject
	eopts.TrackingMethod = v1alpha1.TrackingMethod(cfg.TrackingMethod)
	checker, err := health.NewChecker(o.customizations...)
	if err != nil {
		return usageError(fmt.Errorf("--customizations: %w", err))
	}
	member, err := newShardMember(kc.rest, mgr, o)
	if err != nil {
		return err
	}
	deps := application.Dependencies{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Config: mgr.GetConfig(), Scheme: mgr.GetScheme(),
		Evaluator: evaluator, Manifests: manifests, Recorder: mgr.GetEventRecorder(application.ControllerName), Metrics: m,
		Health: checker,
	}
	if member != nil {
		deps.Shard = member
	}
	r, err := application.New(deps, eopts)
	if err != nil {
		return err
	}
	if err := metrics.RegisterAll(crmetrics.Registry, r.Collectors(ctx)...); err != nil {
		return err
	}
	// argocd-cm's health checks and settings, read live.
	if err := application.WatchArgoCDConfigMap(ctx, mgr.GetConfig(), o.namespace, r.ApplyArgoCDConfigMap); err != nil {
		return err
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	if err := addAppSetController(mgr, o, cfg, evaluator, manifests, deps.Shard); err != nil {
		return err
	}
	if o.notifications {
		n := notification.New(mgr.GetClient(), o.namespace, deps.Shard, m, notify.DefaultDispatcherOptions(), log.WithName("notifications"))
		n.ApplicationNamespaces, n.RepoServer = o.appNamespaces, manifests
		n.KustomizeBuildOptions, n.ListingMaxAge = r.KustomizeBuildOptions, o.listingMaxAge()
		if err := n.SetupWithManager(ctx, mgr, mgr.GetConfig()); err != nil {
			return err
		}
	}
	if err := addPushWebhook(mgr, o, m, log); err != nil {
		return err
	}
	if o.serveUI() {
		if err := addUI(ctx, mgr, manifests, cfg, evaluator, o, uiAuth, os.Stdout); err != nil {
			return err
		}
	}
	log.Info("Starting controller", "namespace", o.namespace, "resync", o.resync.String(), "leaderElection", o.leaderElect,
		"sharding", o.sharding, "repoServers", o.repoServers)
	if member == nil {
		if err := mgr.Start(ctx); err != nil {
			return fmt.Errorf("run controller: %w", err)
		}
		return nil
	}
	return runSharded(ctx, mgr, member)
}

// addAppSetController runs the ApplicationSet controller unless
// --applicationsets=false. The ApplicationSet CRD must be installed.
func addAppSetController(mgr manager.Manager, o controllerOptions, cfg policies.Config, evaluator application.Evaluator, gen reposerver.AppSetGenerator, shard application.Sharder) error {
	if !o.applicationSets {
		return nil
	}
	if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: v1alpha1.Group, Kind: v1alpha1.ApplicationSetKind}); err != nil {
		return fmt.Errorf("%w (install the ApplicationSet CRD of config/crd, or run with --applicationsets=false)", err)
	}
	r, err := applicationset.New(applicationset.Dependencies{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Evaluator: evaluator, Generator: gen,
		Recorder: mgr.GetEventRecorder(applicationset.ControllerName), Shard: shard,
	}, applicationset.Options{
		Namespace: o.namespace, Namespaces: o.appSetNamespaces, ImplicitDefaultProject: cfg.ImplicitDefaultProject,
		ListingMaxAge: o.listingMaxAge(), Concurrency: o.appSetConcurrency,
		SCMProvidersDisabled: !o.scmProviders, AllowedSCMProviders: o.allowedSCMProviders,
		ProgressiveSyncs: o.progressiveSyncs,
	})
	if err != nil {
		return err
	}
	return r.SetupWithManager(mgr)
}

// Sharding modes of --sharding.
const (
	shardingNone    = "none"
	shardingDynamic = "dynamic"
)

// checkSharding resolves the default of --sharding and refuses what
// cannot work together.
func (o *controllerOptions) checkSharding() error {
	if o.sharding == "" {
		o.sharding = shardingDynamic
		if o.leaderElect {
			o.sharding = shardingNone
		}
	}
	switch o.sharding {
	case shardingNone:
	case shardingDynamic:
		if o.leaderElect {
			return errors.New("--sharding dynamic and --leader-elect exclude each other: replicas either share the Applications or take turns")
		}
		if o.shardLeaseDuration < 3*time.Second {
			return fmt.Errorf("invalid --shard-lease-duration %s: at least 3s", o.shardLeaseDuration)
		}
	default:
		return fmt.Errorf("invalid --sharding %q: want none or dynamic", o.sharding)
	}
	return nil
}

// newShardMember returns this replica's shard membership, nil without
// sharding. Its Leases are in $POD_NAMESPACE (else --namespace), named
// after $POD_NAME (else the host name and process id).
func newShardMember(cfg *rest.Config, mgr manager.Manager, o controllerOptions) (*shard.Membership, error) {
	if o.sharding != shardingDynamic {
		return nil, nil
	}
	c, err := client.New(controllerRESTConfig(cfg), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	identity := os.Getenv("POD_NAME")
	if identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("name this replica: %w", err)
		}
		identity = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	return shard.New(c, shard.Options{
		Namespace: cmp.Or(os.Getenv("POD_NAMESPACE"), o.namespace), Group: o.namespace,
		Identity: identity, LeaseDuration: o.shardLeaseDuration,
	})
}

// runSharded runs the manager while member renews its Lease; the Lease
// outlives the manager's shutdown (in-flight operations end first) and is
// then released, so the others take this replica's Applications at once.
func runSharded(ctx context.Context, mgr manager.Manager, member *shard.Membership) error {
	renewCtx, stopRenewing := context.WithCancel(context.WithoutCancel(ctx))
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		_ = member.Run(renewCtx)
	}()
	runErr := mgr.Start(ctx)
	stopRenewing()
	<-renewed
	releaseCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := member.Release(releaseCtx); err != nil {
		runErr = errors.Join(runErr, err)
	}
	if runErr != nil {
		return fmt.Errorf("run controller: %w", runErr)
	}
	return nil
}

// controllerManifests is where the controller gets rendered manifests:
// the repo-servers of --repo-server (see repoClientOptions.client), or else
// a repository service in this process (each render still in a child
// process under the render limits).
func controllerManifests(cfg *rest.Config, mgr manager.Manager, o controllerOptions) (server.Server, error) {
	if len(o.repoServers) == 0 {
		git := server.NewGitMetrics() // the repo-server's, served here
		if err := git.Register(crmetrics.Registry); err != nil {
			return nil, err
		}
		svc, err := newRepoService(o.repoOptions, git)
		if err != nil {
			return nil, err
		}
		if err := mgr.Add(manager.RunnableFunc(svc.Run)); err != nil {
			return nil, fmt.Errorf("add checkout sweeper: %w", err)
		}
		return svc, nil
	}
	rc, tlsCerts, err := o.repoClientOptions.client(cfg, mgr.GetScheme(), o.namespace)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(tlsCerts); err != nil {
		return nil, fmt.Errorf("add repo-server certificate manager: %w", err)
	}
	if err := mgr.AddReadyzCheck("repo-server-tls", tlsCerts.ReadyChecker()); err != nil {
		return nil, fmt.Errorf("add ready check: %w", err)
	}
	return rc, nil
}

// newControllerManager builds the controller-runtime manager with health
// checks.
func newControllerManager(kc kubeconfig, o controllerOptions) (manager.Manager, error) {
	scheme, err := newUIScheme()
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(controllerRESTConfig(kc.rest), controllerManagerOptions(o, scheme))
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add ready check: %w", err)
	}
	return mgr, nil
}

// controllerRESTConfig returns a copy of cfg without client-side rate
// limiting unless cfg sets one: left unset, client-go limits every REST
// client to 5 requests/s (burst 10), one applied object per 200 ms. Like
// controller-runtime's config.GetConfig, it relies on the API server's
// priority and fairness instead.
func controllerRESTConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS = -1
	}
	return cfg
}

// controllerManagerOptions are the manager's options: cache limited to what
// the engine reads, metrics, health probes, pprof, leader election.
func controllerManagerOptions(o controllerOptions, scheme *runtime.Scheme) ctrl.Options {
	leaseNS := os.Getenv("POD_NAMESPACE")
	if leaseNS == "" {
		leaseNS = o.namespace
	}
	return ctrl.Options{
		Scheme:                        scheme,
		Cache:                         application.CacheOptions(o.namespace, o.appNamespaces, o.servedAppSetNamespaces()),
		Metrics:                       metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress:        o.healthAddr,
		PprofBindAddress:              o.pprofAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              "tollgate-controller",
		LeaderElectionNamespace:       leaseNS,
		LeaderElectionReleaseOnCancel: true,
	}
}
