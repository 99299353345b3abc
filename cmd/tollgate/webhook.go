package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/certs"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/webhook"
	"github.com/tollgate-dev/tollgate/webhook/audit"
)

// webhookPath is where the API server calls the webhook
// (config/webhook/validating_webhook_configuration.yaml).
const webhookPath = "/validate"

// webhookOptions are the flags of `tollgate webhook`.
type webhookOptions struct {
	kubeconfig        string
	port              int
	certDir           string
	configFile        string
	metricsAddr       string
	healthAddr        string
	namespace         string
	serviceName       string
	webhookConfigName string
	auditInterval     time.Duration
	auditChunkSize    int64
	// wrap, when set, wraps the handler's decisions (tollgate dev tells
	// denials in its story).
	wrap func(webhook.Decider) webhook.Decider
}

func newWebhookCmd() *cobra.Command {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = "tollgate-system"
	}
	opts := &webhookOptions{
		port:              9443,
		metricsAddr:       ":8080",
		healthAddr:        ":8081",
		namespace:         ns,
		serviceName:       "tollgate-webhook",
		webhookConfigName: "tollgate",
		auditInterval:     audit.DefaultInterval,
		auditChunkSize:    audit.DefaultChunkSize,
	}
	cmd := &cobra.Command{
		Use:   "webhook",
		Short: "Serve the validating admission webhook",
		Long: `Serve the validating admission webhook at /validate over HTTPS.

The API server sends what a rule can judge (pod-bearing kinds, Secrets,
SealedSecrets, ExternalSecrets, kubectl debug containers, Applications,
AppProjects and objects an Application tracks); each is judged with the
built-in rules, with its Application's AppProject, read from an informer
cache of Applications and AppProjects. Deny violations deny the request, warn
violations come back as warnings (kubectl prints them), and in audit mode
(--config: mode: audit) nothing is denied.

Without --cert-dir the webhook keeps its own CA and serving certificate in
the Secret tollgate-webhook-tls of --namespace, rotates them and injects the
CA into the caBundle of the ValidatingWebhookConfiguration
--webhook-config-name. With --cert-dir it serves tls.crt and tls.key from
that directory (e.g. cert-manager's Secret) and reloads them when they change.

/readyz passes once the certificate is loaded, the caches are synced and the
server answers; metrics are served on --metrics-addr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(logr.FromContextOrDiscard(cmd.Context()))
			return runWebhook(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)")
	f.IntVar(&opts.port, "port", opts.port, "HTTPS port of the webhook server")
	f.StringVar(&opts.certDir, "cert-dir", "", "directory with tls.crt and tls.key to serve (default: self-managed certificate)")
	f.StringVar(&opts.configFile, "config", "", "webhook configuration file (YAML: mode, exempt users, policy configuration)")
	f.StringVar(&opts.metricsAddr, "metrics-addr", opts.metricsAddr, `address of the Prometheus metrics endpoint ("0" disables it)`)
	f.StringVar(&opts.healthAddr, "health-addr", opts.healthAddr, "address of the /healthz and /readyz endpoints")
	f.StringVar(&opts.namespace, "namespace", opts.namespace, "namespace the webhook runs in, always exempt ($POD_NAMESPACE when set)")
	f.StringVar(&opts.serviceName, "service-name", opts.serviceName, "Service the API server calls the webhook through (serving certificate names)")
	f.StringVar(&opts.webhookConfigName, "webhook-config-name", opts.webhookConfigName, "ValidatingWebhookConfiguration whose caBundle is kept (self-managed certificate only) and whose namespaceSelectors the audit honours")
	f.DurationVar(&opts.auditInterval, "audit-interval", opts.auditInterval, "how often one replica (the holder of Lease "+auditLeaseName+") audits what the cluster stores and writes PolicyReports; 0 turns the audit off")
	f.Int64Var(&opts.auditChunkSize, "audit-chunk-size", opts.auditChunkSize, "objects per list page of the audit (bounds its memory)")
	return cmd
}

// auditLeaseName is the Lease of the webhook replica that runs the audit.
const auditLeaseName = "tollgate-audit"

// addAuditLoop adds the audit loop to mgr: it runs on the replica holding
// the audit Lease once the caches have synced, and writes PolicyReports.
func addAuditLoop(mgr manager.Manager, restCfg *rest.Config, handler *webhook.Handler, opts *webhookOptions) error {
	metrics := audit.NewMetrics()
	if err := metrics.Register(ctrlmetrics.Registry); err != nil {
		return err
	}
	a, err := newAuditor(restCfg, handler, audit.Options{
		WebhookConfigName: opts.webhookConfigName, ChunkSize: opts.auditChunkSize,
		WriteReports: true, Metrics: metrics,
	})
	if err != nil {
		return err
	}
	host, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("audit Lease identity: %w", err)
	}
	lock, err := resourcelock.NewFromKubeconfig(resourcelock.LeasesResourceLock, opts.namespace, auditLeaseName,
		resourcelock.ResourceLockConfig{Identity: host + "_" + string(uuid.NewUUID())}, restCfg, 10*time.Second)
	if err != nil {
		return fmt.Errorf("audit Lease: %w", err)
	}
	loop := &audit.Loop{Auditor: a, Interval: opts.auditInterval, Lock: lock, Ready: mgr.GetCache().WaitForCacheSync, Log: mgr.GetLogger().WithName("audit")}
	if err := mgr.Add(loop); err != nil {
		return fmt.Errorf("add audit loop: %w", err)
	}
	return nil
}

// certSource serves and reports the webhook's certificate.
type certSource interface {
	manager.Runnable
	GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error)
	ReadyChecker() healthz.Checker
}

// runWebhook loads the configuration and policies, builds the manager and
// serves until ctx is done.
func runWebhook(ctx context.Context, opts *webhookOptions) error {
	log := logr.FromContextOrDiscard(ctx)

	if opts.port < 1 || opts.port > 65535 {
		return usageError(fmt.Errorf("--port %d: want 1-65535", opts.port))
	}
	if opts.auditInterval < 0 {
		return usageError(fmt.Errorf("--audit-interval %s: want 0 (off) or more", opts.auditInterval))
	}
	if opts.auditInterval > 0 && opts.auditChunkSize < 1 {
		return usageError(fmt.Errorf("--audit-chunk-size %d: want at least 1", opts.auditChunkSize))
	}
	cfg, eval, err := loadWebhookPolicies(ctx, opts.configFile, opts.namespace)
	if err != nil {
		return usageError(err)
	}
	kc, err := loadKubeconfig(opts.kubeconfig)
	if err != nil {
		return usageError(err)
	}
	restCfg := rest.CopyConfig(kc.rest)
	restCfg.UserAgent = "tollgate-webhook"

	certSrc, err := newCertSource(restCfg, opts)
	if err != nil {
		return err
	}
	mgr, err := newWebhookManager(restCfg, opts, cfg, certSrc)
	if err != nil {
		return err
	}
	if err := mgr.Add(certSrc); err != nil {
		return fmt.Errorf("add certificate source: %w", err)
	}
	if err := watchProjects(ctx, mgr.GetCache()); err != nil {
		return err
	}

	metrics := webhook.NewMetrics()
	if err := metrics.Register(ctrlmetrics.Registry); err != nil {
		return err
	}
	handler, err := webhook.NewHandler(webhook.Options{
		Config:    cfg,
		Evaluator: eval,
		Reader:    mgr.GetCache(),
		APIReader: mgr.GetAPIReader(),
		Namespace: opts.namespace,
		Metrics:   metrics,
	})
	if err != nil {
		return usageError(err)
	}
	var h webhook.Decider = handler
	if opts.wrap != nil {
		h = opts.wrap(h)
	}
	mgr.GetWebhookServer().Register(webhookPath, webhook.NewHTTPHandler(h, log.WithName("admission")))
	if opts.auditInterval > 0 {
		if err := addAuditLoop(mgr, restCfg, handler, opts); err != nil {
			return err
		}
	}

	if err := addHealthChecks(mgr, certSrc); err != nil {
		return err
	}
	log.Info("starting webhook", "port", opts.port, "namespace", opts.namespace,
		"argocdNamespace", argoCDNamespace(cfg), "mode", cfg.Mode, "selfManagedCertificate", opts.certDir == "")
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run webhook: %w", err)
	}
	return nil
}

// loadWebhookPolicies loads the webhook configuration file (the defaults
// without one), its tollgateNamespace defaulting to namespace, and compiles
// its policies, as `tollgate webhook` does.
func loadWebhookPolicies(ctx context.Context, configFile, namespace string) (webhook.Config, *policies.Evaluator, error) {
	cfg, err := webhook.LoadConfigWith(configFile, policies.ConfigOverrides{FallbackTollgateNamespace: namespace})
	if err != nil {
		return cfg, nil, err
	}
	popts := policies.DefaultOptions()
	popts.Config = cfg.Config
	eval, err := policies.New(ctx, popts)
	if err != nil {
		return cfg, nil, fmt.Errorf("load policies: %w", err)
	}
	return cfg, eval, nil
}

// webhookCacheOptions are the options of the webhook's cache of typed
// Applications (every namespace, for applications in any namespace) and
// AppProjects (the Argo CD namespace only), without managed fields; scheme
// registers v1alpha1 (newScheme).
func webhookCacheOptions(cfg webhook.Config, scheme *runtime.Scheme) cache.Options {
	return cache.Options{
		Scheme:           scheme,
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&v1alpha1.AppProject{}: {Namespaces: map[string]cache.Config{argoCDNamespace(cfg): {}}},
		},
	}
}

// watchProjects indexes Applications by project and starts the informers
// of Applications and AppProjects of c, before c starts.
func watchProjects(ctx context.Context, c cache.Cache) error {
	if err := webhook.IndexApplications(ctx, c); err != nil {
		return explainNoCRD(err)
	}
	if _, err := c.GetInformer(ctx, &v1alpha1.AppProject{}); err != nil {
		return explainNoCRD(fmt.Errorf("watch AppProjects: %w", err))
	}
	return nil
}

// newCertSource returns the file watcher of --cert-dir, or the self-managed
// certificate manager, which reads and writes through a direct client (its
// Secret must not need a cache of every Secret).
func newCertSource(restCfg *rest.Config, opts *webhookOptions) (certSource, error) {
	if opts.certDir != "" {
		w, err := certs.NewFileWatcher(filepath.Join(opts.certDir, "tls.crt"), filepath.Join(opts.certDir, "tls.key"))
		if err != nil {
			return nil, usageError(fmt.Errorf("--cert-dir %s: %w", opts.certDir, err))
		}
		return w, nil
	}
	c, err := client.New(restCfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	return certs.NewManager(c, certs.Options{
		Namespace:         opts.namespace,
		ServiceName:       opts.serviceName,
		WebhookConfigName: opts.webhookConfigName,
	}), nil
}

// newWebhookManager builds the controller-runtime manager: the webhook
// server with the certificate source, metrics, health probes and the cache
// of webhookCacheOptions.
func newWebhookManager(restCfg *rest.Config, opts *webhookOptions, cfg webhook.Config, certSrc certSource) (manager.Manager, error) {
	server := crwebhook.NewServer(crwebhook.Options{
		Port: opts.port,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.GetCertificate = certSrc.GetCertificate
			c.MinVersion = tls.VersionTLS12
			// HTTP/2 stays off: the API server speaks HTTP/1.1 to webhooks
			// and HTTP/2 adds attack surface (rapid reset) for nothing.
			c.NextProtos = []string{"http/1.1"}
		}},
	})
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(restCfg, manager.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: opts.metricsAddr},
		HealthProbeBindAddress: opts.healthAddr,
		WebhookServer:          server,
		Cache:                  webhookCacheOptions(cfg, scheme),
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	return mgr, nil
}

// addHealthChecks wires /healthz and /readyz: ready once the certificate is
// loaded, the caches have synced and the webhook server answers TLS.
func addHealthChecks(mgr manager.Manager, certSrc certSource) error {
	synced := func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("caches of Applications and AppProjects not synced yet")
		}
		return nil
	}
	for _, c := range []struct {
		name  string
		check healthz.Checker
		ready bool
	}{
		{"ping", healthz.Ping, false},
		{"certificate", certSrc.ReadyChecker(), true},
		{"cache", synced, true},
		{"webhook", mgr.GetWebhookServer().StartedChecker(), true},
	} {
		add := mgr.AddHealthzCheck
		if c.ready {
			add = mgr.AddReadyzCheck
		}
		if err := add(c.name, c.check); err != nil {
			return fmt.Errorf("add health check %s: %w", c.name, err)
		}
	}
	return nil
}

// argoCDNamespace is the configured Argo CD namespace or the default.
func argoCDNamespace(cfg webhook.Config) string {
	if cfg.ArgoCDNamespace == "" {
		return policies.DefaultArgoCDNamespace
	}
	return cfg.ArgoCDNamespace
}

// explainNoCRD adds a hint when Argo CD's CRDs are not installed.
func explainNoCRD(err error) error {
	if meta.IsNoMatchError(err) {
		return fmt.Errorf("%w (install the Application and AppProject CRDs: config/crd)", err)
	}
	return err
}
