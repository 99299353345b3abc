package application

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
)

// Defaults of Options.
const (
	DefaultNamespace    = policies.DefaultArgoCDNamespace
	DefaultResync       = 3 * time.Minute
	DefaultJitter       = 0.1
	DefaultFieldManager = "tollgate"
	// DefaultReconcileTimeout bounds one reconcile, a sync included.
	DefaultReconcileTimeout = time.Hour
	DefaultCompareMaxAge    = time.Hour
	DefaultHistoryLimit     = 10
	// DefaultStatusProcessors and DefaultOperationProcessors are the
	// Applications compared, and the operations run, at once. Operations
	// spend most of their time waiting for health, and are as many as
	// Argo CD's default.
	DefaultStatusProcessors    = 4
	DefaultOperationProcessors = 10
)

// Options configures a Reconciler. Build them with DefaultOptions and
// override fields; a zero field means its default.
type Options struct {
	// Namespace is the control-plane namespace: Applications, AppProjects
	// and Argo CD's repository and cluster Secrets live there.
	Namespace string
	// ApplicationNamespaces are the other namespaces whose Applications are
	// reconciled (Argo CD's application.namespaces): names, globs or
	// /regular expressions/. An Application there may use only a project
	// whose spec.sourceNamespaces lists its namespace.
	ApplicationNamespaces []string
	// Resync is how often an Application is compared again without any
	// event; each requeue adds ±Jitter of it.
	Resync time.Duration
	// Jitter is the fraction of Resync added or removed at random.
	Jitter float64
	// FieldManager owns the fields the engine applies.
	FieldManager string
	// TrackingMethod is how applied objects are marked as an
	// Application's and recognised as its own, Argo CD's
	// application.resourceTrackingMethod: annotation (the default, as in
	// Argo CD 3), label or annotation+label. With label or
	// annotation+label, objects that carry only an Application's instance
	// label (as an Argo CD with label tracking left them) are its own, and
	// the next sync gives them this method's metadata.
	TrackingMethod v1alpha1.TrackingMethod
	// SyncTimeout bounds one operation from its start (retries included),
	// as Argo CD's --sync-timeout: passed, the operation is terminated.
	// Zero means no bound (Argo CD's default); ReconcileTimeout still
	// bounds one reconcile.
	SyncTimeout time.Duration
	// ReconcileTimeout bounds one reconcile of one Application: fetch,
	// render, gate, comparison and a sync's waves. Passed, the reconcile
	// stops, records why and is retried with backoff.
	ReconcileTimeout time.Duration
	// CompareMaxAge is how long a comparison may be reused by an idle
	// resync before a full server-side comparison is forced.
	CompareMaxAge time.Duration
	// ListingMaxAge is how old a repository's reference listing may be for
	// a periodic reconcile to resolve branch and tag names from it, so that
	// the Applications of one repository cost its server one listing per
	// period instead of one each. A refresh request or an operation always
	// lists again. Zero means a tenth of Resync; negative, no reuse.
	ListingMaxAge time.Duration
	// StatusProcessors is the number of Applications compared at once
	// (Argo CD's --status-processors). A comparison that finds a sync due
	// hands it to the operation processors and goes on.
	StatusProcessors int
	// OperationProcessors is the number of operations (syncs, with their
	// waves, hooks and waits for health) run at once (Argo CD's
	// --operation-processors). An Application is never compared and synced
	// at the same time.
	OperationProcessors int
	// ImplicitDefaultProject treats a missing "default" AppProject as Argo
	// CD's allow-all default (policies.Config.ImplicitDefaultProject);
	// otherwise its Applications are project-not-found.
	ImplicitDefaultProject bool
	// Now returns the current time; default time.Now.
	Now func() time.Time
	// Float64 returns a random number in [0, 1) for requeue jitter;
	// default math/rand/v2.
	Float64 func() float64
}

// DefaultOptions returns the options of a stock controller.
func DefaultOptions() Options {
	return Options{
		Namespace:           DefaultNamespace,
		Resync:              DefaultResync,
		Jitter:              DefaultJitter,
		FieldManager:        DefaultFieldManager,
		TrackingMethod:      v1alpha1.TrackingMethodAnnotation,
		ReconcileTimeout:    DefaultReconcileTimeout,
		CompareMaxAge:       DefaultCompareMaxAge,
		StatusProcessors:    DefaultStatusProcessors,
		OperationProcessors: DefaultOperationProcessors,
		Now:                 time.Now,
		Float64:             rand.Float64,
	}
}

// withDefaults fills zero fields and rejects impossible values.
func (o Options) withDefaults() (Options, error) {
	d := DefaultOptions()
	if o.Namespace == "" {
		o.Namespace = d.Namespace
	}
	if o.Resync == 0 {
		o.Resync = d.Resync
	}
	if o.Resync < 0 {
		return o, fmt.Errorf("validate options: resync %s is negative", o.Resync)
	}
	if o.Jitter == 0 {
		o.Jitter = d.Jitter
	}
	if o.Jitter < 0 || o.Jitter >= 1 {
		return o, fmt.Errorf("validate options: jitter %g is not in [0, 1)", o.Jitter)
	}
	if o.FieldManager == "" {
		o.FieldManager = d.FieldManager
	}
	if o.TrackingMethod == "" {
		o.TrackingMethod = d.TrackingMethod
	}
	if !o.TrackingMethod.Valid() {
		return o, fmt.Errorf("validate options: invalid tracking method %q (want annotation, label or annotation+label)", o.TrackingMethod)
	}
	if o.SyncTimeout < 0 {
		return o, fmt.Errorf("validate options: sync timeout %s is negative", o.SyncTimeout)
	}
	if o.ReconcileTimeout <= 0 {
		o.ReconcileTimeout = d.ReconcileTimeout
	}
	if o.CompareMaxAge <= 0 {
		o.CompareMaxAge = d.CompareMaxAge
	}
	if o.ListingMaxAge == 0 {
		o.ListingMaxAge = o.Resync / 10
	}
	if o.StatusProcessors <= 0 {
		o.StatusProcessors = d.StatusProcessors
	}
	if o.OperationProcessors <= 0 {
		o.OperationProcessors = d.OperationProcessors
	}
	if o.Now == nil {
		o.Now = d.Now
	}
	if o.Float64 == nil {
		o.Float64 = d.Float64
	}
	return o, nil
}

// requeueAfter is Resync with ±Jitter.
func (o Options) requeueAfter() time.Duration {
	f := 1 + o.Jitter*(2*o.Float64()-1)
	return time.Duration(float64(o.Resync) * f)
}
