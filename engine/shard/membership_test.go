package shard

import (
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clock is a settable time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func lease(member string, renewed time.Time) coordinationv1.Lease {
	return coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: leaseName(member), ResourceVersion: "1"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(member), LeaseDurationSeconds: ptr.To(int32(15)),
			RenewTime: ptr.To(metav1.NewMicroTime(renewed)),
		},
	}
}

// TestObserveCountsOnItsOwnClock: a member counts others live from when it
// saw their renewal change, whatever their clocks say, and gone a lease
// duration after the last change it saw.
func TestObserveCountsOnItsOwnClock(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	m, err := New(fakeClient{}, Options{Namespace: "ns", Group: "argocd", Identity: "a", LeaseDuration: 15 * time.Second, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	m.renewed.Store(c.t.UnixNano())
	// b's clock is an hour behind: its renewal time is never compared
	// with ours.
	skewed := c.t.Add(-time.Hour)
	if !m.observe([]coordinationv1.Lease{lease("a", c.t), lease("b", skewed)}) {
		t.Fatal("first observation: no change reported")
	}
	if got := m.Members(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("members = %v, want [a b]", got)
	}
	// 10s later, b renewed (its clock moved too), a renewed.
	c.t = c.t.Add(10 * time.Second)
	m.renewed.Store(c.t.UnixNano())
	m.observe([]coordinationv1.Lease{lease("a", c.t), lease("b", skewed.Add(10*time.Second))})
	// 14s after that, b did not renew again: still live.
	c.t = c.t.Add(14 * time.Second)
	m.renewed.Store(c.t.UnixNano())
	if m.observe([]coordinationv1.Lease{lease("a", c.t), lease("b", skewed.Add(10*time.Second))}) {
		t.Fatal("b counted gone before its lease duration passed since its last renewal was seen")
	}
	// 2s more: 16s since b's last renewal was seen.
	c.t = c.t.Add(2 * time.Second)
	m.renewed.Store(c.t.UnixNano())
	if !m.observe([]coordinationv1.Lease{lease("a", c.t), lease("b", skewed.Add(10*time.Second))}) {
		t.Fatal("b not counted gone a lease duration after its last renewal was seen")
	}
	if got := m.Members(); !slices.Equal(got, []string{"a"}) || !m.Owns("argocd/anything") {
		t.Fatalf("members = %v, owns = %v; want [a], true", got, m.Owns("argocd/anything"))
	}
}

// TestHoldingEndsBeforeOthersCountItGone: a member whose renewals fail
// stops owning anything two thirds of the lease duration after its last
// renewal, a third before another member may take its Applications.
func TestHoldingEndsBeforeOthersCountItGone(t *testing.T) {
	c := &clock{t: time.Unix(2_000_000, 0)}
	m, err := New(fakeClient{}, Options{Namespace: "ns", Group: "argocd", Identity: "a", LeaseDuration: 15 * time.Second, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	if m.Holding() || m.Owns("argocd/x") {
		t.Fatal("holding before the first renewal")
	}
	m.renewed.Store(c.t.UnixNano())
	m.observe([]coordinationv1.Lease{lease("a", c.t)})
	if !m.Owns("argocd/x") {
		t.Fatal("the only member does not own an Application")
	}
	c.t = c.t.Add(9 * time.Second)
	if !m.Holding() {
		t.Fatal("not holding 9s after the last renewal (deadline 10s)")
	}
	c.t = c.t.Add(time.Second)
	if m.Holding() || m.Owns("argocd/x") {
		t.Fatal("still holding 10s after the last renewal")
	}
}

// fakeClient stands for the API server where a test reaches none: New
// only checks that a client is given, and observe never calls it.
type fakeClient struct{ client.Client }
