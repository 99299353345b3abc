// Package ui serves tollgate's web UI: the Applications, their resource
// trees, operations, history, diffs and the gate's verdicts, the
// AppProjects' limits in words and the audit's PolicyReports, with the
// actions Sync, Refresh and Rollback.
//
// There is no user database. Every request acts as the signed-in person
// (see Auth): their pasted bearer token, or the identity an authenticating
// proxy vouches for through Kubernetes impersonation, so Kubernetes RBAC
// decides what they read and do; the API server's 403 becomes the page's.
// The UI's own identity only watches Applications (to push live updates,
// each one sent to a browser only if SelfSubjectAccessReview says its
// person may get that Application) and, for diffs, reads the repository
// credentials of the control-plane namespace, as the controller does.
//
// Pages are html/template, server-rendered; a little JavaScript
// (static/ui.js) listens to /events (server-sent events) and re-fetches the
// page's main part when something it shows changed. Actions are forms
// posted with a CSRF token and call internal/appops, the very calls
// `tollgate app` makes.
package ui

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
	"github.com/tollgate-dev/tollgate/reposerver"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure a Server.
type Options struct {
	// Config is the UI's own identity: it watches Applications, reads the
	// repository credentials for diffs, checks tokens and, with a proxy,
	// impersonates the people it vouches for.
	Config *rest.Config
	// Scheme knows the built-in types, v1alpha1 and wgpolicyk8s v1alpha2.
	Scheme *runtime.Scheme
	// Cache watches Applications for live updates; it must be started by
	// the caller (a manager's cache, or one of its own).
	Cache cache.Cache
	// Namespace is the control-plane namespace (argocd): its Applications
	// and AppProjects are shown.
	Namespace string
	// ApplicationNamespaces are further namespaces (names, globs or
	// /regular expressions/) whose Applications are shown (Argo CD's
	// application.namespaces).
	ApplicationNamespaces []string
	// Repos renders Applications for diffs and reads the commits of their
	// history (a repo-server, or a repository service in process); nil:
	// neither.
	Repos Repos
	// TrackingMethod is the controller's, used by diffs.
	TrackingMethod v1alpha1.TrackingMethod
	// Evaluator judges what a diff would read against the Application's
	// project, as the controller's door does (application.Diff); required with
	// Repos. Built once: the controller's, or one from the same policy
	// configuration.
	Evaluator application.Evaluator
	// ImplicitDefaultProject is the policy configuration's: a missing
	// "default" AppProject permits everything, for diffs as for syncs.
	ImplicitDefaultProject bool
	// Auth says how people sign in.
	Auth Auth
	// Log receives one line per failed request.
	Log logr.Logger
}

// Repos is what the UI asks of repo-servers: *server.Service and
// *reposerver.Client are.
type Repos interface {
	reposerver.Generator
	reposerver.CommitReader
}

// Server is the web UI: an http.Handler.
type Server struct {
	opts    Options
	own     client.Client
	mapper  meta.RESTMapper
	pages   pageSet
	mux     *http.ServeMux
	clients *clientCache
	access  *accessCache
	hub     *hub
	auth    *authenticator
	// histories remembers the commits of each Application's history.
	histories historyCache
}

// New builds the Server; Start must run for live updates.
func New(ctx context.Context, opts Options) (*Server, error) {
	if err := opts.Auth.Check(); err != nil {
		return nil, err
	}
	if opts.Config == nil || opts.Scheme == nil || opts.Cache == nil {
		return nil, errors.New("ui: Config, Scheme and Cache are required")
	}
	if opts.Repos != nil && opts.Evaluator == nil {
		return nil, errors.New("ui: Evaluator is required with Repos: diffs are judged against the project")
	}
	httpClient, err := rest.HTTPClientFor(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("ui: http client: %w", err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(opts.Config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("ui: rest mapper: %w", err)
	}
	own, err := client.New(opts.Config, client.Options{Scheme: opts.Scheme, Mapper: mapper, HTTPClient: httpClient})
	if err != nil {
		return nil, fmt.Errorf("ui: client: %w", err)
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts: opts, own: own, mapper: mapper, pages: pages, mux: http.NewServeMux(),
		clients:   newClientCache(opts.Config, opts.Scheme, mapper),
		access:    newAccessCache(accessTTL),
		hub:       newHub(),
		histories: historyCache{m: map[types.NamespacedName]cachedHistory{}},
	}
	s.auth = newAuthenticator(opts.Auth, opts.Config)
	if opts.Auth.InsecureLocal {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		s.auth.localUser = cmp.Or(whoAmI(ctx, opts.Config), "(the UI's kubeconfig)")
	}
	s.routes()
	// The people's Differs hold destination clients until the UI stops.
	context.AfterFunc(ctx, s.clients.closeAll)
	return s, nil
}

func (s *Server) routes() {
	static, _ := fs.Sub(staticFS, "static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	s.mux.HandleFunc("GET /login", s.loginPage)
	s.mux.HandleFunc("POST /login", s.login)
	s.mux.HandleFunc("POST /logout", s.signedIn(s.logout))
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/applications", http.StatusSeeOther)
	})
	s.mux.HandleFunc("GET /applications", s.signedIn(s.listPage))
	s.mux.HandleFunc("GET /applications/{namespace}/{name}", s.signedIn(s.appPage))
	s.mux.HandleFunc("GET /applications/{namespace}/{name}/diff", s.signedIn(s.diffPage))
	s.mux.HandleFunc("GET /applications/{namespace}/{name}/resource", s.signedIn(s.resourcePage))
	s.mux.HandleFunc("POST /applications/{namespace}/{name}/{action}", s.signedIn(s.act))
	s.mux.HandleFunc("GET /projects/{namespace}/{name}", s.signedIn(s.projectPage))
	s.mux.HandleFunc("GET /audit", s.signedIn(s.auditPage))
	s.mux.HandleFunc("GET /events", s.signedIn(s.events))
}

// ServeHTTP serves the UI with its security headers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	s.mux.ServeHTTP(w, r)
}

// Start feeds live updates from the Application informer until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	if err := s.hub.watch(ctx, s.opts.Cache); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// NeedLeaderElection is false: every replica serves the UI.
func (s *Server) NeedLeaderElection() bool { return false }

// Serve serves h on ln until ctx ends, then shuts down within 5 s. The
// server's timeouts bound slow clients; /events streams are long-lived by
// design, so there is no write timeout.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	}
}
