package authority

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/policies"
)

// Evaluator judges inputs; *policies.Evaluator implements it.
type Evaluator interface {
	EvaluateAll(ctx context.Context, ins []policies.Input) ([]policies.Decision, error)
}

// Options configure an Authority.
type Options struct {
	// Apply configures the appliers (field manager, tracking, health).
	// Discovery is set by New.
	Apply apply.Options
	// Judging is how Applications and objects become policy inputs; the
	// sync gate uses the same (see Judging.Judge).
	Judging Judging
}

// Connection is what New builds an Authority from: a destination's REST
// config and the pieces the engine shares with its reads.
type Connection struct {
	Config *rest.Config
	// HTTPClient carries Config's transport; nil builds one.
	HTTPClient *http.Client
	Scheme     *runtime.Scheme
	Mapper     meta.RESTMapper
	Discovery  discovery.CachedDiscoveryInterface
}

// Authority is the one door out to one destination cluster. It holds the
// only writing clients of that cluster: the controller's, and one per
// service account it impersonates. It is safe for concurrent use.
type Authority struct {
	conn Connection
	opts Options
	// controller writes and reads with the controller's own rights.
	controller *apply.Applier

	mu sync.Mutex
	// as holds the appliers that impersonate a service account, by user.
	as map[string]*apply.Applier
}

// New returns the Authority of the destination conn reaches.
func New(conn Connection, opts Options) (*Authority, error) {
	if conn.Config == nil || conn.Mapper == nil || conn.Scheme == nil {
		return nil, errors.New("new authority: config, mapper and scheme are required")
	}
	if opts.Judging.Evaluator == nil {
		return nil, errors.New("new authority: evaluator is nil")
	}
	opts.Apply.Discovery = conn.Discovery
	a := &Authority{conn: conn, opts: opts, as: map[string]*apply.Applier{}}
	c, err := a.applier(conn.Config, conn.HTTPClient)
	if err != nil {
		return nil, err
	}
	a.controller = c
	return a, nil
}

// applier builds an applier writing through cfg.
func (a *Authority) applier(cfg *rest.Config, hc *http.Client) (*apply.Applier, error) {
	if hc == nil {
		var err error
		if hc, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, fmt.Errorf("new authority: create HTTP client: %w", err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: a.conn.Scheme, Mapper: a.conn.Mapper, HTTPClient: hc})
	if err != nil {
		return nil, fmt.Errorf("new authority: create client: %w", err)
	}
	return apply.New(c, a.opts.Apply)
}

// impersonating returns the applier acting as user, built once per user.
func (a *Authority) impersonating(user string) (*apply.Applier, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ap, ok := a.as[user]; ok {
		return ap, nil
	}
	cfg := rest.CopyConfig(a.conn.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	ap, err := a.applier(cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("impersonate %s: %w", user, err)
	}
	a.as[user] = ap
	return ap, nil
}

// Reader reads the destination with the controller's rights.
func (a *Authority) Reader() client.Reader { return a.controller.Client() }

// ListOwned lists the live objects the application instance tracks, as
// apply.Applier.ListOwned, with the controller's rights. Listing writes
// nothing; what is done with the result passes a Door.
func (a *Authority) ListOwned(ctx context.Context, instance string, gvks []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	return a.controller.ListOwned(ctx, instance, gvks)
}

// Live reads the objects refs name, as apply.Applier.Live, with the
// controller's rights.
func (a *Authority) Live(ctx context.Context, refs []apply.Ref) ([]*unstructured.Unstructured, error) {
	return a.controller.Live(ctx, refs)
}

// Impersonation says whether and how a Door's writes impersonate.
type Impersonation struct {
	// Enabled is argocd-cm's application.sync.impersonation.enabled.
	Enabled bool
	// Server is the destination's API server URL, matched against
	// destinationServiceAccounts (a destination by name is resolved first).
	Server string
}

// For returns the Door of app, judged against project (nil when the
// AppProject does not exist: nothing is permitted). With impersonation
// enabled, the Door's writes act as the service account of project's
// destinationServiceAccounts for the destination; when none matches, every
// write fails with Argo CD's message and nothing is written. Nothing is
// converted or evaluated until the Door judges or writes: an idle resync
// that does neither costs nothing here.
func (a *Authority) For(app *v1alpha1.Application, project *v1alpha1.AppProject, imp Impersonation) *Door {
	d := &Door{a: a, judge: a.opts.Judging.bind(app, project, a.conn.Mapper), writer: a.controller}
	if imp.Enabled {
		user, err := ServiceAccountFor(project, imp.Server, app.Spec.Destination.Name, app.Spec.Destination.Namespace)
		if err == nil {
			d.writer, err = a.impersonating(user)
		}
		if err != nil {
			d.writer, d.writerErr = nil, err
		}
	}
	return d
}
