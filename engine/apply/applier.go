package apply

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultFieldManager is the server-side apply field manager of tollgate.
const DefaultFieldManager = "tollgate"

// Health statuses the injected HealthFunc returns, as in Argo CD. Other
// values are treated like HealthUnknown.
const (
	HealthHealthy     = "Healthy"
	HealthProgressing = "Progressing"
	HealthDegraded    = "Degraded"
	HealthSuspended   = "Suspended"
	HealthMissing     = "Missing"
	HealthUnknown     = "Unknown"
)

// HealthFunc assesses a live object. The engine passes a wrapper around
// engine/health.Assess. Hooks report completion through it: Healthy means
// the hook succeeded, Degraded that it failed, Progressing that it runs.
type HealthFunc func(obj *unstructured.Unstructured) (status, message string, err error)

// Options configure an Applier.
type Options struct {
	// FieldManager is the server-side apply field manager; default
	// DefaultFieldManager. Keep it stable: ownership of fields follows it.
	FieldManager string
	// WaitTimeout bounds the wait for one wave to become healthy, for a
	// hook's predecessor to be deleted and for a new kind to be served;
	// zero means no bound but ctx's (Argo CD has none: an operation ends
	// at --sync-timeout or when terminated).
	WaitTimeout time.Duration
	// PollInterval is the pause between health checks; default 2s.
	PollInterval time.Duration
	// Tracking is how objects are marked as an Application's and
	// recognised as its own (v1alpha1.SetTracking, v1alpha1.OwnedBy); default
	// annotation.
	Tracking v1alpha1.TrackingMethod
	// Health is required by ApplyWave and Run.
	Health HealthFunc
	// Discovery lists the resource types for ListOwned when no types are
	// given. NewForConfig sets it; with New it is optional.
	Discovery discovery.DiscoveryInterface
	// DiscoveryTTL is how long discovered resource types are reused;
	// default 5m.
	DiscoveryTTL time.Duration
	// ListThreshold is the number of objects of one kind in one namespace
	// from which live objects are read with one LIST instead of one GET
	// each; default 4.
	ListThreshold int
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Scope is the part of the cluster ListOwned lists (the whole cluster
	// by default).
	Scope Scope
}

// DefaultOptions returns the defaults, without Health.
func DefaultOptions() Options {
	return Options{
		FieldManager:  DefaultFieldManager,
		PollInterval:  2 * time.Second,
		DiscoveryTTL:  5 * time.Minute,
		ListThreshold: 4,
		Now:           time.Now,
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.FieldManager == "" {
		o.FieldManager = d.FieldManager
	}
	if o.Tracking == "" {
		o.Tracking = v1alpha1.TrackingMethodAnnotation
	}
	if o.PollInterval <= 0 {
		o.PollInterval = d.PollInterval
	}
	if o.DiscoveryTTL <= 0 {
		o.DiscoveryTTL = d.DiscoveryTTL
	}
	if o.ListThreshold <= 0 {
		o.ListThreshold = d.ListThreshold
	}
	if o.Now == nil {
		o.Now = d.Now
	}
	return o
}

// Applier applies, diffs and prunes objects through one client. It is safe
// for concurrent use.
type Applier struct {
	client client.Client
	opts   Options

	mu           sync.Mutex
	discovery    discovery.CachedDiscoveryInterface
	discoveredAt time.Time
	listable     []schema.GroupVersionKind
}

// New returns an Applier using c. Options left zero take their defaults.
func New(c client.Client, opts Options) (*Applier, error) {
	if c == nil {
		return nil, errors.New("new applier: client is nil")
	}
	opts = opts.withDefaults()
	a := &Applier{client: c, opts: opts}
	if opts.Discovery != nil {
		if cached, ok := opts.Discovery.(discovery.CachedDiscoveryInterface); ok {
			a.discovery = cached
		} else {
			a.discovery = memory.NewMemCacheClient(opts.Discovery)
		}
	}
	return a, nil
}

// NewForConfig builds a client and a discovery client from cfg and returns
// an Applier using them. Wrap cfg with a CallCounter first to count calls.
func NewForConfig(cfg *rest.Config, opts Options) (*Applier, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("new applier: create client: %w", err)
	}
	if opts.Discovery == nil {
		d, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("new applier: create discovery client: %w", err)
		}
		opts.Discovery = d
	}
	return New(c, opts)
}

// Client returns the client the Applier uses.
func (a *Applier) Client() client.Client { return a.client }

// Ref names one object.
type Ref struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// RefOf returns the Ref of obj.
func RefOf(obj *unstructured.Unstructured) Ref {
	gvk := obj.GroupVersionKind()
	return Ref{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// GroupVersionKind returns the GVK of r.
func (r Ref) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// String formats r as `Kind.group namespace/name`.
func (r Ref) String() string {
	kind := r.Kind
	if r.Group != "" {
		kind += "." + r.Group
	}
	if r.Namespace != "" {
		return kind + " " + r.Namespace + "/" + r.Name
	}
	return kind + " " + r.Name
}

// key drops the version: the same object is served under several versions.
func (r Ref) key() Ref {
	r.Version = ""
	return r
}

// SyncStatus is the result of comparing one object.
type SyncStatus string

// Sync statuses.
const (
	StatusSynced    SyncStatus = "Synced"
	StatusOutOfSync SyncStatus = "OutOfSync"
)

// ResultCode is what happened to one object in a sync.
type ResultCode string

// Result codes, as in Argo CD.
const (
	ResultSynced       ResultCode = "Synced"
	ResultSyncFailed   ResultCode = "SyncFailed"
	ResultPruned       ResultCode = "Pruned"
	ResultPruneSkipped ResultCode = "PruneSkipped"
)

// HookPhase is the state of a hook.
type HookPhase string

// Hook phases, as Argo CD's operation phases.
const (
	HookRunning   HookPhase = "Running"
	HookSucceeded HookPhase = "Succeeded"
	HookFailed    HookPhase = "Failed"
)
