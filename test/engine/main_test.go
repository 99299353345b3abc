package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
	"github.com/tollgate-dev/tollgate/engine/controller/applicationset"
	"github.com/tollgate-dev/tollgate/engine/controller/notification"
	"github.com/tollgate-dev/tollgate/engine/metrics"
	"github.com/tollgate-dev/tollgate/engine/notify"
	"github.com/tollgate-dev/tollgate/engine/push"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/reposerver/chart"
	"github.com/tollgate-dev/tollgate/reposerver/server"
	"github.com/tollgate-dev/tollgate/reposerver/source"
	"github.com/tollgate-dev/tollgate/test/envtest"
)

// argoNS is the control-plane namespace of the engine under test. It
// fetches http repositories (the test Git server's) as with
// --allow-insecure-repos.
const argoNS = "argocd"

// strictNS is the control-plane namespace of a second engine with the
// controller's default repository options: https and ssh only, unless a
// repository Secret says insecure.
const strictNS = "argocd-strict"

// trackingNS is the control-plane namespace of a third engine that tracks
// with annotation+label (the others with the default, annotation), for the
// adoption of objects an Argo CD with label tracking left
// (TestTrackingAdoptsLabelTracked).
const trackingNS = "argocd-tracking"

// impersonationNS is the control-plane namespace of a fourth engine whose
// argocd-cm turns sync impersonation on (TestImpersonation).
const impersonationNS = "argocd-impersonation"

// tenantAppNamespaces are the other namespaces whose Applications the
// engine of strictNS reconciles (--application-namespaces).
const tenantAppNamespaces = "tenant-apps-*"

// appSetNS is a namespace other than argoNS whose ApplicationSets the
// engine under test runs (--applicationset-namespaces).
const appSetNS = "appset-tenants"

// webhookSecret is the Git push webhook secret of the engine under test.
const webhookSecret = "push-s3cret"

// resync is short so that drift and outages show within a test's timeout.
const resync = 2 * time.Second

// strictResync is the strict engine's resync: long, so that what it does
// within a test was asked for by an event (TestSelfHealFromWatches).
const strictResync = 10 * time.Minute

var (
	env *envtest.Env
	// engineLog is the file the engines log to (see startEngine).
	engineLog string
	// applies counts the engine's server-side apply requests (dry runs
	// included) per namespace.
	applies = &applyCounter{byNamespace: map[string]int{}}
	// webhookURL is the Git push webhook of the engine under test.
	webhookURL string
	// metricsURL is the engine under test's /metrics: its collectors,
	// registered as tollgate controller registers them.
	metricsURL string
)

// TestMain starts one control plane and one controller manager running
// the engine for the whole package. Run as `<test binary> render-worker`,
// it is the render sandbox's child instead, as bin/tollgate is the
// controller's.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == cmpServer {
		if err := serveCMP(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == renderWorker {
		if err := server.Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(run(m))
}

// pluginSockets is the directory of the plugin sidecars' sockets
// (startPluginSidecars).
var pluginSockets string

// renderWorker is the argument that makes the test binary a render child.
const renderWorker = "render-worker"

// Limits of the engine under test, low so that the limit tests are quick:
// the render sandbox's time and memory, and each fetch's time and size.
const (
	renderTimeout = 10 * time.Second
	renderMemory  = 512 << 20
	fetchTimeout  = 15 * time.Second
	maxFetchBytes = 16 << 20
)

func run(m *testing.M) int {
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		fmt.Fprintln(os.Stderr, "build scheme:", err)
		return 1
	}
	e, err := envtest.Start(envtest.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	env = e
	defer func() {
		if err := e.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "envtest: stop:", err)
		}
	}()
	defer removeCLI()
	logFile, err := os.CreateTemp("", "tollgate-engine-test-*.log")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = logFile.Close()
	engineLog = logFile.Name()
	defer func() { _ = os.Remove(engineLog) }()
	sockets, stopPlugins, err := startPluginSidecars()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start plugin sidecars:", err)
		return 1
	}
	defer stopPlugins()
	pluginSockets = sockets
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, err := startEngine(ctx, scheme, argoNS, source.Options{AllowInsecure: true, FetchTimeout: fetchTimeout, MaxFetchBytes: maxFetchBytes})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start engine:", err)
		return 1
	}
	strictDone, err := startEngine(ctx, scheme, strictNS, source.DefaultOptions())
	if err != nil {
		fmt.Fprintln(os.Stderr, "start strict engine:", err)
		return 1
	}
	trackingDone, err := startEngine(ctx, scheme, trackingNS, source.Options{AllowInsecure: true, FetchTimeout: fetchTimeout, MaxFetchBytes: maxFetchBytes})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start tracking engine:", err)
		return 1
	}
	impersonationDone, err := startEngine(ctx, scheme, impersonationNS, source.Options{AllowInsecure: true, FetchTimeout: fetchTimeout, MaxFetchBytes: maxFetchBytes})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start impersonation engine:", err)
		return 1
	}
	code := m.Run()
	cancel()
	for _, d := range []<-chan struct{}{done, strictDone, trackingDone, impersonationDone} {
		select {
		case <-d:
		case <-time.After(30 * time.Second):
			fmt.Fprintln(os.Stderr, "engine did not stop within 30s")
		}
	}
	return code
}

// startEngine creates the control-plane namespace ns and runs the engine
// for it in a manager, as `tollgate controller` does, until ctx ends. The
// engine of argoNS also serves the Git push webhook at webhookURL.
func startEngine(ctx context.Context, scheme *runtime.Scheme, ns string, sopts source.Options) (<-chan struct{}, error) {
	// The engines log to stderr with TOLLGATE_TEST_LOG, else at V(0) to
	// engineLog, which a failed test prints the lines of its Application
	// from (logsOf).
	zc := zap.NewProductionConfig()
	zc.OutputPaths, zc.ErrorOutputPaths, zc.Sampling = []string{engineLog}, []string{engineLog}, nil
	if os.Getenv("TOLLGATE_TEST_LOG") != "" {
		zc = zap.NewDevelopmentConfig()
	}
	z, err := zc.Build()
	if err != nil {
		return nil, err
	}
	log := zapr.NewLogger(z)
	if ns == argoNS {
		ctrl.SetLogger(log)
	}
	log = log.WithValues("controlPlane", ns)
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := env.Client.Create(ctx, nsObj); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", ns, err)
	}
	// The engine under test runs ApplicationSets too, of argoNS and
	// appSetNS.
	var appSetNamespaces, appNamespaces []string
	if ns == strictNS {
		appNamespaces = []string{tenantAppNamespaces}
	}
	if ns == argoNS {
		appSetNamespaces = []string{argoNS, appSetNS}
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appSetNS}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create namespace %s: %w", appSetNS, err)
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(applies.wrap)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Cache:   application.CacheOptions(ns, appNamespaces, appSetNamespaces),
		Metrics: metricsserver.Options{BindAddress: "0"},
		Logger:  log,
		// Four engines run in this process, each with a controller of
		// the same name.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	popts := policies.DefaultOptions()
	popts.Config.ArgoCDNamespace = ns
	// The operator's exemptions: list, for the operator exemption of
	// TestBypassLegitimatePaths.
	popts.Config.Exemptions = []policies.Exemption{{
		Rules: []string{"project-resource-denied"}, Project: operatorExemptProjects,
		Group: "rbac.authorization.k8s.io", Kind: "ClusterRole*",
		Reason: "the operator lets one project of the tests render RBAC kinds",
	}}
	evaluator, err := policies.New(ctx, popts)
	if err != nil {
		return nil, err
	}
	repoDir, err := os.MkdirTemp("", "tollgate-engine-test-")
	if err != nil {
		return nil, err
	}
	sources, err := source.NewCache(repoDir, sopts)
	if err != nil {
		return nil, err
	}
	opts := application.DefaultOptions()
	opts.Namespace, opts.Resync, opts.SyncTimeout = ns, resync, 90*time.Second
	opts.ApplicationNamespaces = appNamespaces
	opts.StatusProcessors, opts.OperationProcessors = 4, 4
	switch ns {
	case strictNS:
		opts.Resync = strictResync
	case trackingNS:
		opts.TrackingMethod = v1alpha1.TrackingMethodAnnotationAndLabel
	}
	m := metrics.NewMetrics()
	// Renders run in child processes under limits, as in the controller.
	lim := server.DefaultLimits()
	lim.Timeout, lim.MemoryBytes = renderTimeout, renderMemory
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// The tests' chart servers listen on loopback, which the product
	// refuses.
	charts, err := chart.New(chart.Options{Dir: filepath.Join(repoDir, "charts"), AllowInsecure: sopts.AllowInsecure,
		AllowLoopback: func(netip.AddrPort) bool { return true }})
	if err != nil {
		return nil, err
	}
	ropts := server.DefaultOptions()
	ropts.Renderer = &server.Runner{Path: exe, Args: []string{renderWorker}, Limits: lim}
	ropts.Charts = charts
	ropts.Plugins = server.PluginSockets(pluginSockets)
	svc, err := server.New(sources, ropts)
	if err != nil {
		return nil, err
	}
	// The engine under test reaches its repository service over HTTPS, as
	// with tollgate repo-server; the strict one runs it in-process.
	var manifests server.Server = svc
	if ns == argoNS {
		if manifests, err = serveRepoServer(ctx, svc, log); err != nil {
			return nil, err
		}
	}
	r, err := application.New(application.Dependencies{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Config: mgr.GetConfig(), Scheme: scheme,
		Evaluator: evaluator, Manifests: manifests, Recorder: mgr.GetEventRecorder(application.ControllerName), Metrics: m,
	}, opts)
	if err != nil {
		return nil, err
	}
	if ns == impersonationNS {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: ns},
			Data: map[string]string{"application.sync.impersonation.enabled": "true"}}
		if err := env.Client.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create argocd-cm: %w", err)
		}
	}
	// argocd-cm of the control-plane namespace, read live as the
	// controller reads it.
	if err := application.WatchArgoCDConfigMap(ctx, cfg, ns, r.ApplyArgoCDConfigMap); err != nil {
		return nil, err
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		return nil, err
	}
	if appSetNamespaces != nil {
		sets, err := applicationset.New(applicationset.Dependencies{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Evaluator: evaluator, Generator: manifests,
			Recorder: mgr.GetEventRecorder(applicationset.ControllerName),
		}, applicationset.Options{Namespace: ns, Namespaces: appSetNamespaces[1:], ListingMaxAge: opts.ListingMaxAge, ProgressiveSyncs: true})
		if err != nil {
			return nil, err
		}
		if err := sets.SetupWithManager(mgr); err != nil {
			return nil, err
		}
		// Notifications, retried quickly so that a receiver's outage
		// shows within a test.
		dopts := notify.DispatcherOptions{Workers: 2, Attempts: 30, MinBackoff: 200 * time.Millisecond, MaxBackoff: 2 * time.Second}
		n := notification.New(mgr.GetClient(), ns, nil, m, dopts, log.WithName("notifications"))
		n.RepoServer = manifests
		if err := n.SetupWithManager(ctx, mgr, cfg); err != nil {
			return nil, err
		}
	}
	closeWebhook, closeMetrics := func() {}, func() {}
	if ns == argoNS {
		reg := prometheus.NewRegistry()
		if err := metrics.RegisterAll(reg, append(m.Collectors(), r.Collectors(ctx)...)...); err != nil {
			return nil, err
		}
		ms := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		metricsURL, closeMetrics = ms.URL+"/metrics", ms.Close
		h, err := push.NewHandler(mgr.GetClient(), push.Options{Namespace: ns, ApplicationSetNamespaces: appSetNamespaces, Secret: webhookSecret}, m, log)
		if err != nil {
			return nil, err
		}
		srv := httptest.NewServer(h)
		webhookURL, closeWebhook = srv.URL+push.Path, srv.Close
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer closeWebhook()
		defer closeMetrics()
		defer os.RemoveAll(repoDir)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return done, nil
}

// applyCounter counts server-side apply requests (PATCH with the apply
// content type, dry runs included) by the namespace in their path.
type applyCounter struct {
	mu          sync.Mutex
	byNamespace map[string]int
}

func (c *applyCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPatch && req.Header.Get("Content-Type") == string(types.ApplyPatchType) {
			ns := ""
			if _, rest, ok := strings.Cut(req.URL.Path, "/namespaces/"); ok {
				ns, _, _ = strings.Cut(rest, "/")
			}
			c.mu.Lock()
			c.byNamespace[ns]++
			c.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// count returns the apply requests made so far into namespace ns.
func (c *applyCounter) count(ns string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byNamespace[ns]
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
