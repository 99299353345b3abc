package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// GroupLabel labels the member Leases; its value is the group, the
// control-plane namespace the members reconcile.
const GroupLabel = "tollgate.dev/controller-shard"

// DefaultLeaseDuration is the default of Options.LeaseDuration, as
// controller-runtime's leader election's.
const DefaultLeaseDuration = 15 * time.Second

// leasePrefix starts the name of every member Lease.
const leasePrefix = "tollgate-shard-"

// Options configure a Membership.
type Options struct {
	// Namespace holds the member Leases.
	Namespace string
	// Group is the set of members that share the Applications: the
	// control-plane namespace.
	Group string
	// Identity names this member (the pod name); it must be unique in the
	// group and a valid Lease name suffix.
	Identity string
	// LeaseDuration is how long a member counts as live after the last
	// renewal another member saw; members renew every third of it.
	LeaseDuration time.Duration
	// Now returns the current time; default time.Now.
	Now func() time.Time
}

// Membership is one replica's view of the group: who is live, and so who
// owns which Application. Run keeps it current.
type Membership struct {
	c    client.Client
	opts Options

	mu sync.RWMutex
	// seen are the member Leases by name, with when their last renewal
	// was seen.
	seen    map[string]observation
	members []string
	// renewed is the time of this member's last successful renewal, in
	// unix nanoseconds (0: never).
	renewed atomic.Int64
	holding atomic.Bool
	// lease is the Lease as this member last wrote it; only Run's
	// goroutine uses it.
	lease *coordinationv1.Lease
	// changed receives a value when the live members or Holding change.
	changed chan struct{}
}

// observation is what a member knows of another member's Lease.
type observation struct {
	holder    string
	renewTime time.Time
	duration  time.Duration
	// at is when this renewal was first seen, on this member's clock.
	at              time.Time
	resourceVersion string
}

// New returns the membership of opts.Identity; c reads and writes Leases
// (uncached). Nothing runs until Run.
func New(c client.Client, opts Options) (*Membership, error) {
	switch {
	case c == nil:
		return nil, errors.New("new membership: client is nil")
	case opts.Namespace == "" || opts.Group == "" || opts.Identity == "":
		return nil, errors.New("new membership: namespace, group and identity are required")
	case opts.LeaseDuration < 0:
		return nil, fmt.Errorf("new membership: lease duration %s is negative", opts.LeaseDuration)
	}
	if opts.LeaseDuration == 0 {
		opts.LeaseDuration = DefaultLeaseDuration
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Membership{c: c, opts: opts, seen: map[string]observation{}, changed: make(chan struct{}, 1)}, nil
}

// Identity is this member's name.
func (m *Membership) Identity() string { return m.opts.Identity }

// RenewInterval is how often the Lease is renewed and the members read.
func (m *Membership) RenewInterval() time.Duration { return m.opts.LeaseDuration / 3 }

// renewDeadline is how long after its last renewal this member still
// holds its share: a third of the duration before others may count it
// gone.
func (m *Membership) renewDeadline() time.Duration { return m.opts.LeaseDuration * 2 / 3 }

// Holding reports whether this member renewed its Lease recently enough
// to own Applications and run operations.
func (m *Membership) Holding() bool {
	last := m.renewed.Load()
	return last != 0 && m.opts.Now().Sub(time.Unix(0, last)) < m.renewDeadline()
}

// Members returns the live members, sorted.
func (m *Membership) Members() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Clone(m.members)
}

// Live reports whether member is live.
func (m *Membership) Live(member string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, ok := slices.BinarySearch(m.members, member)
	return ok
}

// Owns reports whether this member owns key (an Application's
// namespace/name): it is Holding and scores highest among the live
// members.
func (m *Membership) Owns(key string) bool {
	if !m.Holding() {
		return false
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return Owner(m.members, key) == m.opts.Identity
}

// Changes receives a value after the live members or Holding changed;
// several changes may show as one.
func (m *Membership) Changes() <-chan struct{} { return m.changed }

// Run renews this member's Lease and reads the group's every
// RenewInterval until ctx ends. It returns when ctx ends; failures to
// reach the API server are logged and retried at the next tick (Holding
// turns false when they last too long). It does not delete the Lease:
// call Release once the member has stopped its work.
func (m *Membership) Run(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("shard")
	tick := time.NewTicker(m.RenewInterval())
	defer tick.Stop()
	for {
		if err := m.refresh(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "Renew shard membership")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// refresh renews the Lease, reads the members and tells of a change.
func (m *Membership) refresh(ctx context.Context) error {
	renewErr := m.renew(ctx)
	var leases coordinationv1.LeaseList
	listErr := m.c.List(ctx, &leases, client.InNamespace(m.opts.Namespace), client.MatchingLabels{GroupLabel: m.opts.Group})
	changed := false
	if listErr == nil {
		changed = m.observe(leases.Items)
		m.collect(ctx, leases.Items)
	}
	if holding := m.Holding(); m.holding.Swap(holding) != holding {
		changed = true
	}
	if changed {
		select {
		case m.changed <- struct{}{}:
		default:
		}
	}
	return errors.Join(renewErr, listErr)
}

// leaseName is the name of member's Lease.
func leaseName(member string) string { return leasePrefix + member }

// renew creates or renews this member's Lease. It updates the Lease it
// wrote last, one call; when that fails (the Lease was changed or deleted
// meanwhile), it reads the Lease again.
func (m *Membership) renew(ctx context.Context) error {
	now := m.opts.Now()
	if m.lease != nil {
		lease := m.lease.DeepCopy()
		lease.Spec = m.leaseSpec(now, *m.lease.Spec.AcquireTime)
		if err := m.c.Update(ctx, lease); err == nil {
			m.lease = lease
			m.renewed.Store(now.UnixNano())
			return nil
		}
		m.lease = nil
	}
	key := types.NamespacedName{Namespace: m.opts.Namespace, Name: leaseName(m.opts.Identity)}
	var lease coordinationv1.Lease
	err := m.c.Get(ctx, key, &lease)
	switch {
	case apierrors.IsNotFound(err):
		lease = coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{GroupLabel: m.opts.Group}},
			Spec:       m.leaseSpec(now, metav1.NewMicroTime(now)),
		}
		err = m.c.Create(ctx, &lease)
	case err == nil:
		acquired := metav1.NewMicroTime(now)
		if lease.Spec.AcquireTime != nil && ptr.Deref(lease.Spec.HolderIdentity, "") == m.opts.Identity {
			acquired = *lease.Spec.AcquireTime
		}
		lease.Spec = m.leaseSpec(now, acquired)
		err = m.c.Update(ctx, &lease)
	}
	if err != nil {
		return fmt.Errorf("renew lease %s: %w", key.Name, err)
	}
	m.lease = &lease
	m.renewed.Store(now.UnixNano())
	return nil
}

func (m *Membership) leaseSpec(now time.Time, acquired metav1.MicroTime) coordinationv1.LeaseSpec {
	return coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(m.opts.Identity),
		LeaseDurationSeconds: ptr.To(int32((m.opts.LeaseDuration + time.Second - 1) / time.Second)),
		AcquireTime:          &acquired,
		RenewTime:            ptr.To(metav1.NewMicroTime(now)),
	}
}

// observe records the group's Leases and recomputes the live members,
// reporting whether they changed. A Lease counts from when this member
// saw its renewal time change; one never seen renewed counts as renewed
// when first seen, so a member that starts waits a full duration before
// counting anyone gone. This member is live while Holding.
func (m *Membership) observe(leases []coordinationv1.Lease) bool {
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := make(map[string]observation, len(leases))
	var members []string
	for _, l := range leases {
		holder := ptr.Deref(l.Spec.HolderIdentity, "")
		if holder == "" || l.Name != leaseName(holder) {
			continue // not a member Lease
		}
		o := observation{holder: holder, duration: time.Duration(ptr.Deref(l.Spec.LeaseDurationSeconds, 0)) * time.Second,
			at: now, resourceVersion: l.ResourceVersion}
		if l.Spec.RenewTime != nil {
			o.renewTime = l.Spec.RenewTime.Time
		}
		if prev, ok := m.seen[l.Name]; ok && prev.renewTime.Equal(o.renewTime) && prev.holder == holder {
			o.at = prev.at
		}
		seen[l.Name] = o
		live := now.Sub(o.at) < o.duration
		if holder == m.opts.Identity {
			live = m.Holding()
		}
		if live {
			members = append(members, holder)
		}
	}
	slices.Sort(members)
	m.seen = seen
	if slices.Equal(members, m.members) {
		return false
	}
	m.members = members
	return true
}

// collect deletes the Leases of members gone for a further duration (pods
// of a Deployment get new names), guarded by their resourceVersion so
// that a renewal meanwhile wins.
func (m *Membership) collect(ctx context.Context, leases []coordinationv1.Lease) {
	now := m.opts.Now()
	m.mu.RLock()
	var gone []observation
	for _, l := range leases {
		if o, ok := m.seen[l.Name]; ok && o.holder != m.opts.Identity && now.Sub(o.at) > 2*o.duration {
			gone = append(gone, o)
		}
	}
	m.mu.RUnlock()
	for _, o := range gone {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: m.opts.Namespace, Name: leaseName(o.holder)}}
		err := m.c.Delete(ctx, lease, client.Preconditions{ResourceVersion: &o.resourceVersion})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			ctrl.LoggerFrom(ctx).V(1).Info("Delete the Lease of a member gone", "member", o.holder, "reason", err.Error())
		}
	}
}

// Release deletes this member's Lease, so that the others take its
// Applications at their next read instead of after the lease duration.
// Call it once this member has stopped reconciling.
func (m *Membership) Release(ctx context.Context) error {
	m.renewed.Store(0)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: m.opts.Namespace, Name: leaseName(m.opts.Identity)}}
	if err := m.c.Delete(ctx, lease); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("release lease %s: %w", lease.Name, err)
	}
	return nil
}
